package fs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
)

// Tiny archives committed by many writers at once (made durable in groups
// where the filesystem allows) all land byte for byte, and one provider's
// index documents, more than a batch of them, are all written and list
// every archive.
func TestManySmallArchivesLandTogether(t *testing.T) {
	dir := t.TempDir()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const versions, platforms = 300, 2
	var pkgs []backends.Package
	for v := range versions {
		for _, plat := range []string{"linux_amd64", "darwin_arm64"}[:platforms] {
			pkgs = append(pkgs, backendtest.Pkg(t, "example.com/acme/tiny", fmt.Sprintf("1.%d.0", v), plat))
		}
	}
	zips := make([][]byte, len(pkgs))
	work := make(chan int)
	var wg gosync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range work {
				if err := backendtest.Commit(ctx, t, m, pkgs[i], zips[i], false); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i, pkg := range pkgs {
		zips[i] = backendtest.ProviderZip(t, pkg, "tiny")
		work <- i
	}
	close(work)
	wg.Wait()
	if err := m.Flush(ctx, pkgs[0].Provider); err != nil {
		t.Fatal(err)
	}
	pdir := filepath.Join(dir, "example.com/acme/tiny")
	for i, pkg := range pkgs {
		if got, err := os.ReadFile(filepath.Join(pdir, pkg.Filename())); err != nil || !bytes.Equal(got, zips[i]) {
			t.Fatalf("%s: landed other bytes (%v)", pkg, err)
		}
	}
	index, err := os.ReadFile(filepath.Join(pdir, mirrordoc.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(index, []byte(`.0": {}`)); n != versions {
		t.Fatalf("index.json lists %d versions, want %d", n, versions)
	}
	for v := range versions {
		as, err := m.Archives(ctx, pkgs[0].Provider, pkgs[2*v].Version)
		if err != nil || len(as) != platforms {
			t.Fatalf("version 1.%d.0 lists %d archives (%v), want %d", v, len(as), err, platforms)
		}
		for _, a := range as {
			if len(a.Evidence) == 0 {
				t.Fatalf("%s: listed with no hashes", a.Package)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(pdir, ".*.tfmirror-[nt][em][wp]-*"))
	if len(left) != 0 {
		t.Fatalf("staging files left: %v", left)
	}
}
