package fs

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"testing"
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
