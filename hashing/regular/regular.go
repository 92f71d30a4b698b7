// Package regular opens the files tfmirror reads only when they are regular
// files. A named pipe (FIFO) blocks open(2) until a writer comes, and then a
// read until it writes: given as --lock, or lying in a mirror or a --from
// tree, it hangs the command where no context can reach it. A device (a
// link to /dev/stdin, /dev/zero) or a socket is no better. Every reader
// opens through here: without blocking, and then asks the open descriptor
// what it is, so a name swapped between a check and the open cannot slip a
// pipe through.
package regular

import (
	"errors"
	"io"
	"os"
)

// ErrNotRegular is what errors.Is finds in an *Error.
var ErrNotRegular = errors.New("not a regular file")

// Error says that Path is not a regular file, and what it is.
type Error struct {
	Path string
	Mode os.FileMode // the type bits of what Path is
}

func (e *Error) Error() string { return e.Path + ": " + e.Detail() }

// Detail is the message without the path, for messages that name it
// already.
func (e *Error) Detail() string { return "is " + Kind(e.Mode) + ", not a regular file" }

// Unnamed is e with a message that leaves out the path (Detail), for
// messages that name the file already; errors.As still finds e.
func (e *Error) Unnamed() error { return unnamed{e} }

type unnamed struct{ e *Error }

func (u unnamed) Error() string { return u.e.Detail() }
func (u unnamed) Unwrap() error { return u.e }

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *Error) Is(target error) bool { return target == ErrNotRegular }

// Kind names what a file of mode m is, as a message says it: "a named pipe
// (FIFO)", "a directory", ...
func Kind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file (" + m.Type().String() + ")"
}

// Check returns an *Error when info is not a regular file's.
func Check(path string, info os.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	return &Error{Path: path, Mode: info.Mode().Type()}
}

// Open opens path for reading when it is a regular file (following
// links), and returns an *Error, having opened nothing, when it is not.
func Open(path string) (*os.File, error) {
	return OpenFile(path, os.O_RDONLY, 0)
}

// OpenFile is os.OpenFile for a regular file: the open does not wait for
// a pipe's other end, and what is opened is checked before it is given
// back. A write-only open of a pipe nobody reads fails at once too, as the
// *Error. O_CREATE makes a regular file where nothing is.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := openNonblocking(path, flag, perm)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && noReader(pe.Err) {
			// A write-only open of a pipe without a reader: say what it is.
			if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
				return nil, &Error{Path: path, Mode: fi.Mode().Type()}
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close() // refused before any read
		return nil, err
	}
	if err := Check(path, fi); err != nil {
		_ = f.Close() // refused before any read
		return nil, err
	}
	return f, nil
}

// ReadFile reads a regular file whole, as os.ReadFile does, and at most
// limit bytes of it when limit > 0: a file longer than that gives the
// first limit+1 bytes and no error, for the caller to say it is too large
// in its own terms.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}
