package push_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/push"
)

// TestConformance runs the case of every capability a set of release
// zips has (backendtest.Capabilities) against zips in a temp dir, as push
// reads them.
func TestConformance(t *testing.T) {
	backendtest.Conformance(t, backendtest.Place{Seeded: func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		dir := t.TempDir()
		var files []push.ZipFile
		for _, s := range seeds {
			p := filepath.Join(dir, s.Package.Provider.Type+"-"+s.Package.Filename())
			if err := os.WriteFile(p, s.Zip, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, push.ZipFile{Path: p, Package: s.Package})
		}
		z, err := push.NewZips(context.Background(), files, nil)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}})
}
