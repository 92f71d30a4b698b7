package lockfile

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// error, and so does ctx ending (an interrupt), with ctx's error.
//
// A directory is known by the identity of the file it is (device and
// inode), and entered through its parent's open handle: the work is
// linear in the number of directories, however deep the tree.
func Walk(ctx context.Context, root string, skip func(name string) bool, visit func(path string, d iofs.DirEntry) error) error {
	w := walker{ctx: ctx, root: root, seen: map[any]bool{}, skip: skip, visit: visit}
	if _, err := CheckDir(root); err != nil {
		return err
	}
	f, err := openRoot(root)
	if err != nil {
		return fmt.Errorf("%s: %w", root, reason(err))
	}
	defer func() { _ = f.Close() }() // a directory, read only
	return w.dir(f, root, 0)
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
	ctx   context.Context
	root  string
	seen  map[any]bool // the identities of the directories entered
	skip  func(string) bool
	visit func(string, iofs.DirEntry) error
}

// dir walks the open directory f, reached as path. Its subdirectories are
// opened through it (openDir), not by path: however deep the tree, each
// step costs the same, and no path grows too long for the system until a
// visit names one.
func (w *walker) dir(f *os.File, path string, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return w.unreadable(path, depth, err)
	}
	id := dirID(path, fi)
	if w.seen[id] {
		return nil
	}
	w.seen[id] = true
	entries, err := f.ReadDir(-1)
	if err != nil {
		return w.unreadable(path, depth, err)
	}
	slices.SortFunc(entries, func(a, b iofs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		link := e.Type()&iofs.ModeSymlink != 0
		if !e.IsDir() && !link {
			if err := w.visit(p, e); err != nil {
				return err
			}
			continue
		}
		if !link && w.skip != nil && w.skip(e.Name()) {
			continue
		}
		sub, err := openDir(f, e.Name(), p)
		switch {
		case err != nil && link && notADir(err):
			// A link to a file, or one that leads nowhere (dangling, a
			// loop of links): visited as a file.
			if err := w.visit(p, e); err != nil {
				return err
			}
			continue
		case err != nil:
			return w.unreadable(p, depth+1, err)
		}
		if link && w.skip != nil && w.skip(e.Name()) {
			_ = sub.Close() // a directory, read only
			continue
		}
		err = w.dir(sub, p, depth+1)
		_ = sub.Close() // a directory, read only
		if err != nil {
			return err
		}
	}
	return nil
}

// notADir reports whether opening a link as a directory failed because it
// leads to no directory.
func notADir(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR)
}

// unreadable is the error for a directory the walk cannot read. One whose
// path is longer than the system takes is named by its depth, not by a
// path of thousands of characters.
func (w *walker) unreadable(path string, depth int, err error) error {
	if errors.Is(err, syscall.ENAMETOOLONG) || len(path) > 4096 {
		return fmt.Errorf("%s: a directory %d levels below it (a path of %d bytes): %w", w.root, depth, len(path), reason(err))
	}
	return err
}
