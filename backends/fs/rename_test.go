package fs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Both ways of committing without replacing refuse an existing name and
// leave both files as they were, for files and directories; the fallback
// is what systems without renameat2(RENAME_NOREPLACE) use.
func TestRenameNoReplace(t *testing.T) {
	for name, rename := range map[string]func(string, string) error{
		"renameNoReplace": renameNoReplace,
		"fallback":        renameNoReplaceFallback,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, ".staged"), filepath.Join(dir, "target")
			if err := os.WriteFile(src, []byte("incoming"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, []byte("landed"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := rename(src, dst); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("onto an existing file: %v, want ErrExist", err)
			}
			if b, _ := os.ReadFile(dst); string(b) != "landed" {
				t.Fatalf("the existing file was replaced: %q", b)
			}
			if b, _ := os.ReadFile(src); string(b) != "incoming" {
				t.Fatalf("the staged file is gone: %q", b)
			}
			os.Remove(dst)
			if err := rename(src, dst); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(src); !os.IsNotExist(err) {
				t.Fatalf("the staging name is left: %v", err)
			}
			if b, _ := os.ReadFile(dst); string(b) != "incoming" {
				t.Fatalf("target holds %q", b)
			}

			srcDir, dstDir := filepath.Join(dir, ".staged-dir"), filepath.Join(dir, "linux_amd64")
			if err := os.MkdirAll(filepath.Join(srcDir, "a"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dstDir, 0o755); err != nil {
				t.Fatal(err)
			} // empty: a plain rename would replace it
			if err := rename(srcDir, dstDir); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("onto an existing directory: %v, want ErrExist", err)
			}
			os.Remove(dstDir)
			if err := rename(srcDir, dstDir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dstDir, "a")); err != nil {
				t.Fatal(err)
			}
		})
	}
}
