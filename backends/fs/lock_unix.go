//go:build unix

package fs

import (
	"os"
	"syscall"
)

// lockFile takes a non-blocking exclusive flock, released when f is closed
// or its process dies.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
