package netmirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/idna"
	"golang.org/x/sync/singleflight"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/ttlcache"
	"github.com/tfmirror/tfmirror/backends/zipname"
	"github.com/tfmirror/tfmirror/hashing"
)

// Handler serves any readable place as a network mirror:
//
//	/HOST/NS/TYPE/index.json       the versions with at least one zip
//	/HOST/NS/TYPE/VERSION.json     each platform's zip: relative url, hashes
//	/HOST/NS/TYPE/<zip file name>  the zip itself
//
// A directory is served from its files (see local.go): documents built from
// the zips on disk, hashes computed on first request.
//
// Any other place (a bucket, an OCI mirror, a network mirror, an origin
// registry) is served through its Reader (see stream.go): index.json from
// Versions, VERSION.json from Archives with every hash the place states for
// each zip (hashes computed once where it states none), and the zips
// streamed from Open, checked on the way against exactly the hashes served:
// a zip that disagrees is cut short, never delivered whole.
//
// A provider's listing is cached for ListingTTL, so the burst of requests
// one client makes (index.json, then version documents, then zips) costs
// one listing.
type Handler struct {
	// Stall is how long a client may take to accept each piece of a
	// response (and the whole of one with nothing to write) before the
	// response is given up; zero means DefaultStall. A client that stops
	// reading then holds no goroutine, file or place reader, while one
	// that keeps reading takes as long as it needs. Set it before serving.
	Stall time.Duration
	// Access, when set, receives each request's line instead of the
	// logger (the server's own troubles still go to the logger): the seam
	// for other formats of the access log (JSON lines). Set it before
	// serving.
	Access func(Access)
	// Redirect, when above zero, answers a request for a zip the place
	// can presign (backends.Presigner: a bucket, or a pull-through mirror
	// whose CACHE is one, for the zips CACHE holds) with a redirect to a
	// URL of the place valid that long. Set it before serving.
	Redirect time.Duration

	r      backends.Reader
	dir    *localDir // set when the place is a directory
	logger *log.Logger
	opts   hashing.Options

	mu       sync.Mutex
	sums     map[sumKey]hashing.Sums       // a directory's zips
	computed map[string]hashing.Sums       // zips of places that state no hashes, by location and size
	h1s      map[hashing.Hash]hashing.Hash // the h1: of zips streamed whole, by their zh:
	listings ttlcache.Cache[listing]
	flight   singleflight.Group
}

// Access is one request as the access log records it.
type Access struct {
	// Remote is the client's address (http.Request.RemoteAddr).
	Remote       string
	Method, Path string
	Status       int
	Bytes        int64
	Elapsed      time.Duration
	// Cut: the response was aborted part way (a zip that did not match,
	// or a source that failed while it streamed).
	Cut bool
	// Client names who made the request (backends.ClientOf), or "".
	Client string
}

// String is the access log's text line: METHOD PATH STATUS BYTES TIME.
func (a Access) String() string {
	cut := ""
	if a.Cut {
		cut = " (cut short)"
	}
	if a.Client != "" {
		cut += " client=" + a.Client
	}
	return fmt.Sprintf("%s %s %d %d %s%s", a.Method, a.Path, a.Status, a.Bytes, a.Elapsed.Round(time.Microsecond), cut)
}

// DefaultStall is a Handler's Stall unless set.
const DefaultStall = time.Minute

// ListingTTL is how long a provider's listing is reused.
const ListingTTL = 2 * time.Second

// listing is one cached answer of the place: versions or archives.
type listing struct {
	vs  []backends.Version // newest first
	as  []backends.Archive // servable zips, newest version first
	err error
}

// NewHandler serves r. logger receives one line per request; nil discards
// them. opts bound the work of hashing a zip.
func NewHandler(r backends.Reader, logger *log.Logger, opts hashing.Options) *Handler {
	return &Handler{r: r, dir: newLocalDir(r), logger: logger, opts: opts,
		sums: map[sumKey]hashing.Sums{}, computed: map[string]hashing.Sums{}, h1s: map[hashing.Hash]hashing.Hash{},
		listings: ttlcache.Cache[listing]{TTL: ListingTTL}}
}

