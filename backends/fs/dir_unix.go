//go:build unix

package fs

import (
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends/lockedtemp"
	"github.com/tfmirror/tfmirror/hashing/regular"
	"golang.org/x/sys/unix"
)

// listDir reads dir's entries, sorted by name, and gives the size of a
// file in it (lstat) by its name relative to the open directory: a scan of
// 100,000 archives spares the kernel a walk of each one's full path. done
// closes the directory.
func listDir(dir string) (entries []os.DirEntry, size func(name string) (int64, error), done func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err = f.ReadDir(-1)
	if err != nil {
		_ = f.Close() // read only
		return nil, nil, nil, err
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	fd := int(f.Fd())
	size = func(name string) (int64, error) {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, &os.PathError{Op: "lstat", Path: dir + string(os.PathSeparator) + name, Err: err}
		}
		return st.Size, nil
	}
	return entries, size, func() { _ = f.Close() }, nil
}

// readFileInto reads the file at path into *buf, when buf is not nil,
// growing it as needed: a scan reads thousands of small documents, none of
// which its parse keeps. It reads through the system calls rather than an
// os.File, which for each file tries to register it with the poller (an
// epoll_ctl a regular file refuses) and sets a cleanup: os.Open and Close
// were 13 % of the CPU of a no-op plan of 100,000 archives, the open
// system call itself 6 %. Without buf it is regular.ReadFile. What is not a
// regular file is refused, as regular.Open refuses it.
func readFileInto(path string, buf *[]byte) ([]byte, error) {
	if buf == nil {
		return regular.ReadFile(path, 0)
	}
	fd, err := openReadFD(path)
	if err != nil {
		return nil, err
	}
	r := fdReader{fd: fd, name: path} // on the stack: a scan reads thousands
	defer func() { _ = r.Close() }()  // read only
	b := (*buf)[:0]
	if cap(b) == 0 {
		b = make([]byte, 0, 2048) // a version document of a few platforms in one read
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case err == io.EOF:
			*buf = b
			return b, nil
		case err != nil:
			return nil, err
		}
	}
}

// openReader opens name to read it, as an open file descriptor rather
// than an *os.File, whose making asks the kernel for the descriptor's
// flags (one system call an archive of a sync). The reader is read and
// closed by one goroutine. What is not a regular file is refused.
func openReader(name string) (io.ReadCloser, error) {
	fd, err := openReadFD(name)
	if err != nil {
		return nil, err
	}
	return &fdReader{fd: fd, name: name}, nil
}

// fdReader reads an open file descriptor, as *os.File does.
type fdReader struct {
	fd   int // -1 once closed
	name string
}

func (r *fdReader) Read(p []byte) (int, error) {
	if r.fd < 0 {
		return 0, &os.PathError{Op: "read", Path: r.name, Err: os.ErrClosed}
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(r.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: r.name, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *fdReader) Close() error {
	if r.fd < 0 {
		return &os.PathError{Op: "close", Path: r.name, Err: os.ErrClosed}
	}
	err := unix.Close(r.fd)
	r.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: r.name, Err: err}
	}
	return nil
}

// openReadFD opens a regular file to read it, as regular.Open does: the
// open does not wait for a named pipe's writer (O_NONBLOCK, which a regular
// file ignores), and the descriptor is refused unless it is a regular
// file's (one fstat; a pipe would block the read, a device feed it without
// end).
func openReadFD(name string) (int, error) {
	fd, err := lockedtemp.OpenFD(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, err
	}
	if err := regular.CheckFD(fd, name); err != nil {
		_ = unix.Close(fd) // refused before any read
		return -1, err
	}
	return fd, nil
}
