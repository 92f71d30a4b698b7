package sync_test

// Network faults, end to end: real TLS servers (a network mirror, an origin
// registry, an OCI registry) misbehave in the ways real ones do, and a sync
// through the engine must end in a success or a clear error, within its own
// deadline, with nothing half-written in the destination.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/netmirror/httpget"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// fault answers a request in place of the real server when it returns true.
type fault func(w http.ResponseWriter, r *http.Request) bool

// faultyHandler puts a switchable fault in front of a real handler.
type faultyHandler struct {
	next  http.Handler
	mu    gosync.Mutex
	fault fault
	hits  map[string]int // requests by kind: "archive", "document"
}

func newFaultyHandler(next http.Handler) *faultyHandler {
	return &faultyHandler{next: next, hits: map[string]int{}}
}

// set switches f on (nil: off) and starts counting requests afresh.
func (h *faultyHandler) set(f fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fault = f
	h.hits = map[string]int{}
}

func (h *faultyHandler) count(kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[kind]
}

func (h *faultyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hits[requestKind(r)]++
	f := h.fault
	h.mu.Unlock()
	if f != nil && f(w, r) {
		return
	}
	h.next.ServeHTTP(w, r)
}

// requestKind tells archive downloads from metadata documents, for every
// protocol here: zips end in .zip, OCI blobs are under /blobs/.
func requestKind(r *http.Request) string {
	switch {
	case strings.HasSuffix(r.URL.Path, ".zip"), strings.Contains(r.URL.Path, "/blobs/sha256:"):
		return "archive"
	case strings.HasSuffix(r.URL.Path, ".json"), strings.Contains(r.URL.Path, "/v1/providers/"):
		return "document"
	}
	return "other"
}

func isArchive(r *http.Request) bool  { return requestKind(r) == "archive" }
func isDocument(r *http.Request) bool { return requestKind(r) == "document" }

// only applies f to the requests match accepts.
func only(match func(*http.Request) bool, f fault) fault {
	return func(w http.ResponseWriter, r *http.Request) bool { return match(r) && f(w, r) }
}

// firstN applies f to the first n requests that match, then lets the rest
// through: a burst.
func firstN(n int, match func(*http.Request) bool, f fault) fault {
	var mu gosync.Mutex
	left := n
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !match(r) {
			return false
		}
		mu.Lock()
		hit := left > 0
		left--
		mu.Unlock()
		return hit && f(w, r)
	}
}

func status(code int) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "injected fault", code)
		return true
	}
}

// serveReal runs the real handler into a buffer, so a fault can send its
// answer wrongly.
func serveReal(next http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	return rec
}

// resetMidBody sends the status, headers and half the real body, then
// resets the TCP connection (RST, not a clean close).
func resetMidBody(next http.Handler) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		rec := serveReal(next, r)
		body := rec.Body.Bytes()
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", rec.Header().Get("Content-Type"), len(body))
		buf.Write(body[:len(body)/2])
		buf.Flush()
		if tc, ok := conn.(*tls.Conn); ok {
			if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
				tcp.SetLinger(0) // close with RST
			}
		}
		conn.Close()
		return true
	}
}

// truncated states a Content-Length larger than the body it sends.
func truncated(next http.Handler, extra int) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		rec := serveReal(next, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", fmt.Sprint(rec.Body.Len()+extra))
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return true
	}
}

// trickle sends the headers and then one byte a second, for as long as the
// client listens (a slow loris).
func trickle(next http.Handler) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		rec := serveReal(next, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.(http.Flusher).Flush()
		for _, b := range rec.Body.Bytes() {
			select {
			case <-r.Context().Done():
				return true
			case <-time.After(time.Second):
			}
			w.Write([]byte{b})
			w.(http.Flusher).Flush()
		}
		return true
	}
}

// silent never answers: no status line, no headers.
func silent(w http.ResponseWriter, r *http.Request) bool {
	<-r.Context().Done()
	return true
}

