package lockfile

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Walk follows links to directories, enters each real directory once (a
// loop back to an ancestor ends, a second link to a directory adds
// nothing), visits links to files and dangling links as files, and skips
// what skip names.
func TestWalkFollowsDirectoryLinksOnce(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	for _, d := range []string{"root/a", "root/.terraform", "shared/x"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"root/a/f", "root/.terraform/f", "shared/x/f"} {
		if err := os.WriteFile(filepath.Join(top, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, dest := range map[string]string{
		"root/b":        "../shared",
		"root/c":        "../shared",
		"shared/x/up":   "../../root",
		"root/a/g":      "f",
		"root/a/gone":   "nowhere",
		"root/a/itself": "itself",
	} {
		if err := os.Symlink(dest, filepath.Join(top, link)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := Walk(context.Background(), root, func(name string) bool { return name == ".terraform" }, func(p string, _ iofs.DirEntry) error {
		rel, _ := filepath.Rel(root, p)
		got = append(got, rel)
		return nil
	})
	want := "a/f a/g a/gone a/itself b/x/f"
	if err != nil || strings.Join(got, " ") != want {
		t.Fatalf("Walk: %q, %v; want %q", strings.Join(got, " "), err, want)
	}
}

// A loop (loop -> ..) in a tree the system can name is entered once.
func TestWalkLoopAtDepth(t *testing.T) {
	root := deepTree(t, 200)
	n := 0
	err := Walk(context.Background(), root, nil, func(string, iofs.DirEntry) error { n++; return nil })
	if err != nil || n != 0 {
		t.Fatalf("Walk: %d files, %v; want none, no error", n, err)
	}
}

// An interrupt ends the walk with ctx's error.
func TestWalkStopsOnCancel(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, DefaultName), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Walk(ctx, root, nil, func(string, iofs.DirEntry) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("Walk cancelled after 3 files: %d files, %v; want 3 and context.Canceled", n, err)
	}
}
