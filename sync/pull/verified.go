package pull

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// A zip this process landed in a directory CACHE, or read whole from it
// once, is known by its zh: for as long as the file stays the same file
// (fileID: device, inode, size, modification and change times). Serving it
// again, the stream states that zh: (backends.HashingReader) once it has
// sent exactly the file's bytes and the file is still the same, instead
// of the server hashing every byte of every download again: a third of
// its CPU on the warm path. A file changed in place changes its ID, and is
// hashed again as it streams; the clients check every download against
// the hashes listed either way.

// fileID identifies one version of a file.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime time.Time
}

// openLocal opens a cached zip from its file, where CACHE has files,
// vouching for its zh: where this process knows it. ok is false where
// CACHE is no directory.
func (m *Mirror) openLocal(a backends.Archive) (rc io.ReadCloser, ok bool, err error) {
	lp, isLocal := m.opts.Cache.(backends.LocalPather)
	if !isLocal {
		return nil, false, nil
	}
	f, err := regular.Open(lp.LocalPath(a)) // a pipe is refused, not waited on
	if err != nil {
		return nil, false, nil // let CACHE's own Open say why
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		_ = f.Close() // refused before any read
		return nil, false, nil
	}
	id := idOf(info)
	m.mu.Lock()
	zh := m.verified[id]
	m.mu.Unlock()
	return &cachedFile{f: f, m: m, id: id, zh: zh, h: hashing.NewZipHasher()}, true, nil
}

// cachedFile is a cached zip's stream: a backends.HashingReader whose zh:
// is the one known for the file, or computed as it is read.
type cachedFile struct {
	f    *os.File
	m    *Mirror
	id   fileID
	zh   hashing.Hash // known; "" while it is computed
	h    *hashing.ZipHasher
	n    int64
	done hashing.Hash
}

var _ backends.HashingReader = (*cachedFile)(nil)

func (c *cachedFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n += int64(n)
	if c.zh == "" {
		c.h.Write(p[:n])
	}
	if err == io.EOF {
		c.end()
	}
	return n, err
}

// end decides the stream's zh: at its end, when the file is still the one
// opened and every byte of it was read.
func (c *cachedFile) end() {
	info, err := c.f.Stat()
	if err != nil || idOf(info) != c.id || c.n != c.id.size {
		return
	}
	if c.zh != "" {
		c.done = c.zh
		return
	}
	c.done = c.h.Sum()
	c.m.mu.Lock()
	c.m.verified[c.id] = c.done
	c.m.mu.Unlock()
}

// ZipHash implements backends.HashingReader.
func (c *cachedFile) ZipHash() (hashing.Hash, bool) { return c.done, c.done != "" }

func (c *cachedFile) Close() error { return c.f.Close() }

// landedFile records the zh: of a zip this process just landed in a
// directory CACHE.
func (m *Mirror) landedFile(ctx context.Context, pkg backends.Package, zh hashing.Hash) {
	lp, ok := m.opts.Cache.(backends.LocalPather)
	if !ok || zh == "" {
		return
	}
	as, err := m.opts.Cache.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		return
	}
	for _, a := range as {
		if a.Platform != pkg.Platform || a.Layout != backends.Packed {
			continue
		}
		if info, err := os.Stat(lp.LocalPath(a)); err == nil && info.Mode().IsRegular() {
			m.mu.Lock()
			m.verified[idOf(info)] = zh
			m.mu.Unlock()
		}
	}
}
