//go:build !linux

package fs

import "os"

// startWriteback is a no-op where sync_file_range does not exist: the
// fsync before the rename writes the whole file.
func startWriteback(f *os.File, off, n int64) {}