// redirectLoop sends every request back to itself.
func redirectLoop(w http.ResponseWriter, r *http.Request) bool {
	http.Redirect(w, r, r.URL.String(), http.StatusFound)
	return true
}

// hugeJSON streams a syntactically endless JSON document of size bytes,
// generated on the fly so the server holds none of it.
func hugeJSON(size int64) fault {
	return func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		io.WriteString(w, `{"versions":{`)
		for sent := int64(len(`{"versions":{`)); sent < size; {
			n := min(int64(len(chunk)), size-sent)
			if _, err := w.Write(chunk[:n]); err != nil {
				return true // the client hung up, as it should
			}
			sent += n
		}
		return true
	}
}

// faultWorld is a small filesystem mirror (one provider, one version, two
// platforms, with index documents) and an empty destination.
type faultWorld struct {
	src    *fs.Mirror
	dstDir string
	dst    *fs.Mirror
	seeds  []backendtest.Seed
}

func newFaultWorld(t *testing.T) *faultWorld {
	t.Helper()
	w := &faultWorld{dstDir: filepath.Join(t.TempDir(), "dst")}
	srcDir := t.TempDir()
	w.seeds = backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	backendtest.WritePacked(t, srcDir, w.seeds)
	var err error
	if w.src, err = fs.Open(srcDir, srcDir, fs.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := w.src.Flush(context.Background(), w.seeds[0].Package.Provider); err != nil {
		t.Fatal(err)
	}
	if w.dst, err = fs.Open(w.dstDir, w.dstDir, fs.Options{Create: true}); err != nil {
		t.Fatal(err)
	}
	return w
}

// faultOpts are engine options for fault tests: a few quick retries.
var faultOpts = sync.Options{Jobs: 2, Attempts: 3, Backoff: 10 * time.Millisecond}

// syncResult is how one sync under faults ended.
type syncResult struct {
	planErr error
	plan    *sync.Plan
	tr      *sync.Tracker
	elapsed time.Duration
}

// failed returns the first failure's message, or "".
func (r syncResult) failure() string {
	if r.planErr != nil {
		return r.planErr.Error()
	}
	if f := r.tr.Failures(); len(f) > 0 {
		return f[0].Err.Error()
	}
	return ""
}

// syncUnder plans and runs a sync with a deadline of its own: a hang fails
// the test instead of the suite timing out.
func syncUnder(t *testing.T, deadline time.Duration, src backends.Reader, dst backends.Writer, sel sync.Selection, opts sync.Options) syncResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	res := syncResult{tr: sync.NewTracker()}
	res.plan, res.planErr = sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{})
	if res.planErr == nil {
		eng := sync.NewEngine(ctx, opts)
		for _, it := range res.plan.Items {
			if it.Status == sync.StatusMissing {
				eng.Enqueue(sync.JobSpec{Src: src, Dst: dst, Archive: it.Archive})
			}
		}
		eng.Close()
		for ev := range eng.Events() {
			res.tr.Apply(ev)
		}
	}
	res.elapsed = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("the sync did not end within %s (a hang): plan error %v, jobs %v", deadline, res.planErr, res.tr.Counts())
	}
	return res
}

// assertNothingLanded checks that a failed sync left the destination
// without archives and without temp files.
func assertNothingLanded(t *testing.T, dst *fs.Mirror, dir string, pkgs ...backends.Package) {
	t.Helper()
	assertNoTempFiles(t, dir)
	for _, p := range pkgs {
		as, err := dst.Archives(context.Background(), p.Provider, p.Version)
		if err != nil && !errors.Is(err, backends.ErrNotFound) {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.Platform == p.Platform {
				t.Errorf("%s landed in the destination after a failed sync", p)
			}
		}
	}
}

func seedPackages(seeds []backendtest.Seed) []backends.Package {
	out := make([]backends.Package, len(seeds))
	for i, s := range seeds {
		out[i] = s.Package
	}
	return out
}

