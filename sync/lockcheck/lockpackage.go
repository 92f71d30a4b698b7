package lockcheck

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/readers"
	"github.com/tfmirror/tfmirror/hashing"
)

// LockSums are the hashes `providers lock` records for one package.
type LockSums struct {
	// Unpacked is the h1: of the package as unpacked (DirH1), which is
	// what the clients record and re-check in their cache.
	Unpacked hashing.Hash
	// Zip holds the zip's h1: (ZipH1, what the clients check a zip with)
	// and zh:; it is zero for an unpacked directory.
	Zip hashing.Sums
}

// Hashes returns what goes into the lock: the unpacked h1: and the zip's zh:.
func (s LockSums) Hashes() []hashing.Hash {
	hs := []hashing.Hash{s.Unpacked}
	if s.Zip.ZH != "" {
		hs = append(hs, s.Zip.ZH)
	}
	return hashing.SortUnique(hs)
}

// PackageLockHashes computes a package's LockSums: in place for local
// places, otherwise from a temporary copy of the zip.
func PackageLockHashes(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options) (LockSums, error) {
	if lp, ok := r.(backends.LocalPather); ok {
		p := lp.LocalPath(a)
		fi, err := os.Stat(p)
		if err != nil {
			return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
		}
		if fi.IsDir() {
			h1, err := hashing.DirH1(p)
			if err != nil {
				return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
			}
			return LockSums{Unpacked: h1}, nil
		}
		ls, err := zipLockSums(p, opts)
		if err != nil {
			return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
		}
		return ls, nil
	}
	tmp, err := fetchToTemp(ctx, r, a)
	if err != nil {
		return LockSums{}, err
	}
	defer os.Remove(tmp)
	ls, err := zipLockSums(tmp, opts)
	if err != nil {
		return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
	}
	return ls, nil
}

func fetchToTemp(ctx context.Context, r backends.Reader, a backends.Archive) (string, error) {
	rc, err := r.Open(ctx, a)
	if err != nil {
		return "", err
	}
	defer func() { _ = rc.Close() }() // read only
	f, err := os.CreateTemp("", "tfmirror-lock-*.zip")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, readers.WithContext(ctx, rc))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("%s: %s: %w", r, a.Package, err)
	}
	return f.Name(), nil
}

// zipLockSums hashes a zip and its unpacked form. The two h1: values agree
// unless the zip has directory entries or names that do not unpack to
// themselves; only then is it unpacked to a temp dir, as the clients would.
func zipLockSums(zipPath string, opts hashing.Options) (LockSums, error) {
	sums, err := hashing.HashPath(zipPath, opts)
	if err != nil {
		return LockSums{}, err
	}
	asIs, err := unpacksAsIs(zipPath)
	if err != nil {
		return LockSums{}, err
	}
	if asIs {
		return LockSums{Unpacked: sums.H1, Zip: sums}, nil
	}
	dir, err := os.MkdirTemp("", "tfmirror-unpack-*")
	if err != nil {
		return LockSums{}, err
	}
	defer os.RemoveAll(dir)
	if err := hashing.Extract(zipPath, dir, opts); err != nil {
		return LockSums{}, err
	}
	h1, err := hashing.DirH1(dir)
	if err != nil {
		return LockSums{}, err
	}
	return LockSums{Unpacked: h1, Zip: sums}, nil
}

// unpacksAsIs reports whether ZipH1 of the zip equals DirH1 of its
// extraction: no directory entries, no duplicate names, every name a clean
// relative slash path.
func unpacksAsIs(zipPath string) (bool, error) {
	z, err := hashing.OpenZip(zipPath)
	if err != nil {
		return false, err
	}
	defer func() { _ = z.Close() }() // read only
	seen := map[string]bool{}
	for _, f := range z.File {
		n := f.Name
		if strings.HasSuffix(n, "/") || f.FileInfo().IsDir() || seen[n] ||
			strings.Contains(n, `\`) || path.Clean(n) != n || strings.HasPrefix(n, "/") || n == ".." || strings.HasPrefix(n, "../") {
			return false, nil
		}
		seen[n] = true
	}
	return true, nil
}
