//go:build !unix

package fs

import (
	"io"
	"os"
	"path/filepath"

	"github.com/tfmirror/tfmirror/hashing/regular"
)

// listDir reads dir's entries, sorted by name, and gives the size of a
// file in it (lstat) by its name. done releases what it holds.
func listDir(dir string) (entries []os.DirEntry, size func(name string) (int64, error), done func(), err error) {
	entries, err = os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	size = func(name string) (int64, error) {
		info, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		return info.Size(), nil
	}
	return entries, size, func() {}, nil
}

// readFileInto reads the file at path into *buf, when buf is not nil,
// growing it as needed: a scan reads thousands of small documents, none of
// which its parse keeps. Without buf it is regular.ReadFile.
func readFileInto(path string, buf *[]byte) ([]byte, error) {
	if buf == nil {
		return regular.ReadFile(path, 0)
	}
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*buf = b
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// openReader opens name to read it.
func openReader(name string) (io.ReadCloser, error) { return regular.Open(name) }
