package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends/atomicfile"
)

// TestWriteReplacesAndLeavesNoStaging: Write puts the new content in place
// with the mode asked, and nothing else is left in the directory.
func TestWriteReplacesAndLeavesNoStaging(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("new"), 0o640); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, "new", 0o640)
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("directory holds %d entries after the write, want 1 (no staging file left)", len(es))
	}
}

// TestReplaceFollowsLinkAndKeepsMode: Replace writes the file a link
// names, the link stays a link, and the replaced file keeps its mode.
func TestReplaceFollowsLinkAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real", "lock.hcl")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "lock.hcl")
	if err := os.Symlink(filepath.Join("real", "lock.hcl"), link); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	if err := atomicfile.Replace(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v)", link, err)
	}
	checkFile(t, target, "new", 0o600)
}

// TestReplaceRefusesDirectory: a directory in the way is named, not
// replaced.
func TestReplaceRefusesDirectory(t *testing.T) {
	path := t.TempDir()
	if err := atomicfile.Replace(path, []byte("x"), 0o644); err == nil {
		t.Fatal("Replace over a directory succeeded")
	}
}

func checkFile(t *testing.T, path, want string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Fatalf("%s holds %q (%v), want %q", path, b, err, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
		t.Errorf("%s has mode %v (%v), want %v", path, fi.Mode().Perm(), err, mode)
	}
}