// ServeHTTP answers GET and HEAD for the protocol's paths and 404 for
// anything else.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	lw := &logWriter{ResponseWriter: w, status: http.StatusOK, stall: h.stall()}
	lw.extend()
	defer func() {
		// Headers with no body (HEAD, an empty response) are written
		// after this returns, however long serving took.
		lw.extend()
		// A response cut short (http.ErrAbortHandler) is logged too.
		v := recover()
		a := Access{Remote: r.RemoteAddr, Method: r.Method, Path: r.URL.EscapedPath(), Status: lw.status, Bytes: lw.bytes, Elapsed: time.Since(start), Cut: v != nil, Client: backends.ClientOf(r.Context())}
		switch {
		case h.Access != nil:
			h.Access(a)
		case h.logger != nil:
			h.logger.Print(a.String())
		}
		if v != nil {
			panic(v)
		}
	}()
	h.serve(lw, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		// The server would wait for the body to arrive (to keep the
		// connection) however slowly it trickles in: refuse it, do not
		// wait for it past Stall, and close.
		// (A recorder has no deadline to set.)
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.stall()))
		w.Header().Set("Connection", "close")
		http.Error(w, "a network mirror's requests have no body", http.StatusBadRequest)
		return
	}
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

// cached returns list's answer for key, reusing one younger than
// ListingTTL; concurrent requests for one key share one call, made under a
// context of its own (the request that started it may go away while others
// wait for the result). A failed listing is an answer too, reused as long.
func (h *Handler) cached(ctx context.Context, key string, list func(context.Context) listing) listing {
	l, _, _ := h.listings.Get(ctx, key, func(ctx context.Context) (listing, error) { return list(ctx), nil })
	return l
}

// versions returns p's versions that have zips to serve, newest first.
func (h *Handler) versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	if h.dir != nil {
		as, err := h.packed(ctx, p)
		var vs []backends.Version
		seen := map[string]bool{}
		for _, a := range as {
			if !seen[a.Version.String()] {
				seen[a.Version.String()] = true
				vs = append(vs, a.Version)
			}
		}
		return vs, err
	}
	l := h.cached(ctx, "versions\x00"+p.String(), func(ctx context.Context) listing {
		vs, err := h.r.Versions(ctx, p)
		return listing{vs: vs, err: err}
	})
	return l.vs, l.err
}

// archivesAt returns p's zips at exactly version v.
func (h *Handler) archivesAt(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	if h.dir != nil {
		all, err := h.packed(ctx, p)
		if err != nil {
			return nil, err
		}
		var out []backends.Archive
		for _, a := range all {
			if a.Version.String() == v.String() {
				out = append(out, a)
			}
		}
		return out, nil
	}
	l := h.cached(ctx, "archives\x00"+p.String()+"\x00"+v.String(), func(ctx context.Context) listing {
		as, err := h.r.Archives(ctx, p, v)
		var out []backends.Archive
		for _, a := range as {
			if a.Layout == backends.Packed {
				out = append(out, a)
			}
		}
		return listing{as: out, err: err}
	})
	return l.as, l.err
}

func (h *Handler) serveIndex(ctx context.Context, w http.ResponseWriter, p backends.Provider) {
	vs, err := h.versions(ctx, p)
	if err != nil {
		h.fail(w, err)
		return
	}
	if len(vs) == 0 {
		notFound(w)
		return
	}
	doc := struct {
		Versions map[string]struct{} `json:"versions"`
	}{Versions: map[string]struct{}{}}
	for _, v := range vs {
		doc.Versions[v.String()] = struct{}{}
	}
	writeJSON(w, doc)
}

type archiveEntry struct {
	Hashes []hashing.Hash `json:"hashes"`
	URL    string         `json:"url"`
}

func (h *Handler) serveVersion(ctx context.Context, w http.ResponseWriter, p backends.Provider, v backends.Version) {
	as, err := h.archivesAt(ctx, p, v)
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
		doc.Archives[a.Platform.String()] = archiveEntry{Hashes: hs, URL: archiveName(a)}
	}
	if len(doc.Archives) == 0 {
		notFound(w)
		return
	}
	writeJSON(w, doc)
}

