//go:build linux

package pull

import (
	"os"
	"syscall"
	"time"
)

func idOf(info os.FileInfo) fileID {
	id := fileID{size: info.Size(), mtime: info.ModTime()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), uint64(st.Ino)
		id.ctime = time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return id
}
