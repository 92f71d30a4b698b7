//go:build !linux

package fs

import (
	"errors"
	"os"
)

// createUnnamed returns nil: unnamed files (O_TMPFILE) are Linux's, so
// staging files are named (lockedtemp.Create).
func createUnnamed(dir string) (*os.File, error) { return nil, nil }

func linkUnnamed(f *os.File, path string) error {
	return errors.New("unnamed files are not supported here")
}
