//go:build !unix

package fs

import (
	"os"
	"path/filepath"
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
