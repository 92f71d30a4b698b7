package fs

import (
	"errors"
	"os"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"

	"github.com/tfmirror/tfmirror/backends/lockedtemp"
	"golang.org/x/sys/unix"
)

// procFDs says whether /proc/self/fd names this process's open files:
// an unnamed file is read again (hashed) through it, and linked into place
// through it where linkat with AT_EMPTY_PATH is not allowed.
var procFDs = gosync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// createUnnamed opens a file in dir that has no name (O_TMPFILE) until
// linkUnnamed gives it one, once it is complete and durable: no writer,
// sweeper or crash ever sees it under a staging name, and landing it is
// one directory entry instead of three (a staging name, its rename after
// the lock, the rename into place). It returns nil and no error where
// dir's filesystem or the kernel cannot, or /proc is not mounted.
//
// The file has mode 0644 already, as it will when it lands: nobody can
// open it before then, so it needs no narrower mode meanwhile, and
// landing it needs no chmod (one system call an archive fewer) unless
// the umask takes a bit of 0644 away.
func createUnnamed(dir string) (*os.File, error) {
	if !procFDs() {
		return nil, nil
	}
	fd, err := lockedtemp.OpenFD(dir, unix.O_TMPFILE|unix.O_RDWR, 0o644)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL):
		// A filesystem without O_TMPFILE, or a kernel before 3.11 that
		// reads the flag as O_DIRECTORY.
		return nil, nil
	case err != nil:
		return nil, err
	}
	f := os.NewFile(uintptr(fd), unnamedPath(fd))
	if umask()&0o644 != 0 {
		if err := f.Chmod(0o644); err != nil {
			_ = f.Close() // unnamed: gone once closed
			return nil, err
		}
	}
	return f, nil
}

// umask is this process's file mode creation mask, as Linux (4.7 and
// later) reports it in /proc/self/status; all bits (so a chmod follows
// each creation) where it does not. Reading it there leaves it alone:
// setting it to learn it would race with files other goroutines create.
var umask = gosync.OnceValue(readUmask)

func readUmask() uint32 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o777
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return uint32(m)
			}
		}
	}
	return 0o777
}

// unnamedPath is the path through which this process opens the unnamed
// file fd again (to hash it).
func unnamedPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// linkUnnamed gives f, from createUnnamed, the name path unless path
// exists: an error for an existing path matches os.ErrExist. It links the
// open file itself (AT_EMPTY_PATH) where this process may, which spares
// the kernel a walk through /proc for each archive: with
// CAP_DAC_READ_SEARCH, or since Linux 6.10 for a file it opened. Elsewhere
// that fails with ENOENT, and the link goes through /proc/self/fd.
func linkUnnamed(f *os.File, path string) error {
	if emptyPathLinks.Load() != linkRefused {
		err := unix.Linkat(int(f.Fd()), "", unix.AT_FDCWD, path, unix.AT_EMPTY_PATH)
		switch {
		case err == nil:
			emptyPathLinks.Store(linkAllowed)
			return nil
		case err != unix.ENOENT || emptyPathLinks.Load() == linkAllowed:
			return &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: err}
		}
	}
	// Refused, or path's directory is gone: through /proc, which tells.
	err := unix.Linkat(unix.AT_FDCWD, f.Name(), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: err}
	}
	emptyPathLinks.Store(linkRefused)
	return nil
}

// emptyPathLinks is what linkUnnamed found of linkat with AT_EMPTY_PATH.
var emptyPathLinks atomic.Int32

const (
	linkUnknown int32 = iota
	linkAllowed
	linkRefused
)
