//go:build !unix

package fs

import (
	"errors"
	"os"
)

// lockFile always fails where flock is not available, so no staging file is
// ever taken for stale; they are hidden and harmless, and left to the user.
func lockFile(f *os.File) error { return errors.New("file locks are not supported here") }
