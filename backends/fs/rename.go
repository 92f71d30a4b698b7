package fs

import (
	"errors"
	"io/fs"
	"os"
)

// renameNoReplaceFallback is renameNoReplace where the system has no
// no-replace rename: a file is hard-linked to newpath, which fails if
// newpath exists, then its staging name is removed. Where links fail too
// (some filesystems, directories), newpath is checked and then renamed
// onto; the provider lock every tfmirror writer holds around a commit keeps
// the check and the rename together.
func renameNoReplaceFallback(oldpath, newpath string) error {
	info, err := os.Lstat(oldpath)
	if err != nil {
		return err
	}
	if info.Mode().IsRegular() {
		err := os.Link(oldpath, newpath)
		if err == nil {
			return os.Remove(oldpath)
		}
		if errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}
