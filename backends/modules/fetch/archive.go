package fetch

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends/readers"
)

// Format is an archive format.
type Format string

const (
	Zip    Format = "zip"
	Tar    Format = "tar"
	TarGz  Format = "tar.gz"
	TarBz2 Format = "tar.bz2"
	TarXz  Format = "tar.xz"
)

// formatByName maps go-getter's archive names (the ?archive= argument and
// file extensions) to formats.
var formatByName = map[string]Format{
	"zip": Zip, "tar": Tar,
	"tar.gz": TarGz, "tgz": TarGz,
	"tar.bz2": TarBz2, "tbz2": TarBz2,
	"tar.xz": TarXz, "txz": TarXz,
}

// formatFromPath returns the archive format a URL path's extension names.
func formatFromPath(p string) (Format, bool) {
	p = strings.ToLower(p)
	for _, ext := range []string{"tar.gz", "tar.bz2", "tar.xz", "tgz", "tbz2", "txz", "zip", "tar"} {
		if strings.HasSuffix(p, "."+ext) {
			return formatByName[ext], true
		}
	}
	return "", false
}

// sniff returns the archive format of a file from its first bytes, for
// servers that name their archives badly.
func sniff(file string) (Format, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	head := make([]byte, 262)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return Zip, nil
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return TarGz, nil
	case bytes.HasPrefix(head, []byte("BZh")):
		return TarBz2, nil
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return TarXz, nil
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		return Tar, nil
	}
	return "", errors.New("not a zip, tar, tar.gz or tar.bz2 archive")
}

// extractor writes archive entries under dst, within limits, refusing
// anything that would land outside dst.
type extractor struct {
	ctx   context.Context
	dst   string
	lim   Limits
	bytes int64
	files int
}

// Extract unpacks the archive file in format f into the directory dst.
func Extract(ctx context.Context, file string, f Format, dst string, lim Limits) error {
	x := &extractor{ctx: ctx, dst: dst, lim: lim}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	switch f {
	case Zip:
		return x.zip(file)
	case TarXz:
		return errors.New("tar.xz archives are not supported (no xz decompressor in tfmirror); ask for a zip or tar.gz")
	}
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = fh.Close() }() // read only
	var r io.Reader = bufio.NewReader(fh)
	switch f {
	case TarGz:
		gz, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("not a gzip stream: %v", err)
		}
		defer func() { _ = gz.Close() }() // its errors come with the reads
		r = gz
	case TarBz2:
		r = bzip2.NewReader(r)
	case Tar:
	default:
		return fmt.Errorf("unknown archive format %q", f)
	}
	return x.tar(r)
}

func (x *extractor) count(size int64) error {
	x.files++
	x.bytes += size
	if x.lim.MaxFiles > 0 && x.files > x.lim.MaxFiles {
		return fmt.Errorf("the archive has more than %d files: %w", x.lim.MaxFiles, ErrTooLarge)
	}
	if x.lim.MaxBytes > 0 && x.bytes > x.lim.MaxBytes {
		return fmt.Errorf("the archive unpacks to more than %d bytes: %w", x.lim.MaxBytes, ErrTooLarge)
	}
	return nil
}

// target checks an entry name and returns where it goes, refusing to
// write through a symlink an earlier entry made.
func (x *extractor) target(name string) (string, bool, error) {
	if err := checkEntryName(name); err != nil {
		return "", false, err
	}
	clean := path.Clean(strings.TrimPrefix(name, "./"))
	if clean == "." {
		return "", false, nil
	}
	parts := strings.Split(clean, "/")
	for i := 1; i < len(parts); i++ {
		parent := filepath.Join(x.dst, filepath.FromSlash(path.Join(parts[:i]...)))
		if fi, err := os.Lstat(parent); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", false, fmt.Errorf("entry %q would be written through the symlink %q: %w", name, path.Join(parts[:i]...), ErrUnsafePath)
		}
	}
	return filepath.Join(x.dst, filepath.FromSlash(clean)), true, nil
}

