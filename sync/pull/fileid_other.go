//go:build !linux

package pull

import "os"

func idOf(info os.FileInfo) fileID { return fileID{size: info.Size(), mtime: info.ModTime()} }
