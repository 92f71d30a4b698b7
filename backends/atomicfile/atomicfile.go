// Package atomicfile replaces files atomically: the new content goes to a
// hidden staging file beside the target, is made durable, and is renamed
// over it, so that a reader (a client, an editor, a watcher) sees the old
// file or the new, never a part. Places write their documents through it
// and the lock file code writes the users' lock files through it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Write writes data to path atomically with mode, replacing whatever file
// is there (a symbolic link there is replaced by the file).
func Write(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tfmirror-write-")
	if err != nil {
		return err
	}
	return Commit(f, f.Name(), path, data, mode)
}

// Commit writes data to f, a staging file open under the name tmp in
// path's directory, makes it durable with mode, renames it to path and
// syncs the directory. Where an open file can be renamed, f stays open
// (and any lock on it held) until it bears its final name. On failure tmp
// is removed. Commit closes f.
func Commit(f *os.File, tmp, path string, data []byte, mode os.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil && closeBeforeRename {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	_ = f.Close() // synced above; closed already where closeBeforeRename
	if err != nil {
		os.Remove(tmp)
		return err
	}
	SyncDir(filepath.Dir(path))
	return nil
}

// SyncDir makes the entries of dir durable (the names renamed into it),
// where the system allows; it is best effort.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // EINVAL on filesystems that cannot sync a directory
		_ = d.Close()
	}
}

// Replace writes data to path atomically, as Write does, for a
// file a user keeps: through a symbolic link to the file it names (written
// in that file's directory, so the link stays a link), keeping the mode of
// the file it replaces; mode is for a new file.
func Replace(path string, data []byte, mode os.FileMode) error {
	target, err := linkTarget(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", target)
		}
		mode = fi.Mode().Perm()
	}
	return Write(target, data, mode)
}

// linkTarget returns the file path names after following symbolic links,
// also when the last link dangles (the file it names is then created).
func linkTarget(path string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real, nil
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil // a new file; a missing directory fails later
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", err
			}
			dest = filepath.Join(dir, dest)
		}
		path = dest
	}
	return "", &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}
