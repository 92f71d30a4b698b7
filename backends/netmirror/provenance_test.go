package netmirror_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
)

// TestProvenanceSidecarNotServed: serve answers the network mirror
// protocol's paths only; a directory's provenance sidecar is neither a
// version nor an archive there, and cannot be fetched.
func TestProvenanceSidecarNotServed(t *testing.T) {
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, v := seeds[0].Package.Provider, seeds[0].Package.Version
	if err := m.WriteProvenance(context.Background(), p, v, backendtest.NewSigner(t, "acme").Provenance(t, seeds)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "example.com", "acme", "alpha", ".tfmirror-provenance", "1.0.0.json")); err != nil {
		t.Fatal(err)
	}
	srv, _, _ := serveDir(t, dir)
	if resp, body := get(t, srv, "/example.com/acme/alpha/index.json"); resp.StatusCode != 200 || strings.Contains(body, "provenance") || !strings.Contains(body, `"1.0.0"`) {
		t.Fatalf("index.json: %s %s", resp.Status, body)
	}
	for _, path := range []string{
		"/example.com/acme/alpha/.tfmirror-provenance/1.0.0.json",
		"/example.com/acme/alpha/.tfmirror-provenance",
		"/example.com/acme/alpha/.tfmirror-provenance.json",
	} {
		if resp, body := get(t, srv, path); resp.StatusCode != 404 {
			t.Errorf("GET %s: %s %s, want 404", path, resp.Status, body)
		}
	}
}
