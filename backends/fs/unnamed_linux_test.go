package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

// An unnamed staging file takes its name by linking the open file itself
// where the process may (root here) and through /proc/self/fd where it may
// not; either way a taken name is refused with os.ErrExist, and a missing
// directory does not make the process give up the direct link.
func TestLinkUnnamedEitherWay(t *testing.T) {
	defer emptyPathLinks.Store(emptyPathLinks.Load())
	for _, state := range []int32{linkUnknown, linkRefused} {
		emptyPathLinks.Store(state)
		dir := t.TempDir()
		f, err := createUnnamed(dir)
		if err != nil || f == nil {
			t.Skipf("no unnamed files in %s: %v", dir, err)
		}
		defer f.Close()
		if _, err := f.WriteString("archive bytes"); err != nil {
			t.Fatal(err)
		}
		if err := linkUnnamed(f, filepath.Join(dir, "gone", "a.zip")); !errors.Is(err, iofs.ErrNotExist) {
			t.Fatalf("state %d: a link into a missing directory: %v", state, err)
		}
		if got := emptyPathLinks.Load(); got != state {
			t.Fatalf("a missing directory changed the state from %d to %d", state, got)
		}
		path := filepath.Join(dir, "a.zip")
		if err := linkUnnamed(f, path); err != nil {
			t.Fatalf("state %d: %v", state, err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "archive bytes" {
			t.Fatalf("state %d: the linked file holds %q, %v", state, b, err)
		}
		if err := linkUnnamed(f, path); !errors.Is(err, iofs.ErrExist) {
			t.Fatalf("state %d: a link over a taken name: %v", state, err)
		}
	}
}

// An unnamed staging file is created 0644 and chmodded only where the
// umask takes a bit of that away: whatever the umask, archives and index
// documents land 0644.
func TestUnnamedFilesLand0644WhateverTheUmask(t *testing.T) {
	old := unix.Umask(0o022)
	defer func() {
		unix.Umask(old)
		umask = gosync.OnceValue(readUmask)
	}()
	for _, mask := range []int{0o000, 0o022, 0o027, 0o077} {
		unix.Umask(mask)
		umask = gosync.OnceValue(readUmask)
		if got := umask(); got != uint32(mask) {
			t.Fatalf("umask read as %#o, want %#o", got, mask)
		}
		dir := t.TempDir()
		m, err := Open(dir, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
		st, err := m.Stage(context.Background(), pkg)
		if err != nil {
			t.Fatal(err)
		}
		if !st.(*staged).unnamed {
			t.Skip("this filesystem cannot make unnamed files (O_TMPFILE)")
		}
		if _, err := st.Write(backendtest.ProviderZip(t, pkg, "")); err != nil {
			t.Fatal(err)
		}
		sums, err := hashing.HashPath(st.Path(), hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(context.Background(), sums, false); err != nil {
			t.Fatal(err)
		}
		if err := m.Flush(context.Background(), pkg.Provider); err != nil {
			t.Fatal(err)
		}
		pdir := filepath.Join(dir, "example.com/acme/alpha")
		for _, name := range []string{pkg.Filename(), "1.0.0.json", "index.json"} {
			fi, err := os.Stat(filepath.Join(pdir, name))
			if err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("umask %#o: %s: %v, %v; want mode 0644", mask, name, fi, err)
			}
		}
	}
}
