package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// A damaged or altered bundle is a problem found, not a mistake in the
// command line: verify, ls and sync from it exit 1 (as import does),
// saying what is wrong; a bundle that is not there is still exit 2.
func TestDamagedBundleIsAProblemForEveryCommand(t *testing.T) {
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tar")
	if r := run(t, nil, "export", src, good); r.code != 0 {
		t.Fatalf("export: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	names, data := tarEntries(t, good)
	raw, _ := os.ReadFile(good)
	truncated := filepath.Join(dir, "truncated.tar")
	os.WriteFile(truncated, raw[:len(raw)*2/3], 0o644)
	edited := filepath.Join(dir, "edited.tar")
	d := map[string][]byte{}
	for k, v := range data {
		d[k] = v
	}
	d[".tfmirror-bundle.json"] = bytes.Replace(data[".tfmirror-bundle.json"], []byte(`"size": `), []byte(`"size":  `), 1)
	writeTar(t, edited, names, d)
	tampered := filepath.Join(dir, "tampered.tar")
	zip := "example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip"
	d = map[string][]byte{}
	for k, v := range data {
		d[k] = append([]byte(nil), v...)
	}
	d[zip][len(d[zip])/2] ^= 1
	writeTar(t, tampered, names, d)

	if r := run(t, nil, "verify", good); r.code != 0 {
		t.Fatalf("verify of the bundle as exported: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ bundle, want string }{
		{truncated, "truncated"},
		{edited, "the manifest's SHA-256"},
		{tampered, zip},
	} {
		for _, args := range [][]string{
			{"verify", c.bundle},
			{"ls", c.bundle},
			{"sync", c.bundle, filepath.Join(t.TempDir(), "mirror")},
		} {
			if args[0] == "ls" && c.bundle == tampered {
				continue // ls reads no archive
			}
			r := run(t, nil, args...)
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("%s %s: exit %d, want 1 saying %q\n%s%s", args[0], filepath.Base(c.bundle), r.code, c.want, r.stdout, r.stderr)
			}
		}
	}
	if r := run(t, nil, "verify", filepath.Join(dir, "none.tar")); r.code != 2 {
		t.Errorf("verify of a bundle that is not there: exit %d, want 2\n%s", r.code, r.stderr)
	}
}
