package fetch

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hard link is copied from the entry it names, never through a symlink:
// the symlink x/u -> ".." stays inside lexically, but x/u/../ leads out,
// and a hard link to s must not read the file outside the package.
func TestHardLinkNeverFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside the package"), 0o644); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "m.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for _, h := range []*tar.Header{
		{Name: "main.tf", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1},
		{Name: "x/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "x/u", Typeflag: tar.TypeSymlink, Linkname: ".."},
		{Name: "s", Typeflag: tar.TypeSymlink, Linkname: "x/u/../secret.txt"},
		{Name: "h.tf", Typeflag: tar.TypeLink, Linkname: "s"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "pkg")
	err = Extract(context.Background(), archive, Tar, dst, Limits{})
	if b, rerr := os.ReadFile(filepath.Join(dst, "h.tf")); rerr == nil && strings.Contains(string(b), "outside") {
		t.Fatalf("the hard link h.tf holds a file from outside the package: %q", b)
	}
	if err == nil || !strings.Contains(err.Error(), `hard link "h.tf"`) {
		t.Fatalf("want the hard link to a symlink refused, naming it; got %v", err)
	}
}

// A hard link to a file of the archive is that file's copy.
func TestHardLinkToAFile(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "m.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	tw.WriteHeader(&tar.Header{Name: "main.tf", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5})
	if _, err := tw.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	tw.WriteHeader(&tar.Header{Name: "copy.tf", Typeflag: tar.TypeLink, Linkname: "main.tf"})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "pkg")
	if err := Extract(context.Background(), archive, Tar, dst, Limits{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "copy.tf")); err != nil || string(b) != "hello" {
		t.Fatalf("copy.tf = %q, %v; want main.tf's bytes", b, err)
	}
}
