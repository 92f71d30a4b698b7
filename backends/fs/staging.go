package fs

import "os"

// Staging files and directories outside a mirror (a bundle being written
// beside its .tar) follow the mirror's rule: a hidden name bearing
// tfmirror's staging marker, locked for as long as its writer lives, so
// that one nobody holds is a killed run's and SweepStaging removes it.

// CreateStaging creates a hidden staging file in dir whose name starts
// with prefix (which starts with "."), locked until it is closed; put it in
// place with PlaceStaging.
func CreateStaging(dir, prefix string) (f *os.File, path string, err error) {
	return createLocked(dir, prefix)
}

// MkdirStaging creates a hidden staging directory in dir whose name starts
// with prefix (which starts with "."); it is locked until the returned
// handle is closed.
func MkdirStaging(dir, prefix string) (lock *os.File, path string, err error) {
	return mkdirLocked(dir, prefix)
}

// PlaceStaging renames the staging file tmp, open as f, to path, while it
// is still locked against sweepers; f is to be closed after.
func PlaceStaging(f *os.File, tmp, path string) error { return placeLocked(f, tmp, path) }

// SweepStaging removes the staging files and directories in dir whose names
// start with prefix and that no live process holds: what killed runs left.
func SweepStaging(dir, prefix string) { sweepStaleNamed(dir, prefix) }
