//go:build unix

package fs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// An archive is read through its file descriptor: to its end, in pieces of
// any size, and closed once; a closed reader says so.
func TestOpenReaderReadsToTheEndAndClosesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.zip")
	want := bytes.Repeat([]byte("tfmirror"), 1000)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := openReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 333)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the file's %d", len(got), len(want))
	}
	if n, err := r.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("a read past the end: %d, %v; want 0, EOF", n, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("a second Close: %v, want os.ErrClosed", err)
	}
	if _, err := r.Read(buf); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("a Read after Close: %v, want os.ErrClosed", err)
	}
	if _, err := openReader(filepath.Join(t.TempDir(), "missing.zip")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening a missing file: %v, want os.ErrNotExist", err)
	}
}
