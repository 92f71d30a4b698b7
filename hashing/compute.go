package hashing

import (
	"archive/zip"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/flate"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tfmirror/tfmirror/hashing/regular"
)

// ZipFile is a zip opened by OpenZip; Close closes the file.
type ZipFile struct {
	*zip.Reader
	f *os.File
}

// Close closes the zip's file.
func (z ZipFile) Close() error { return z.f.Close() }

// OpenZip is zip.OpenReader for a regular file: a named pipe or a device
// named as a zip is refused (regular.Open), not waited on or read without
// end.
func OpenZip(path string) (ZipFile, error) {
	f, err := regular.Open(path)
	if err != nil {
		return ZipFile{}, err
	}
	fi, err := f.Stat()
	if err == nil {
		var r *zip.Reader
		if r, err = zip.NewReader(f, fi.Size()); err == nil {
			return ZipFile{r, f}, nil
		}
	}
	_ = f.Close() // read only
	return ZipFile{}, err
}

// DefaultMaxUnpacked caps how many uncompressed bytes hashing a zip reads, so
// a zip bomb ends with an error instead of hours of work. The largest real
// provider packages unpack to well under 1 GiB.
const DefaultMaxUnpacked int64 = 4 << 30

// ErrTooLarge is returned when a zip unpacks to more than the allowed size.
var ErrTooLarge = errors.New("zip unpacks to more than the allowed size")

// Options tune hashing.
type Options struct {
	// MaxUnpacked caps the total uncompressed bytes read from one zip;
	// zero means DefaultMaxUnpacked, negative means no cap.
	MaxUnpacked int64
	// AllHashes computes h1: for every archive, even where the evidence at
	// hand states zh: (--hashes all), for mirrors that want h1: listed for
	// every platform. Without it h1: is computed only where some evidence
	// needs it (NeedsH1).
	AllHashes bool
}

func (o Options) maxUnpacked() int64 {
	if o.MaxUnpacked == 0 {
		return DefaultMaxUnpacked
	}
	return o.MaxUnpacked
}

