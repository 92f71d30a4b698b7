package modulestest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
)

// Net is the module the module places' tests put, list and fetch:
// registry.example.com/acme/net/aws.
var Net = modules.Module{Host: "registry.example.com", Namespace: "acme", Name: "net", System: "aws"}

// Build packs files (name -> body) as the package of m at ver, the module
// in subdir, as a pull-through or sync builds one; its zip is removed
// when the test ends.
func Build(t testing.TB, m modules.Module, ver string, files map[string]string, subdir string) *modules.Package {
	t.Helper()
	dir := t.TempDir()
	for n, b := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := modules.ParseVersion(ver)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := fetch.New(fetch.Options{TempDir: t.TempDir()}).Build(context.Background(), m, v, modules.Location{Source: "file://" + dir, Subdir: subdir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pkg.Remove() }) // in t.TempDir(), removed anyway
	return pkg
}
