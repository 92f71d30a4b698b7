package lockfile

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Walk visits the files under root in lexical order, as filepath.WalkDir
// does, but follows symbolic links to directories: a configuration tree
// often links a shared directory in (envs -> ../shared), and what the
// configurations there lock must be read like the rest. Each real
// directory is entered once, so a link back to an ancestor (a loop) or a
// second link to a directory already walked adds nothing. skip says which
// directories below root (by name, links too) are not entered. visit gets
// every entry that is not a directory, links to files included, under the
// path it was reached by. An unreadable directory stops the walk with its
// error.
func Walk(root string, skip func(name string) bool, visit func(path string, d iofs.DirEntry) error) error {
	w := walker{seen: map[string]bool{}, skip: skip, visit: visit}
	fi, err := CheckDir(root)
	if err != nil {
		return err
	}
	return w.dir(root, fi)
}

// CheckDir says, in one way for every walk of a tree given on the command
// line (--from, --keep-locked, a spec's from), why dir cannot be walked:
// "DIR: no such directory", "DIR: not a directory", or the reason.
func CheckDir(dir string) (iofs.FileInfo, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such directory", dir)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", dir, reason(err))
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	return fi, nil
}

type walker struct {
	seen  map[string]bool // real paths of the directories entered
	skip  func(string) bool
	visit func(string, iofs.DirEntry) error
}

func (w *walker) dir(path string, fi iofs.FileInfo) error {
	// A directory is known by its real path, on every system.
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if w.seen[real] {
		return nil
	}
	w.seen[real] = true
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		isDir := e.IsDir()
		var info iofs.FileInfo
		if e.Type()&iofs.ModeSymlink != 0 {
			target, err := os.Stat(p)
			switch {
			case err == nil && target.IsDir():
				isDir, info = true, target
			case err != nil && !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, syscall.ELOOP):
				return err
			}
		}
		if !isDir {
			if err := w.visit(p, e); err != nil {
				return err
			}
			continue
		}
		if w.skip != nil && w.skip(e.Name()) {
			continue
		}
		if info == nil {
			if info, err = os.Stat(p); err != nil {
				return err
			}
		}
		if err := w.dir(p, info); err != nil {
			return err
		}
	}
	return nil
}
