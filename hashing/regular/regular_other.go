//go:build !unix

package regular

import "os"

// openNonblocking is os.OpenFile: where there is no O_NONBLOCK there are
// no pipes in the file system to wait on either.
func openNonblocking(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

func noReader(error) bool { return false }
