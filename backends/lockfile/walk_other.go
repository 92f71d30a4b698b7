//go:build !unix

package lockfile

import (
	iofs "io/fs"
	"os"
	"syscall"
)

// dirID is what tells the directory at path from the others: its real
// path, where the system gives no inode.
func dirID(path string, _ iofs.FileInfo) any { return realPath(path) }

// openDir opens the directory at path (name in parent), following a link.
func openDir(_ *os.File, _, path string) (*os.File, error) {
	return openRoot(path)
}

// openRoot opens the directory at path.
func openRoot(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return nil, &iofs.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	return f, nil
}
