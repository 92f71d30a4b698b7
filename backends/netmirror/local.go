package netmirror

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// A directory is served from its files. The documents are built from the
// archives on disk, so a directory without index.json files (or with stale
// ones) is served correctly. Hashes are computed on first request and cached
// by path, size and mtime. Where the directory's own <version>.json states
// hashes for a zip, those are served too; if they contradict the zip, only
// they are served, so that clients refuse the archive instead of the server
// vouching for it. Zips are stat'ed on every request.
//
// Only files the mirror's scan found are served, and only if they resolve
// inside the mirror directory: request paths never reach the filesystem.
// Unpacked packages are not served (the protocol serves zips, and zipping a
// directory again would not reproduce the original release's hashes).

// localPlace is a place whose archives are files of one directory: a
// filesystem mirror.
type localPlace interface {
	backends.Lister
	backends.LocalPather
	Dir() string
}

// localDir is the directory a Handler serves files from.
type localDir struct {
	m    localPlace
	root string // the mirror directory, symlinks resolved
}

// newLocalDir returns r's directory, or nil when r is not a directory.
func newLocalDir(r backends.Reader) *localDir {
	m, ok := r.(localPlace)
	if !ok {
		return nil
	}
	root := m.Dir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return &localDir{m: m, root: root}
}

type sumKey struct {
	path  string
	size  int64
	mtime time.Time
}

// packed returns p's zips that may be served, newest version first.
func (h *Handler) packed(ctx context.Context, p backends.Provider) ([]backends.Archive, error) {
	l := h.cached(ctx, "packed\x00"+p.String(), func(ctx context.Context) listing {
		all, err := h.dir.m.AllArchives(ctx, p)
		var out []backends.Archive
		for _, a := range all {
			if a.Layout == backends.Packed && h.inside(h.dir.m.LocalPath(a)) {
				out = append(out, a)
			}
		}
		return listing{as: out, err: err}
	})
	return l.as, l.err
}

// localHashes returns what the served document states for a zip: its
// computed sums, together with the directory's own stated hashes where they
// agree; only the stated ones where they do not.
func (h *Handler) localHashes(ctx context.Context, a backends.Archive) ([]hashing.Hash, error) {
	sums, err := h.sumsOf(ctx, h.dir.m.LocalPath(a), h.opts.WantH1("", a.Evidence...))
	if err != nil {
		return nil, err
	}
	res := hashing.Verify(sums, a.Evidence...)
	if !res.OK() {
		h.logf("warning: %s: the zip does not match the mirror's own index (%v); serving the index's hashes so clients refuse it", a.Package, res.Err())
		return a.Hashes(), nil
	}
	return hashing.SortUnique(append(a.Hashes(), sums.List()...)), nil
}

// sumsOf computes a zip's zh: and, with h1 (the directory's index states
// one to check, or --hashes all), its h1:, once per version of the file.
func (h *Handler) sumsOf(ctx context.Context, file string, h1 bool) (hashing.Sums, error) {
	info, err := os.Stat(file)
	if err != nil {
		return hashing.Sums{}, err
	}
	key := sumKey{path: file, size: info.Size(), mtime: info.ModTime()}
	h.mu.Lock()
	s, ok := h.sums[key]
	h.mu.Unlock()
	if ok && (s.H1 != "" || !h1) {
		return s, nil
	}
	// Concurrent first requests for one zip share one computation.
	v, err, _ := h.flight.Do(fmt.Sprintf("%s\x00%d\x00%d\x00%v", key.path, key.size, key.mtime.UnixNano(), h1), func() (any, error) {
		return hashing.HashZipSums(file, h1, h.opts)
	})
	if err != nil {
		return hashing.Sums{}, err
	}
	s = v.(hashing.Sums)
	h.mu.Lock()
	h.sums[key] = s
	h.mu.Unlock()
	return s, nil
}

// serveFile serves a directory's zip as it is on disk (ranges included).
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, a backends.Archive, file string) {
	// The listing may be a moment old: check the file itself again.
	local := h.dir.m.LocalPath(a)
	if !h.inside(local) {
		notFound(w)
		return
	}
	f, err := regular.Open(local)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer func() { _ = f.Close() }() // read only
	info, err := f.Stat()
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	if r.Method == http.MethodHead || r.Header.Get("Range") != "" {
		// No bytes, or a part: nothing to check it against; the client
		// checks the whole it assembles.
		http.ServeContent(w, r, file, info.ModTime(), f)
		return
	}
	// The whole zip is held to the sums its document lists, for the file
	// as it was when opened: one rewritten in place while it streams is
	// cut short, never delivered whole.
	sums, err := h.openedSums(r.Context(), local, info)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Last-Modified", info.ModTime().UTC().Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size(), 10))
	cw := &countingWriter{w: w}
	_, err = h.streamSums(cw, f, info.Size(), false, "", func(s hashing.Sums) error {
		if s.ZH != sums.ZH {
			return fmt.Errorf("the file changed while it was sent (%s, not the %s its document lists): %w", s.ZH, sums.ZH, hashing.ErrHashMismatch)
		}
		return nil
	})
	h.endStream(r.Context(), w, a, cw.n, err)
}

// openedSums returns the sums of a zip as it was when opened (info): the
// cached ones for its size and mtime, computed from the path where none are.
func (h *Handler) openedSums(ctx context.Context, file string, info os.FileInfo) (hashing.Sums, error) {
	h.mu.Lock()
	s, ok := h.sums[sumKey{path: file, size: info.Size(), mtime: info.ModTime()}]
	h.mu.Unlock()
	if ok {
		return s, nil
	}
	return h.sumsOf(ctx, file, false)
}

// inside reports whether file, symlinks resolved, is a regular file within
// the mirror directory. The clients follow symlinks at the archive level;
// a server must not follow one out of the directory it was asked to serve.
func (h *Handler) inside(file string) bool {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(h.dir.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		h.logf("warning: %s resolves outside the mirror directory; not serving it", file)
		return false
	}
	info, err := os.Stat(real)
	return err == nil && info.Mode().IsRegular()
}
