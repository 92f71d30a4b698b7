package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errOutside is a write refused because a symbolic link in the mirror leads
// out of it.
var errOutside = errors.New("outside the mirror")

// mkdirInside creates dir, a directory below the mirror's, as MkdirAll
// does, but neither creates nor writes anything through a symbolic link
// leading out of the mirror: reading follows such links at the provider
// level and below (a mirror may be assembled from links), writing through
// one would land archives, index documents and locks where nobody asked for
// them. A link to another directory of the mirror is followed, except at
// the hostname and namespace levels, where the clients (and the scan) do
// not follow links at all.
func (m *Mirror) mkdirInside(dir string) error {
	rel, err := filepath.Rel(m.dir, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: %w", dir, errOutside)
	}
	cur := m.dir
	for depth, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, iofs.ErrNotExist) {
			if err = os.Mkdir(cur, 0o755); err == nil {
				continue
			}
			if errors.Is(err, iofs.ErrExist) {
				fi, err = os.Lstat(cur) // another writer made it
			}
		}
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink == 0 && !fi.IsDir():
			return fmt.Errorf("%s is a file where the mirror's layout needs a directory (HOST/NAMESPACE/TYPE/)", m.rel(cur))
		case fi.Mode()&os.ModeSymlink == 0:
		case depth < 2:
			to, _ := os.Readlink(cur)
			return fmt.Errorf("%s is a symbolic link (to %s): Terraform and OpenTofu do not follow links at the hostname and namespace levels of a mirror, so nothing written through it would be seen; replace it with a directory", m.rel(cur), to)
		default:
			if err := m.linkInside(cur); err != nil {
				return err
			}
		}
	}
	return nil
}

// inDir runs create, which creates something in dir, once dir exists as
// mkdirInside makes it. Each directory is checked once per process and
// mirror: landing an archive checked its three levels twice, six lstat
// system calls of its fifteen. If create finds dir gone (removed since it
// was checked), dir is made again and create retried once.
func (m *Mirror) inDir(dir string, create func() error) error {
	m.mu.Lock()
	checked := m.checkedDirs[dir]
	m.mu.Unlock()
	if checked {
		if err := create(); !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
	}
	if err := m.mkdirInside(dir); err != nil {
		return err
	}
	m.mu.Lock()
	if m.checkedDirs == nil {
		m.checkedDirs = map[string]bool{}
	}
	m.checkedDirs[dir] = true
	m.mu.Unlock()
	return create()
}

// linkInside refuses the symbolic link at p unless it resolves to a path
// inside the mirror.
func (m *Mirror) linkInside(p string) error {
	to, _ := os.Readlink(p)
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		if rel, rerr := filepath.Rel(m.dir, real); rerr == nil && (rel == "." || filepath.IsLocal(rel)) {
			return nil
		}
		to = real
	}
	return fmt.Errorf("%s is a symbolic link to %s, %w: tfmirror reads through it but never writes through it (replace the link with a directory to write here)",
		m.rel(p), to, errOutside)
}

// noLink refuses a file that is a symbolic link leading out of the mirror:
// opening it to create or write would follow it there.
func (m *Mirror) noLink(p string) error {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return m.linkInside(p)
	}
	return nil
}