// faultCase is one misbehaviour and how the sync must end.
type faultCase struct {
	name  string
	fault func(next http.Handler) fault
	// want is "" for success, else text the first failure must contain.
	want []string
	// within bounds the whole sync (retries included).
	within time.Duration
	// check, when set, looks at the server afterwards.
	check func(t *testing.T, h *faultyHandler)
}

// runFaultCase syncs src into a fresh destination with the fault on, and
// checks the ending.
func runFaultCase(t *testing.T, tc faultCase, w *faultWorld, h *faultyHandler, src backends.Reader, sel sync.Selection) {
	t.Helper()
	h.set(tc.fault(h.next))
	defer h.set(nil)
	dstDir := filepath.Join(t.TempDir(), "dst")
	dst, err := fs.Open(dstDir, dstDir, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	res := syncUnder(t, 30*time.Second, src, dst, sel, faultOpts)
	msg := res.failure()
	t.Logf("%s: ended in %s: %q", tc.name, res.elapsed.Round(time.Millisecond), msg)
	if tc.within > 0 && res.elapsed > tc.within {
		t.Errorf("took %s, want at most %s", res.elapsed, tc.within)
	}
	if tc.check != nil {
		tc.check(t, h)
	}
	if len(tc.want) == 0 {
		if msg != "" {
			t.Fatalf("want success, got %s", msg)
		}
		if res.tr.Counts()[sync.Done] != len(w.seeds) {
			t.Fatalf("done %v, want %d jobs done", res.tr.Counts(), len(w.seeds))
		}
		assertClean(t, dst)
		assertNoTempFiles(t, dstDir)
		return
	}
	if msg == "" {
		t.Fatalf("want a failure containing %q, the sync succeeded", tc.want)
	}
	for _, want := range tc.want {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q lacks %q", msg, want)
		}
	}
	assertNothingLanded(t, dst, dstDir, seedPackages(w.seeds)...)
}

// netMirrorUnderFaults serves w.src as a network mirror behind a fault
// switch, read with short timeouts.
func netMirrorUnderFaults(t *testing.T, w *faultWorld, timeout time.Duration, maxDoc int64) (*faultyHandler, *netmirror.Mirror, string) {
	t.Helper()
	h := newFaultyHandler(netmirror.NewHandler(w.src, log.New(io.Discard, "", 0), hashing.Options{}))
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // hijacked and reset connections are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	m, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpget.Client{
		HTTP: srv.Client(), Timeout: timeout, MaxDocument: maxDoc, RetryBackoff: 10 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return h, m, srv.URL
}

