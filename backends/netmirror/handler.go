package netmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/idna"
	"golang.org/x/sync/singleflight"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

// Handler serves a filesystem mirror as a network mirror:
//
//	/HOST/NS/TYPE/index.json       the versions with at least one zip
//	/HOST/NS/TYPE/VERSION.json     each platform's zip: relative url, hashes
//	/HOST/NS/TYPE/<zip file name>  the zip itself
//
// The documents are built from the archives on disk, so a directory without
// index.json files (or with stale ones) is served correctly. Hashes are
// computed on first request and cached by path, size and mtime. Where the
// directory's own <version>.json states hashes for a zip, those are served
// too; if they contradict the zip, only they are served, so that clients
// refuse the archive instead of the server vouching for it.
//
// A provider's listing is cached for ListingTTL, so the burst of requests
// one client makes (index.json, then every version document at once) costs
// one scan of its directory; zips are stat'ed on every request regardless.
//
// Only files the mirror's scan found are served, and only if they resolve
// inside the mirror directory: request paths never reach the filesystem.
// Unpacked packages are not served (the protocol serves zips, and zipping a
// directory again would not reproduce the original release's hashes).
type Handler struct {
	m      *fs.Mirror
	root   string // the mirror directory, symlinks resolved
	logger *log.Logger
	opts   hashing.Options

	mu       sync.Mutex
	sums     map[sumKey]hashing.Sums
	listings map[backends.Provider]listing
	flight   singleflight.Group
}

// ListingTTL is how long a provider's listing is reused.
const ListingTTL = 2 * time.Second

type listing struct {
	at  time.Time
	as  []backends.Archive // servable zips, newest version first
	err error
}

type sumKey struct {
	path  string
	size  int64
	mtime time.Time
}

// NewHandler serves m. logger receives one line per request; nil discards
// them. opts bound the work of hashing a zip.
func NewHandler(m *fs.Mirror, logger *log.Logger, opts hashing.Options) *Handler {
	root := m.Dir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return &Handler{m: m, root: root, logger: logger, opts: opts, sums: map[sumKey]hashing.Sums{}, listings: map[backends.Provider]listing{}}
}

// ServeHTTP answers GET and HEAD for the protocol's paths and 404 for
// anything else.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	lw := &logWriter{ResponseWriter: w, status: http.StatusOK}
	h.serve(lw, r)
	if h.logger != nil {
		h.logger.Printf("%s %s %d %d %s", r.Method, r.URL.EscapedPath(), lw.status, lw.bytes, time.Since(start).Round(time.Microsecond))
	}
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p, file, ok := parsePath(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	ctx := r.Context()
	switch {
	case file == "index.json":
		h.serveIndex(ctx, w, p)
	case strings.HasSuffix(file, ".json"):
		v, err := backends.ParseVersion(strings.TrimSuffix(file, ".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h.serveVersion(ctx, w, p, v)
	default:
		h.serveArchive(ctx, w, r, p, file)
	}
}

// parsePath splits /HOST/NS/TYPE/FILE. The host arrives in its ASCII form;
// the provider model wants it checked from its Unicode form.
func parsePath(p string) (backends.Provider, string, bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) != 4 || !strings.HasPrefix(p, "/") {
		return backends.Provider{}, "", false
	}
	for _, s := range parts {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\\\x00") {
			return backends.Provider{}, "", false
		}
	}
	host := parts[0]
	if u, err := idna.Lookup.ToUnicode(host); err == nil {
		host = u
	}
	prov, err := backends.NewProvider(host, parts[1], parts[2])
	if err != nil {
		return backends.Provider{}, "", false
	}
	return prov, parts[3], true
}

// packed returns p's zips that may be served, newest version first.
func (h *Handler) packed(ctx context.Context, p backends.Provider) ([]backends.Archive, error) {
	h.mu.Lock()
	l, ok := h.listings[p]
	h.mu.Unlock()
	if ok && time.Since(l.at) < ListingTTL {
		return l.as, l.err
	}
	v, _, _ := h.flight.Do("list\x00"+p.String(), func() (any, error) {
		// Scan under a context of its own: the request that started it may
		// go away while others wait for the result.
		all, err := h.m.AllArchives(context.WithoutCancel(ctx), p)
		var out []backends.Archive
		for _, a := range all {
			if a.Layout == backends.Packed && h.inside(a.Location) {
				out = append(out, a)
			}
		}
		l := listing{at: time.Now(), as: out, err: err}
		h.mu.Lock()
		h.listings[p] = l
		h.mu.Unlock()
		return l, nil
	})
	l = v.(listing)
	return l.as, l.err
}

