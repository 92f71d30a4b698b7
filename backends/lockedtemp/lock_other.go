//go:build !unix

package lockedtemp

import (
	"errors"
	"os"
)

// Lock always fails where flock is not available, so no staging file is
// ever taken for stale; they are hidden and harmless, and left to the user.
func Lock(f *os.File) error { return errors.New("file locks are not supported here") }

// Wait takes no lock where flock is not available: writers of one
// provider are not serialised across processes there, and only the
// no-replace commit keeps one from replacing another's archive.
func Wait(f *os.File) error { return nil }

// CloseBeforeRename is true: an open file cannot be renamed everywhere (on
// Windows), and no lock is held on it anyway.
const CloseBeforeRename = true

// processGone cannot tell here: a staging name left between its creation
// and its lock goes once it is old.
func processGone(pid int) bool { return false }
