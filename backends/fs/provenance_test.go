package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

// TestProvenanceSidecar: a version's provenance is kept in
// HOST/NAMESPACE/TYPE/.tfmirror-provenance/VERSION.json, read back as
// written, not taken for a package or junk by the mirror's own scanner,
// and deleted by Remove with the version's last archive.
func TestProvenanceSidecar(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := mustOpen(t, dir)
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64"})
	for _, s := range seeds {
		put(t, m, s.Package, s.Zip)
	}
	key := backendtest.NewSigner(t, "acme")
	p := seeds[0].Package.Provider
	for _, vs := range backendtest.Versions(seeds) {
		if err := m.WriteProvenance(ctx, p, vs[0].Package.Version, key.Provenance(t, vs)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "example.com", "acme", "alpha", ".tfmirror-provenance", "1.0.0.json")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no sidecar where the layout says: %v", err)
	}
	v100 := seeds[0].Package.Version
	pr, err := mustOpen(t, dir).Provenance(ctx, p, v100)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := pr.Check(provenance.Options{}); err != nil || s.Fingerprint != key.Fingerprint() {
		t.Fatalf("read back: signer %+v, %v", s, err)
	}
	fresh := mustOpen(t, dir)
	if as := listed(t, fresh, p); len(as) != 4 {
		t.Fatalf("listed %d archives, want 4: %v", len(as), as)
	}
	if w := fresh.Warnings(); len(w) > 0 {
		t.Fatalf("the sidecar drew warnings: %v", w)
	}

	// A document moved beside another version is not that version's.
	if err := os.Rename(path, filepath.Join(filepath.Dir(path), "1.1.0.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Provenance(ctx, p, seeds[2].Package.Version); err == nil || !strings.Contains(err.Error(), "it is about example.com/acme/alpha 1.0.0, not example.com/acme/alpha 1.1.0") {
		t.Fatalf("a sidecar for another version: %v", err)
	}
	if _, err := m.Provenance(ctx, p, v100); !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("no sidecar: %v, want ErrNotFound", err)
	}

	// Removing 1.1.0 whole deletes its sidecar (and the emptied directory).
	rm := pick(listed(t, m, p), func(a backends.Archive) bool { return a.Version.String() == "1.1.0" })
	if _, err := m.Remove(ctx, p, rm); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the sidecar directory outlived every version it described: %v", err)
	}
}