// hashes returns what the served document states for a zip.
func (h *Handler) hashes(ctx context.Context, a backends.Archive) ([]hashing.Hash, error) {
	if h.dir != nil {
		return h.localHashes(ctx, a)
	}
	ev, err := h.evidence(ctx, a)
	if err != nil {
		return nil, err
	}
	var hs []hashing.Hash
	for _, e := range ev {
		hs = append(hs, e.Hashes...)
	}
	return hashing.SortUnique(hs), nil
}

func (h *Handler) serveArchive(ctx context.Context, w http.ResponseWriter, r *http.Request, p backends.Provider, file string) {
	pkg, err := zipname.Parse(p, file)
	if err != nil {
		notFound(w)
		return
	}
	as, err := h.archivesAt(ctx, p, pkg.Version)
	if err != nil {
		h.fail(w, err)
		return
	}
	for _, a := range as {
		if a.Platform != pkg.Platform || archiveName(a) != file {
			continue
		}
		switch {
		case h.dir != nil:
			h.serveFile(w, r, a, file)
		case !h.redirect(ctx, w, a):
			h.serveStream(ctx, w, r, a)
		}
		return
	}
	notFound(w)
}

// archiveName is the name a zip is served under: its own file or object
// name where that is a release name of its package (a directory's file, a
// bucket's object), the standard release name otherwise (an OCI layer).
func archiveName(a backends.Archive) string {
	name := path.Base(filepath.ToSlash(a.Location))
	if pkg, err := zipname.Parse(a.Provider, name); err == nil && pkg.Key() == a.Package.Key() {
		return name
	}
	return a.Filename()
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
	status, body := answer(err, "500 internal error (the mirror's log has the details)")
	http.Error(w, body, status)
}

// PublicError is a failure that says how it is answered: a status and a
// short body a person can act on, naming nothing local (no path, no
// secret). A pull-through mirror's upstream failures are (502, 504).
type PublicError interface {
	HTTPStatus() int
	PublicMessage() string
}

// answer is the status and body a client gets for err: a PublicError's
// own, 504 for a place that did not answer in time, 502 for another
// failure of a place that may pass (a network place), otherwise 500 with
// fallback. The details go to the server's log only.
func answer(err error, fallback string) (int, string) {
	var pe PublicError
	var ne net.Error
	switch {
	case errors.As(err, &pe):
		return pe.HTTPStatus(), pe.PublicMessage()
	case errors.As(err, &ne) && ne.Timeout():
		return http.StatusGatewayTimeout, "504 timed out: the place this mirror serves did not answer in time; try again later (the mirror's log has the details)"
	case backends.IsTransient(err):
		return http.StatusBadGateway, "502 bad gateway: the place this mirror serves could not be read; try again later (the mirror's log has the details)"
	}
	return http.StatusInternalServerError, fallback
}

func (h *Handler) stall() time.Duration {
	if h.Stall > 0 {
		return h.Stall
	}
	return DefaultStall
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
	_, _ = w.Write(b) // a client gone: no one left to tell
}

// logWriter records the status and size of a response for the log line,
// and gives the client stall to accept each write.
type logWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
	stall  time.Duration
	rc     *http.ResponseController
}

// extend moves the connection's write deadline to stall from now (where
// the writer has one: not a recorder in tests).
func (l *logWriter) extend() {
	if l.rc == nil {
		l.rc = http.NewResponseController(l.ResponseWriter)
	}
	_ = l.rc.SetWriteDeadline(time.Now().Add(l.stall))
}

func (l *logWriter) WriteHeader(code int) {
	if !l.wrote {
		l.status, l.wrote = code, true
	}
	l.ResponseWriter.WriteHeader(code)
}

func (l *logWriter) Write(b []byte) (int, error) {
	l.wrote = true
	l.extend()
	n, err := l.ResponseWriter.Write(b)
	l.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (l *logWriter) Unwrap() http.ResponseWriter { return l.ResponseWriter }