// ZipH1 computes the h1: hash of a zip file with exactly the semantics of
// dirhash.HashZip, which the clients use: every entry (directory entries
// included) under its raw name. It streams each entry; memory use does not
// grow with the zip. Deflate is read with klauspost/compress, which is faster
// than the standard library and gives the same bytes.
func ZipH1(path string, opts Options) (Hash, error) {
	real, err := filepath.EvalSymlinks(path)
	switch {
	case err == nil:
		path = real
	case !opensUnresolved(path):
		return "", err
	}
	z, err := OpenZip(path)
	if err != nil {
		return "", &ZipError{Path: path, Err: err}
	}
	defer func() { _ = z.Close() }() // read only
	z.RegisterDecompressor(zip.Deflate, func(r io.Reader) io.ReadCloser { return flate.NewReader(r) })

	files := make([]string, 0, len(z.File))
	byName := make(map[string]*zip.File, len(z.File))
	for _, f := range z.File {
		files = append(files, f.Name)
		byName[f.Name] = f
	}
	budget := &budget{left: opts.maxUnpacked(), unlimited: opts.maxUnpacked() < 0}
	open := func(name string) (io.ReadCloser, error) {
		f := byName[name]
		if f == nil {
			return nil, fmt.Errorf("file %q not found in zip", name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("zip entry %q: %w", name, err)
		}
		return budget.wrap(rc, name), nil
	}
	h, err := dirhash.Hash1(files, open)
	if err != nil {
		return "", &ZipError{Path: path, Err: err}
	}
	return Hash(h), nil
}

// CheckZip reads a zip's central directory, as ZipH1 would first: a
// file that is no zip fails without anything being inflated.
func CheckZip(path string) error {
	z, err := OpenZip(path)
	if err != nil {
		return &ZipError{Path: path, Err: err}
	}
	return z.Close()
}

// ZipError is a zip ZipH1 could not read through: Path is the file, Err
// what went wrong in it. Callers that hashed a copy (a staging file) name
// the original instead of Path.
type ZipError struct {
	Path string
	Err  error
}

func (e *ZipError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ZipError) Unwrap() error { return e.Err }

// DirH1 computes the h1: hash of an unpacked package directory, exactly as
// the clients do (symlinks resolved, then dirhash.HashDir with no prefix).
func DirH1(dir string) (Hash, error) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	files, err := dirhash.DirFiles(dir, "")
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	// dirhash.HashDir's own open would wait on a named pipe in the
	// directory; regular.Open refuses it.
	h, err := dirhash.Hash1(files, func(name string) (io.ReadCloser, error) {
		return regular.Open(filepath.Join(dir, filepath.FromSlash(name)))
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return Hash(h), nil
}

// opensUnresolved says whether path, which does not resolve to a name,
// opens all the same: an open file without a name (a deleted one, or one
// created with O_TMPFILE), through the link /proc/self/fd gives it.
func opensUnresolved(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// ZipZH computes the zh: hash of a file by streaming it.
func ZipZH(path string) (Hash, error) {
	f, err := regular.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	w := NewZipHasher()
	if _, err := io.Copy(w, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return w.Sum(), nil
}

// HashPath computes the sums of a zip file or an unpacked directory.
func HashPath(path string, opts Options) (Sums, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Sums{}, err
	}
	if fi.IsDir() {
		h1, err := DirH1(path)
		return Sums{H1: h1}, err
	}
	return HashZipSums(path, true, opts)
}

// HashZipSums computes a zip file's zh: and, with h1, its h1:, reading the
// file once: the entries are inflated as the bytes go by (Stream).
func HashZipSums(path string, h1 bool, opts Options) (Sums, error) {
	f, err := regular.Open(path)
	if err != nil {
		return Sums{}, err
	}
	defer func() { _ = f.Close() }() // read only
	s := NewStream(true, h1, opts)
	defer s.Close()
	buf := copyBuffers.get()
	_, err = io.CopyBuffer(s, struct{ io.Reader }{f}, *buf)
	copyBuffers.put(buf)
	if err != nil {
		return Sums{}, fmt.Errorf("%s: %w", path, err)
	}
	sums := Sums{ZH: s.ZipHash()}
	if !h1 {
		return sums, nil
	}
	if sums.H1, err = s.H1(path); err != nil {
		return Sums{ZH: sums.ZH}, err
	}
	return sums, nil
}

// ZipHasher computes a zh: hash of the bytes written to it, so a download
// can be hashed while it streams to disk.
type ZipHasher struct {
	h hash.Hash
	n int64
}

// NewZipHasher returns an empty ZipHasher.
func NewZipHasher() *ZipHasher { return &ZipHasher{h: sha256.New()} }

func (z *ZipHasher) Write(p []byte) (int, error) {
	z.n += int64(len(p))
	return z.h.Write(p)
}

// Sum returns the zh: hash of everything written so far.
func (z *ZipHasher) Sum() Hash { return ZipHashFromSHA256(z.h.Sum(nil)) }

// Size returns how many bytes were written.
func (z *ZipHasher) Size() int64 { return z.n }

type budget struct {
	left      int64
	unlimited bool
}

func (b *budget) wrap(rc io.ReadCloser, name string) io.ReadCloser {
	return &capped{rc: rc, b: b, name: name}
}

// capped counts an entry's bytes against the budget and names the entry in
// what goes wrong reading it (a corrupt deflate stream, a bad checksum).
type capped struct {
	rc   io.ReadCloser
	b    *budget
	name string
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	if !c.b.unlimited {
		c.b.left -= int64(n)
		if c.b.left < 0 {
			return n, fmt.Errorf("zip entry %q: %w", c.name, ErrTooLarge)
		}
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("zip entry %q: %w", c.name, err)
	}
	return n, err
}

func (c *capped) Close() error { return c.rc.Close() }
