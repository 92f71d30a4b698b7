package fs

import (
	"bytes"
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
		return uint64(st.Dev), true // uint32 on some architectures
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

// dirtyMax is how much dirty data (and data under writeback) the system may
// hold for a group sync. Landing files leaves metadata dirty that their
// fsyncs do not write (directories, bitmaps: ~20 MB after 10,000 tiny
// archives on ext4 without a journal), which the first syncfs writes once;
// a download just written without fsync (hundreds of MB) would cost a
// syncfs far more than the fsyncs it replaces.
const dirtyMax = 64 << 20

// fewDirtyPages reports whether the system holds at most dirtyMax bytes of
// dirty data and data under writeback (/proc/meminfo), so that a syncfs
// writes little besides the files it is for.
func fewDirtyPages() bool {
	fd, err := unix.Open("/proc/meminfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer func() { _ = unix.Close(fd) }() // read only
	var buf [8192]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return false
	}
	dirty, ok1 := meminfoKB(buf[:n], "Dirty:")
	wb, ok2 := meminfoKB(buf[:n], "Writeback:")
	return ok1 && ok2 && (dirty+wb)*1024 <= dirtyMax
}

// meminfoKB returns the value of field (such as "Dirty:") in /proc/meminfo's
// text, in kB.
func meminfoKB(text []byte, field string) (int64, bool) {
	for line := range bytes.Lines(text) {
		rest, ok := bytes.CutPrefix(line, []byte(field))
		if !ok {
			continue
		}
		var kb int64
		if n, _ := fmt.Sscanf(string(rest), "%d kB", &kb); n == 1 {
			return kb, true
		}
		return 0, false
	}
	return 0, false
}
