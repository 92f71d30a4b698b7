package lockfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends/lockfile"
)

// FuzzParseLockFile checks that no input makes the reader panic, and that
// whatever it accepts it writes back in a form it accepts again unchanged
// (the writer's output is a fixed point).
func FuzzParseLockFile(f *testing.F) {
	golden, _ := filepath.Glob("testdata/golden/*.hcl")
	for _, p := range golden {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	for _, s := range []string{
		"",
		"provider \"example.com/a/b\" {\n  version = \"1.0.0\"\n}\n",
		"provider \"example.com/a/b\" {\n  version     = \"1.0.0-beta.1+x\"\n  constraints = \"~> 1.0, != 1.0.3\"\n  hashes = [\"h1:x=\", \"zh:00\"]\n}\n",
		"module \"m\" {\n}\n",
		"provider \"bücher.example/a/b\" {\n  version = \"1.0.0\"\n  hashes = [\n    \"x:\\u00e9\\n\",\n  ]\n}\n",
		"provider \"example.com/a/b\" { version = \"${x}\" }",
		"# This file is maintained automatically by \"tofu init\".\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		lf, err := lockfile.Parse(src, "fuzz.hcl")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		out := lf.Bytes()
		again, err := lockfile.Parse(out, "rewritten.hcl")
		if err != nil {
			t.Fatalf("writer output rejected: %v\n%s", err, out)
		}
		if out2 := again.Bytes(); !bytes.Equal(out, out2) {
			t.Fatalf("writer output not stable:\n%s\n---\n%s", out, out2)
		}
		if len(again.Providers()) != len(lf.Providers()) {
			t.Fatalf("providers lost: %d -> %d", len(lf.Providers()), len(again.Providers()))
		}
	})
}
