package hashing_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

// Extract never writes outside its directory, whatever the zip names.
func TestExtractRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "/abs/evil", "a/../../evil"} {
		z := backendtest.Zip(t, backendtest.Entry{Name: name, Body: []byte("x")})
		p := filepath.Join(t.TempDir(), "z.zip")
		os.WriteFile(p, z, 0o644)
		dst := filepath.Join(t.TempDir(), "out")
		os.MkdirAll(dst, 0o755)
		err := hashing.Extract(p, dst, hashing.Options{})
		if err == nil || !strings.Contains(err.Error(), "refusing to extract outside") {
			t.Errorf("%s: err = %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "evil")); err == nil {
			t.Errorf("%s: escaped", name)
		}
	}
}
