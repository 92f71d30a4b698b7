//go:build unix

package lockedtemp

import (
	"os"

	"golang.org/x/sys/unix"
)

// OpenFile is os.OpenFile for a regular file, without the poller:
// os.OpenFile tries to register every file it opens with it, four fcntl
// and an epoll_ctl that a regular file refuses, while os.NewFile of a
// blocking descriptor costs one fcntl. Landing 10,000 tiny archives opens
// four files each.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := OpenFD(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// OpenFD is open(2) with O_CLOEXEC, retried on EINTR, its error an
// *os.PathError.
func OpenFD(name string, flag int, perm os.FileMode) (int, error) {
	fd, err := unix.Open(name, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
	for err == unix.EINTR {
		fd, err = unix.Open(name, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}

// Rename is os.Rename without its lstat of newpath (which refuses to
// replace a directory): for staging names, which are never directories.
func Rename(oldpath, newpath string) error {
	if err := unix.Rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
