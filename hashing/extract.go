package hashing

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Extract unpacks a zip into dir, refusing entries that would land outside
// it (absolute names, "..") and capping the unpacked size.
func Extract(zipPath, dir string, opts Options) error {
	z, err := OpenZip(zipPath)
	if err != nil {
		return err
	}
	defer func() { _ = z.Close() }() // read only
	left := opts.MaxUnpacked
	if left == 0 {
		left = DefaultMaxUnpacked
	}
	for _, f := range z.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("zip entry %q: refusing to extract outside the package directory", f.Name)
		}
		dst := filepath.Join(dir, name)
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := f.Mode().Perm() // as go-getter, which the clients use, keeps it
		if mode == 0 {
			mode = 0o644
		}
		n, err := extractFile(f, dst, mode, left)
		if err != nil {
			return fmt.Errorf("zip entry %q: %w", f.Name, err)
		}
		if left > 0 {
			left -= n
		}
	}
	return nil
}

func extractFile(f *zip.File, dst string, mode os.FileMode, limit int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer func() { _ = rc.Close() }() // read only
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return 0, err
	}
	var r io.Reader = rc
	if limit > 0 {
		r = io.LimitReader(rc, limit+1)
	}
	n, err := io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && limit > 0 && n > limit {
		err = ErrTooLarge
	}
	return n, err
}
