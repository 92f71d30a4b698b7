package fs

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing n bytes of f from off to
// the disk, without waiting for them (sync_file_range with
// SYNC_FILE_RANGE_WRITE): the staging file's pages go out while the rest
// of the archive arrives, and the fsync before its rename has only the
// last few MiB left to wait for. It promises nothing; the fsync does. A
// filesystem that does not support it is left to the fsync.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Best effort, as said: a failure is left to the fsync.
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
