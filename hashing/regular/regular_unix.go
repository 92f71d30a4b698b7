//go:build unix

package regular

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openNonblocking opens with O_NONBLOCK, which makes open(2) of a pipe
// return at once; a regular file ignores the flag.
func openNonblocking(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|unix.O_NONBLOCK, perm)
}

// noReader reports whether err is a non-blocking write-only open of a pipe
// nobody has open for reading.
func noReader(err error) bool { return errors.Is(err, unix.ENXIO) }

// CheckFD returns an *Error when the open descriptor fd, opened from path,
// is not a regular file: for readers that open with open(2) themselves
// (with O_NONBLOCK, as openNonblocking does).
func CheckFD(fd int, path string) error {
	var st unix.Stat_t
	for {
		err := unix.Fstat(fd, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fstat", Path: path, Err: err}
		}
		break
	}
	mode := uint32(st.Mode) // uint16 on some systems
	if mode&unix.S_IFMT == unix.S_IFREG {
		return nil
	}
	return &Error{Path: path, Mode: modeType(mode)}
}

// modeType is the os.FileMode type bits of a stat(2) mode.
func modeType(m uint32) os.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFLNK:
		return os.ModeSymlink
	}
	return os.ModeIrregular
}