// archivesAt returns p's servable zips at exactly version v.
func (h *Handler) archivesAt(ctx context.Context, p backends.Provider, v string) ([]backends.Archive, error) {
	all, err := h.packed(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []backends.Archive
	for _, a := range all {
		if a.Version.String() == v {
			out = append(out, a)
		}
	}
	return out, nil
}

func (h *Handler) serveIndex(ctx context.Context, w http.ResponseWriter, p backends.Provider) {
	as, err := h.packed(ctx, p)
	if err != nil {
		h.fail(w, err)
		return
	}
	if len(as) == 0 {
		notFound(w)
		return
	}
	doc := struct {
		Versions map[string]struct{} `json:"versions"`
	}{Versions: map[string]struct{}{}}
	for _, a := range as {
		doc.Versions[a.Version.String()] = struct{}{}
	}
	writeJSON(w, doc)
}

type archiveEntry struct {
	Hashes []hashing.Hash `json:"hashes"`
	URL    string         `json:"url"`
}

func (h *Handler) serveVersion(ctx context.Context, w http.ResponseWriter, p backends.Provider, v backends.Version) {
	as, err := h.archivesAt(ctx, p, v.String())
	if err != nil {
		h.fail(w, err)
		return
	}
	doc := struct {
		Archives map[string]archiveEntry `json:"archives"`
	}{Archives: map[string]archiveEntry{}}
	for _, a := range as {
		hs, err := h.hashes(ctx, a)
		if err != nil {
			h.logf("%s: %v", a.Package, err)
			continue
		}
		doc.Archives[a.Platform.String()] = archiveEntry{Hashes: hs, URL: filepath.Base(a.Location)}
	}
	if len(doc.Archives) == 0 {
		notFound(w)
		return
	}
	writeJSON(w, doc)
}

// hashes returns what the served document states for a zip: its computed
// sums, together with the directory's own stated hashes where they agree;
// only the stated ones where they do not.
func (h *Handler) hashes(ctx context.Context, a backends.Archive) ([]hashing.Hash, error) {
	sums, err := h.sumsOf(ctx, a.Location)
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

func (h *Handler) sumsOf(ctx context.Context, file string) (hashing.Sums, error) {
	info, err := os.Stat(file)
	if err != nil {
		return hashing.Sums{}, err
	}
	key := sumKey{path: file, size: info.Size(), mtime: info.ModTime()}
	h.mu.Lock()
	s, ok := h.sums[key]
	h.mu.Unlock()
	if ok {
		return s, nil
	}
	// Concurrent first requests for one zip share one computation.
	v, err, _ := h.flight.Do(fmt.Sprintf("%s\x00%d\x00%d", key.path, key.size, key.mtime.UnixNano()), func() (any, error) {
		return hashing.HashPath(file, h.opts)
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

func (h *Handler) serveArchive(ctx context.Context, w http.ResponseWriter, r *http.Request, p backends.Provider, file string) {
	pkg, err := fs.ParsePackedName(p, file)
	if err != nil {
		notFound(w)
		return
	}
	as, err := h.archivesAt(ctx, p, pkg.Version.String())
	if err != nil {
		h.fail(w, err)
		return
	}
	for _, a := range as {
		// The listing may be a moment old: check the file itself again.
		if filepath.Base(a.Location) != file || !h.inside(a.Location) {
			continue
		}
		f, err := os.Open(a.Location)
		if err != nil {
			h.fail(w, err)
			return
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			h.fail(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/zip")
		http.ServeContent(w, r, file, info.ModTime(), f)
		return
	}
	notFound(w)
}

// inside reports whether file, symlinks resolved, is a regular file within
// the mirror directory. The clients follow symlinks at the archive level;
// a server must not follow one out of the directory it was asked to serve.
func (h *Handler) inside(file string) bool {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(h.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		h.logf("warning: %s resolves outside the mirror directory; not serving it", file)
		return false
	}
	info, err := os.Stat(real)
	return err == nil && info.Mode().IsRegular()
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	if errors.Is(err, backends.ErrNotFound) {
		notFound(w)
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	h.logf("error: %v", err)
	http.Error(w, "internal error (see the server's log)", http.StatusInternalServerError)
}

func (h *Handler) logf(format string, args ...any) {
	if h.logger != nil {
		h.logger.Printf(format, args...)
	}
}

func notFound(w http.ResponseWriter) {
	http.Error(w, "404 page not found", http.StatusNotFound)
}

// writeJSON writes v as `providers mirror` writes its documents: two-space
// indentation, sorted keys.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.Write(b)
}

// logWriter records the status and size of a response for the log line.
type logWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (l *logWriter) WriteHeader(code int) {
	if !l.wrote {
		l.status, l.wrote = code, true
	}
	l.ResponseWriter.WriteHeader(code)
}

func (l *logWriter) Write(b []byte) (int, error) {
	l.wrote = true
	n, err := l.ResponseWriter.Write(b)
	l.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (l *logWriter) Unwrap() http.ResponseWriter { return l.ResponseWriter }
