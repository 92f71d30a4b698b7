package fetch

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Sentinel errors, wrapped with the package and the offending entry.
var (
	// ErrTooLarge: the download or the unpacked package exceeds a limit.
	ErrTooLarge = errors.New("exceeds the size limit")
	// ErrUnsafePath: an archive entry or symlink would land outside the
	// package (absolute names, "..", symlinks that escape).
	ErrUnsafePath = errors.New("unsafe path")
	// ErrEmpty: the package holds no files.
	ErrEmpty = errors.New("empty package")
)

// packTime is the modification time of every entry, so the same files give
// the same zip bytes on every run and every machine.
var packTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Limits bound what one package may hold.
type Limits struct {
	// MaxBytes caps the total size of the files (unpacked).
	MaxBytes int64
	// MaxFiles caps the number of files.
	MaxFiles int
}

type packEntry struct {
	name string // slash-separated, relative to the package root
	path string // the file to read (symlinks resolved)
	exec bool
	size int64
}

// Pack writes the files under root to w as a module package zip, exactly
// as OpenTofu will extract it: one entry per regular file, sorted by name,
// with a fixed modification time and explicit Unix modes (0644, or 0755
// where any execute bit was set), so the same tree always gives the same
// bytes. Version-control metadata (.git) is left out. Symlinks are
// replaced by what they point to, since OpenTofu's zip extraction would
// write them as plain files holding the link text; a symlink that leads
// outside root, or is broken, is an error. It returns the number of files.
func Pack(ctx context.Context, root string, w io.Writer, lim Limits) (int, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return 0, err
	}
	realRoot, err = filepath.Abs(realRoot)
	if err != nil {
		return 0, err
	}
	p := &packer{ctx: ctx, root: realRoot, lim: lim, onStack: map[string]bool{}}
	if err := p.walk(realRoot, ""); err != nil {
		return 0, err
	}
	if len(p.entries) == 0 {
		return 0, fmt.Errorf("%w: no files (a module package needs at least one)", ErrEmpty)
	}
	sort.Slice(p.entries, func(i, j int) bool { return p.entries[i].name < p.entries[j].name })
	zw := zip.NewWriter(w)
	for _, e := range p.entries {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := addFile(zw, e); err != nil {
			return 0, err
		}
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return len(p.entries), nil
}

type packer struct {
	ctx     context.Context
	root    string
	lim     Limits
	entries []packEntry
	bytes   int64
	onStack map[string]bool // real directories being walked, to stop symlink cycles
}

func (p *packer) inside(real string) bool {
	return real == p.root || strings.HasPrefix(real, p.root+string(filepath.Separator))
}

func (p *packer) walk(dir, prefix string) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	p.onStack[dir] = true
	defer delete(p.onStack, dir)
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		if name == ".git" {
			continue
		}
		rel := path.Join(prefix, name)
		if err := checkEntryName(rel); err != nil {
			return err
		}
		full := filepath.Join(dir, name)
		info, err := os.Lstat(full)
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(full)
			real, err := filepath.EvalSymlinks(full)
			if err != nil {
				return fmt.Errorf("symlink %s -> %s: broken (%v)", rel, target, err)
			}
			if !p.inside(real) {
				return fmt.Errorf("symlink %s -> %s leads outside the package: %w", rel, target, ErrUnsafePath)
			}
			if info, err = os.Stat(real); err != nil {
				return err
			}
			full = real
		}
		switch {
		case info.IsDir():
			if p.onStack[full] {
				return fmt.Errorf("symlink %s leads back into a directory that contains it (a cycle)", rel)
			}
			if err := p.walk(full, rel); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			p.bytes += info.Size()
			if p.lim.MaxBytes > 0 && p.bytes > p.lim.MaxBytes {
				return fmt.Errorf("the package's files add up to more than %d bytes: %w", p.lim.MaxBytes, ErrTooLarge)
			}
			if p.lim.MaxFiles > 0 && len(p.entries) >= p.lim.MaxFiles {
				return fmt.Errorf("the package has more than %d files: %w", p.lim.MaxFiles, ErrTooLarge)
			}
			p.entries = append(p.entries, packEntry{name: rel, path: full, exec: info.Mode()&0o111 != 0, size: info.Size()})
		default:
			return fmt.Errorf("%s is a %s, not a file or directory; module packages hold only files", rel, info.Mode().Type())
		}
	}
	return nil
}

func addFile(zw *zip.Writer, e packEntry) error {
	fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: packTime}
	mode := fs.FileMode(0o644)
	if e.exec {
		mode = 0o755
	}
	fh.SetMode(mode)
	dst, err := zw.CreateHeader(fh)
	if err != nil {
		return err
	}
	f, err := regular.Open(e.path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only
	// The size was counted against the limits when walking; a file that
	// grew since is cut off there rather than blowing the budget.
	n, err := io.Copy(dst, io.LimitReader(f, e.size+1))
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	if n != e.size {
		return fmt.Errorf("%s changed size while being packed", e.name)
	}
	return nil
}

// checkEntryName refuses names OpenTofu's extraction would refuse or
// that could land outside the package: absolute names, drive letters,
// ".." elements (with either slash), NUL bytes.
func checkEntryName(name string) error {
	if name == "" {
		return fmt.Errorf("an entry has an empty name: %w", ErrUnsafePath)
	}
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || (len(name) >= 2 && name[1] == ':') {
		return fmt.Errorf("entry %q has an absolute name: %w", name, ErrUnsafePath)
	}
	if strings.ContainsRune(name, 0) {
		return fmt.Errorf("entry %q has a NUL byte in its name: %w", name, ErrUnsafePath)
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fmt.Errorf("entry %q contains \"..\": %w", name, ErrUnsafePath)
		}
	}
	return nil
}
