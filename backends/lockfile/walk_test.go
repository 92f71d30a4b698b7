package lockfile

import (
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
	err := Walk(root, func(name string) bool { return name == ".terraform" }, func(p string, _ iofs.DirEntry) error {
		rel, _ := filepath.Rel(root, p)
		got = append(got, rel)
		return nil
	})
	want := "a/f a/g a/gone a/itself b/x/f"
	if err != nil || strings.Join(got, " ") != want {
		t.Fatalf("Walk: %q, %v; want %q", strings.Join(got, " "), err, want)
	}
}
