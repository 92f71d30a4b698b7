package fs

import (
	"fmt"
	"os"
	gosync "sync"

	"golang.org/x/sys/unix"
)

// groupFS reports whether files in dir may be made durable by a group
// sync, and the key of dir's filesystem. syncfs(2) reports writeback
// errors only since Linux 5.8; the filesystems named are those whose
// syncfs writes and waits for the data and inodes of every file (and
// commits the journal) before returning.
func groupFS(dir string) (uint64, bool) {
	if !syncfsReportsErrors() {
		return 0, false
	}
	var fs unix.Statfs_t
	var st unix.Stat_t
	if unix.Statfs(dir, &fs) != nil || unix.Stat(dir, &st) != nil {
		return 0, false
	}
	switch int64(fs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC:
		return st.Dev, true
	}
	return 0, false
}

// syncFS is syncfs(2) of f's filesystem.
func syncFS(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = unix.Syncfs(int(fd)); serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "syncfs", Path: f.Name(), Err: serr}
	}
	return nil
}

// syncfsReportsErrors is whether the running kernel is Linux 5.8 or newer.
var syncfsReportsErrors = gosync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

// kernelAtLeast reports whether release (as uname -r prints it, such as
// "6.1.0-18-amd64") is at least major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	var ma, mi int
	if n, _ := fmt.Sscanf(release, "%d.%d", &ma, &mi); n < 2 {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
