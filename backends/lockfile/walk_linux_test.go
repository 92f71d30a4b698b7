package lockfile

import (
	"context"
	"fmt"
	iofs "io/fs"
	"os"
	"syscall"
	"testing"
)

// deepTree makes root/d/d/.../d, depth directories deep, with a link back
// to its parent (loop -> ..) at the bottom. It goes through open
// directories (openat), as no path that long can be named at once.
func deepTree(t *testing.T, depth int) string {
	t.Helper()
	root := t.TempDir()
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	for range depth {
		if err == nil {
			err = syscall.Mkdirat(fd, "d", 0o755)
		}
		if err == nil {
			next, err2 := syscall.Openat(fd, "d", syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			if err := syscall.Close(fd); err != nil {
				t.Fatal(err)
			}
			fd, err = next, err2
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	// /proc names the open directory in a few bytes.
	if err := os.Symlink("..", fmt.Sprintf("/proc/self/fd/%d/loop", fd)); err != nil {
		t.Fatal(err)
	}
	return root // os.RemoveAll, which t.TempDir's cleanup runs, works through open directories too
}

// A tree 10,000 directories deep with a loop at the bottom is walked to
// its end, and the loop adds nothing: the walk opens each directory
// through its parent, so neither the time per step nor the path it asks
// the system to resolve grows with the depth.
func TestWalkDeepTree(t *testing.T) {
	root := deepTree(t, 10000)
	visited := 0
	err := Walk(context.Background(), root, nil, func(string, iofs.DirEntry) error {
		visited++
		return nil
	})
	if err != nil || visited != 0 {
		t.Fatalf("Walk of a tree 10,000 deep: %d files, %v; want none, no error", visited, err)
	}
}