func (x *extractor) file(name string, r io.Reader, size int64, mode fs.FileMode) error {
	dst, ok, err := x.target(name)
	if err != nil || !ok {
		return err
	}
	if err := x.count(max(size, 0)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(dst); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A later entry of the same name replaces the link rather than
		// writing through it.
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	// The stated size can lie (zip headers, truncated tars): stop at what
	// the limit leaves, whatever the header says.
	budget := int64(-1)
	if x.lim.MaxBytes > 0 {
		budget = x.lim.MaxBytes - (x.bytes - max(size, 0))
	}
	var src io.Reader = r
	if budget >= 0 {
		src = io.LimitReader(r, budget+1)
	}
	n, err := io.Copy(f, readers.WithContext(x.ctx, src))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	if budget >= 0 && n > budget {
		return fmt.Errorf("the archive unpacks to more than %d bytes: %w", x.lim.MaxBytes, ErrTooLarge)
	}
	x.bytes += n - max(size, 0)
	return nil
}

func (x *extractor) dir(name string) error {
	dst, ok, err := x.target(name)
	if err != nil || !ok {
		return err
	}
	return os.MkdirAll(dst, 0o755)
}

// symlink makes a link whose target stays inside the package; Pack later
// replaces it by what it points to.
func (x *extractor) symlink(name, linkTarget string) error {
	dst, ok, err := x.target(name)
	if err != nil || !ok {
		return err
	}
	if linkTarget == "" || strings.HasPrefix(linkTarget, "/") || strings.HasPrefix(linkTarget, `\`) || (len(linkTarget) >= 2 && linkTarget[1] == ':') {
		return fmt.Errorf("symlink %q -> %q leads outside the package: %w", name, linkTarget, ErrUnsafePath)
	}
	rel := path.Join(path.Dir(path.Clean(name)), linkTarget)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("symlink %q -> %q leads outside the package: %w", name, linkTarget, ErrUnsafePath)
	}
	if err := x.count(0); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	os.Remove(dst)
	return os.Symlink(linkTarget, dst)
}

func (x *extractor) zip(file string) error {
	z, err := zip.OpenReader(file)
	if err != nil {
		return fmt.Errorf("not a usable zip: %v", err)
	}
	defer func() { _ = z.Close() }() // read only
	if len(z.File) == 0 {
		return fmt.Errorf("the zip has no entries: %w", ErrEmpty)
	}
	for _, f := range z.File {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			if err := x.dir(f.Name); err != nil {
				return err
			}
		case mode&fs.ModeSymlink != 0:
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("entry %q: %v", f.Name, err)
			}
			b, err := io.ReadAll(io.LimitReader(rc, 4096))
			_ = rc.Close() // read only
			if err != nil {
				return fmt.Errorf("entry %q: %v", f.Name, err)
			}
			if err := x.symlink(f.Name, string(b)); err != nil {
				return err
			}
		case mode.IsRegular():
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("entry %q: %v", f.Name, err)
			}
			err = x.file(f.Name, rc, int64(f.UncompressedSize64), mode)
			_ = rc.Close() // read only
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q is a %s; module packages hold only files and directories", f.Name, mode.Type())
		}
	}
	return nil
}

func (x *extractor) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	links := map[string]string{} // hard links, made once every file is there
	any := false
	for {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not a usable tar archive: %v", err)
		}
		any = true
		switch h.Typeflag {
		case tar.TypeDir:
			err = x.dir(h.Name)
		case tar.TypeReg: // tar.Reader reports the legacy TypeRegA as TypeReg
			err = x.file(h.Name, tr, h.Size, fs.FileMode(h.Mode))
		case tar.TypeSymlink:
			err = x.symlink(h.Name, h.Linkname)
		case tar.TypeLink:
			if err = checkEntryName(h.Linkname); err == nil {
				links[h.Name] = h.Linkname
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		default:
			err = fmt.Errorf("entry %q is a special file (type %q); module packages hold only files and directories", h.Name, h.Typeflag)
		}
		if err != nil {
			return err
		}
	}
	if !any {
		return fmt.Errorf("the tar archive has no entries: %w", ErrEmpty)
	}
	for name, target := range links {
		src, ok, err := x.target(target)
		if err != nil || !ok {
			return fmt.Errorf("hard link %q -> %q: %v", name, target, err)
		}
		// The target must be a file this archive wrote, opened as such: a
		// symlink (whose path may lead out through another symlink) or
		// anything else is refused, never followed.
		li, err := os.Lstat(src)
		if err != nil || !li.Mode().IsRegular() {
			return fmt.Errorf("hard link %q -> %q: the target is not a file in the archive: %w", name, target, ErrUnsafePath)
		}
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("hard link %q -> %q: the target is not a file in the archive: %w", name, target, ErrUnsafePath)
		}
		fi, err := f.Stat()
		if err != nil || !os.SameFile(li, fi) {
			_ = f.Close() // read only
			return fmt.Errorf("hard link %q -> %q: the target is not a file in the archive: %w", name, target, ErrUnsafePath)
		}
		err = x.file(name, f, fi.Size(), fi.Mode())
		_ = f.Close() // read only
		if err != nil {
			return err
		}
	}
	return nil
}
