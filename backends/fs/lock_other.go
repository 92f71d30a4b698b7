//go:build !unix

package fs

import (
	"errors"
	"os"
)

// lockFile always fails where flock is not available, so no staging file is
// ever taken for stale; they are hidden and harmless, and left to the user.
func lockFile(f *os.File) error { return errors.New("file locks are not supported here") }

// waitLock takes no lock where flock is not available: writers of one
// provider are not serialised across processes there, and only the
// no-replace commit keeps one from replacing another's archive.
func waitLock(f *os.File) error { return nil }

// closeBeforeRename is true: an open file cannot be renamed everywhere (on
// Windows), and no lock is held on it anyway.
const closeBeforeRename = true

// processGone cannot tell here: a staging name left between its creation
// and its lock goes once it is old.
func processGone(pid int) bool { return false }
