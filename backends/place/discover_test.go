package place

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// TestParseBySyntaxDiscoverByDisk: Parse classifies an argument by its
// syntax alone (a release directory is a path, a directory named *.tar a
// bundle); Discover, as opening does, looks at what is there.
func TestParseBySyntaxDiscoverByDisk(t *testing.T) {
	dir := t.TempDir()
	dist := filepath.Join(dir, "dist")
	backendtest.NewSeededSigner(t, "acme releases", 7).ReleaseDir(t, dist, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	tarDir := filepath.Join(dir, "mirror.tar")
	if err := os.Mkdir(tarDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		arg           string
		parsed, found Kind
	}{
		{dist, FS, Release},
		{"file://" + dist, FS, Release},
		{tarDir, Bundle, FS},
		{filepath.Join(dir, "missing.tar"), Bundle, Bundle},
		{filepath.Join(dir, "missing"), FS, FS},
	}
	for _, c := range cases {
		s, err := Parse(c.arg)
		if err != nil || s.Kind != c.parsed {
			t.Errorf("Parse(%q) = %v, %v; want kind %v", c.arg, s.Kind, err, c.parsed)
		}
		s, err = Discover(context.Background(), c.arg)
		if err != nil || s.Kind != c.found {
			t.Errorf("Discover(%q) = %v, %v; want kind %v", c.arg, s.Kind, err, c.found)
		}
	}
}
