package fs_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

// A staging file written in pieces that straddle the points where its
// writeback is started (every few MiB, while the bytes arrive) lands
// byte for byte, listed under the hashes of those bytes.
func TestLargeArchiveLandsWhole(t *testing.T) {
	body := make([]byte, 9<<20+123)
	rand.NewChaCha8([32]byte{2}).Read(body)
	zip := backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-alpha_v1.0.0", Body: body})
	dir := t.TempDir()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	ctx := context.Background()
	st, err := m.Stage(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	for rest := zip; len(rest) > 0; {
		n := min(len(rest), 100_003)
		if _, err := st.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, sums, false); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "example.com/acme/alpha", pkg.Filename()))
	if err != nil || !bytes.Equal(got, zip) {
		t.Fatalf("landed %d of %d bytes (%v), or other bytes", len(got), len(zip), err)
	}
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	as, err := m.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("listing: %v %v", as, err)
	}
	want, _ := hashing.ZipZH(filepath.Join(dir, "example.com/acme/alpha", pkg.Filename()))
	if len(as[0].Evidence) == 0 || !hashing.Verify(sums, as[0].Evidence...).Verified() || sums.ZH != want {
		t.Fatalf("listed %+v, want the landed bytes' %s", as[0].Evidence, want)
	}
}
