//go:build unix

package lockedtemp

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes a non-blocking exclusive flock, released when f is closed or
// its process dies.
func Lock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// Wait takes an exclusive flock, waiting for whoever holds it. It is
// released when f is closed or its process dies, so a killed writer never
// leaves it held.
func Wait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// CloseBeforeRename is false: an open file can be renamed here, so staging
// files stay open, and locked against sweepers, until they are in place.
const CloseBeforeRename = false

// processGone reports whether no process has the id pid (a staging name's
// creator, killed before it could lock it).
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