func TestNetMirrorFaults(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t)
	const timeout = 300 * time.Millisecond
	h, src, url := netMirrorUnderFaults(t, w, timeout, 0)
	sel := mustSelection(t, []string{"example.com/acme/alpha"}, "")
	archiveHits := func(want int) func(t *testing.T, h *faultyHandler) {
		return func(t *testing.T, h *faultyHandler) {
			if got := h.count("archive"); got != want {
				t.Errorf("%d archive requests, want %d", got, want)
			}
		}
	}
	cases := []faultCase{
		{name: "archive 503 burst", fault: func(http.Handler) fault { return firstN(2, isArchive, status(503)) }},
		{name: "metadata 503 burst", fault: func(http.Handler) fault { return firstN(2, isDocument, status(503)) }},
		{name: "archive permanent 500", fault: func(http.Handler) fault { return only(isArchive, status(500)) },
			want:  []string{"example.com/acme/alpha 1.0.0", url, "HTTP 500 Internal Server Error"},
			check: archiveHits(2 * faultOpts.Attempts)},
		{name: "metadata permanent 500", fault: func(http.Handler) fault { return only(isDocument, status(500)) },
			want: []string{"mirror " + url + "/", "index.json", "HTTP 500 Internal Server Error", "3 attempts"}},
		{name: "archive 404 is not retried", fault: func(http.Handler) fault { return only(isArchive, status(404)) },
			want: []string{"HTTP 404 Not Found"}, check: archiveHits(2)},
		{name: "connection reset mid-body once", fault: func(next http.Handler) fault { return firstN(1, isArchive, resetMidBody(next)) }},
		{name: "connection reset mid-body always", fault: func(next http.Handler) fault { return only(isArchive, resetMidBody(next)) },
			want: []string{"example.com/acme/alpha 1.0.0", "the connection broke after"}, check: archiveHits(2 * faultOpts.Attempts)},
		{name: "truncated archive once", fault: func(next http.Handler) fault { return firstN(1, isArchive, truncated(next, 1000)) }},
		{name: "truncated archive always", fault: func(next http.Handler) fault { return only(isArchive, truncated(next, 1000)) },
			want: []string{"example.com/acme/alpha 1.0.0", "the connection broke after"}},
		{name: "truncated document", fault: func(next http.Handler) fault { return only(isDocument, truncated(next, 1000)) },
			want: []string{"index.json", "unexpected EOF"}},
		{name: "slow loris archive", fault: func(next http.Handler) fault { return only(isArchive, trickle(next)) },
			want: []string{"no data for 300ms"}, within: 5 * time.Second},
		{name: "slow loris document", fault: func(next http.Handler) fault { return only(isDocument, trickle(next)) },
			want: []string{"index.json", "within 300ms"}, within: 5 * time.Second},
		{name: "no headers for an archive", fault: func(http.Handler) fault { return only(isArchive, silent) },
			want: []string{"no answer within 300ms"}, within: 5 * time.Second},
		{name: "no headers for a document", fault: func(http.Handler) fault { return only(isDocument, silent) },
			want: []string{"index.json", "no answer within 300ms"}, within: 5 * time.Second},
		{name: "archive redirect loop", fault: func(http.Handler) fault { return only(isArchive, redirectLoop) },
			want: []string{"more than 5 redirects"}, check: archiveHits(2 * (1 + httpget.DefaultMaxRedirects))},
		{name: "document redirect loop", fault: func(http.Handler) fault { return only(isDocument, redirectLoop) },
			want: []string{"index.json", "more than 5 redirects"}},
		{name: "archive shorter than stated", fault: func(next http.Handler) fault {
			return only(isArchive, func(w http.ResponseWriter, r *http.Request) bool {
				rec := serveReal(next, r)
				w.Header().Set("Content-Length", fmt.Sprint(rec.Body.Len()-10))
				w.Write(rec.Body.Bytes()[:rec.Body.Len()-10])
				return true
			})
		}, want: []string{"example.com/acme/alpha 1.0.0", "not a usable zip"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runFaultCase(t, tc, w, h, src, sel) })
	}
}

// A 100 MB index.json is refused at the document cap, reading no more than
// the cap, and memory stays bounded.
func TestNetMirrorHugeDocument(t *testing.T) {
	w := newFaultWorld(t)
	h, src, _ := netMirrorUnderFaults(t, w, 10*time.Second, 0)
	h.set(only(isDocument, hugeJSON(100<<20)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := syncUnder(t, 30*time.Second, src, w.dst, mustSelection(t, []string{"example.com/acme/alpha"}, ""), faultOpts)
	runtime.ReadMemStats(&after)
	msg := res.failure()
	if !strings.Contains(msg, fmt.Sprintf("document larger than %d bytes; refusing it", httpget.DefaultMaxDocument)) {
		t.Fatalf("100 MB index.json: %q", msg)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused in %s, %d MiB allocated in all", res.elapsed.Round(time.Millisecond), alloc>>20)
	if alloc > 40<<20 {
		t.Errorf("%d MiB allocated reading a document capped at %d MiB", alloc>>20, httpget.DefaultMaxDocument>>20)
	}
	if h.count("document") != 1 {
		t.Errorf("%d document requests: a refused document is not worth retrying", h.count("document"))
	}
	assertNoTempFiles(t, w.dstDir)
}
