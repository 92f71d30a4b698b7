//go:build unix

package lockfile

import (
	iofs "io/fs"
	"os"
	"syscall"
)

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// dirID is what tells the directory at path (fi, its stat) from the
// others: its device and inode.
func dirID(path string, fi iofs.FileInfo) any {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)}
	}
	return realPath(path)
}

// openDir opens the directory name in the open directory parent (path is
// the two joined, for the handle's name), following a link: openat, so
// the system resolves one name, not the whole path.
func openDir(parent *os.File, name, path string) (*os.File, error) {
	rc, err := parent.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, openErr := -1, error(nil)
	err = rc.Control(func(pfd uintptr) {
		for {
			fd, openErr = syscall.Openat(int(pfd), name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
			if openErr != syscall.EINTR {
				return
			}
		}
	})
	if err == nil {
		err = openErr
	}
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openRoot opens the directory at path, and only a directory: a named
// pipe put there since it was checked fails rather than waits.
func openRoot(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY, 0)
}
