package sync_test

// Network faults, end to end: real TLS servers (a network mirror, an origin
// registry, an OCI registry) misbehave in the ways real ones do, and a sync
// through the engine must end in a success or a clear error, within its own
// deadline, with nothing half-written in the destination.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
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
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// fault answers a request in place of the real handler, next, when it
// returns true; it may use next to get the real answer and send it wrongly.
type fault func(w http.ResponseWriter, r *http.Request, next http.Handler) bool

// faultSwitch puts a switchable fault in front of real handlers.
type faultSwitch struct {
	mu    gosync.Mutex
	fault fault
	hits  map[string]int // requests by kind: "archive", "document", "other"
}

func newFaultSwitch() *faultSwitch { return &faultSwitch{hits: map[string]int{}} }

// set switches f on (nil: off) and starts counting requests afresh.
func (h *faultSwitch) set(f fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fault = f
	h.hits = map[string]int{}
}

func (h *faultSwitch) count(kind string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[kind]
}

// handler puts the switch in front of next.
func (h *faultSwitch) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[requestKind(r)]++
		f := h.fault
		h.mu.Unlock()
		if f != nil && f(w, r, next) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requestKind tells archive downloads from metadata documents, for every
// protocol here: zips end in .zip, OCI blobs are under /blobs/; documents are
// JSON, the registry API, SHA256SUMS, OCI manifests and tag lists.
func requestKind(r *http.Request) string {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, ".zip"), strings.Contains(p, "/blobs/sha256:"):
		return "archive"
	case strings.HasSuffix(p, ".json"), strings.Contains(p, "/v1/providers/"), strings.HasSuffix(p, "_SHA256SUMS"),
		strings.Contains(p, "/manifests/"), strings.HasSuffix(p, "/tags/list"):
		return "document"
	}
	return "other"
}

func isArchive(r *http.Request) bool  { return requestKind(r) == "archive" }
func isDocument(r *http.Request) bool { return requestKind(r) == "document" }

// hitsByURL counts requests by URL path.
type hitsByURL struct {
	mu gosync.Mutex
	n  map[string]int
}

// max is the most requests made of one path.
func (h *hitsByURL) max() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := 0
	for _, n := range h.n {
		m = max(m, n)
	}
	return m
}

// counted is only(match, f) counting the requests it applies to in h.
func counted(h *hitsByURL, match func(*http.Request) bool, f fault) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		if !match(r) {
			return false
		}
		h.mu.Lock()
		if h.n == nil {
			h.n = map[string]int{}
		}
		h.n[r.URL.Path]++
		h.mu.Unlock()
		return f(w, r, next)
	}
}

// only applies f to the requests match accepts.
func only(match func(*http.Request) bool, f fault) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool { return match(r) && f(w, r, next) }
}

// anyOf answers with the first fault that takes the request.
func anyOf(fs ...fault) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		for _, f := range fs {
			if f(w, r, next) {
				return true
			}
		}
		return false
	}
}

// firstN applies f to the first n requests that match, then lets the rest
// through: a burst.
func firstN(n int, match func(*http.Request) bool, f fault) fault {
	var mu gosync.Mutex
	left := n
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		if !match(r) {
			return false
		}
		mu.Lock()
		hit := left > 0
		left--
		mu.Unlock()
		return hit && f(w, r, next)
	}
}

func status(code int) fault {
	return func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
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
// resets the TCP connection (RST, not a clean close). Where it cannot reach
// the connection it aborts the response, which closes it.
func resetMidBody(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	rec := serveReal(next, r)
	body := rec.Body.Bytes()
	hj, ok := w.(http.Hijacker)
	if !ok {
		// Behind a wrapper that hides the connection: let the server
		// drop it instead (a close, not a reset).
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body[:len(body)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return false // the test then sees a success it did not expect
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

// truncated states a Content-Length larger than the body it sends.
func truncated(extra int) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
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
// stallAfterHeaders sends the real headers and the body's first bytes,
// then nothing until the client gives up.
func stallAfterHeaders(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	rec := serveReal(next, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes()[:min(10, rec.Body.Len())])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	<-r.Context().Done()
	return true
}

func trickle(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	rec := serveReal(next, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	for _, b := range rec.Body.Bytes() {
		select {
		case <-r.Context().Done():
			return true
		case <-time.After(time.Second):
		}
		w.Write([]byte{b})
		flush()
	}
	return true
}

// silent never answers: no status line, no headers. Once the client has
// given up it aborts the stream: returning would send a 200 that a client
// on a loaded machine could still read.
func silent(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
	<-r.Context().Done()
	panic(http.ErrAbortHandler)
}

// endless streams zeros without a Content-Length until the client hangs up.
func endless(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
	w.Header().Set("Content-Type", "application/zip")
	chunk := make([]byte, 64<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			break
		}
	}
	return true
}

// redirectLoop sends every request back to itself.
func redirectLoop(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
	http.Redirect(w, r, r.URL.String(), http.StatusFound)
	return true
}

// hugeJSON streams a syntactically endless JSON document of size bytes,
// generated on the fly so the server holds none of it.
func hugeJSON(size int64) fault {
	return func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
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
var faultOpts = engine.Options{Jobs: 2, Attempts: 3, Backoff: 10 * time.Millisecond}

// syncResult is how one sync under faults ended.
type syncResult struct {
	planErr error
	plan    *sync.Plan
	tr      *engine.Tracker
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
func syncUnder(t *testing.T, deadline time.Duration, src backends.Reader, dst backends.Writer, sel sync.Selection, opts engine.Options) syncResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	res := syncResult{tr: engine.NewTracker()}
	res.plan, res.planErr = sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{})
	if res.planErr == nil {
		eng := engine.NewEngine(ctx, opts)
		for _, it := range res.plan.Items {
			if it.Status == sync.StatusMissing {
				eng.Enqueue(sync.Transfer{Src: src, Dst: dst, Archive: it.Archive})
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
	fault fault
	// want is nil for success, else texts the first failure must contain.
	want []string
	// within bounds the whole sync (retries included).
	within time.Duration
	// check, when set, looks at the requests afterwards.
	check func(t *testing.T, h *faultSwitch)
	// opts, when set, replaces faultOpts.
	opts *engine.Options
}

// runFaultCases syncs src into a fresh destination with each fault on in
// turn, and checks how each sync ended.
func runFaultCases(t *testing.T, cases []faultCase, seeds []backendtest.Seed, h *faultSwitch, open func() backends.Reader, sel sync.Selection) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.set(tc.fault)
			defer h.set(nil)
			dstDir := filepath.Join(t.TempDir(), "dst")
			dst, err := fs.Open(dstDir, dstDir, fs.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			// A fresh source each time: registries cache what they read.
			opts := faultOpts
			if tc.opts != nil {
				opts = *tc.opts
			}
			res := syncUnder(t, 30*time.Second, open(), dst, sel, opts)
			msg := res.failure()
			t.Logf("ended in %s: %q", res.elapsed.Round(time.Millisecond), msg)
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
				if res.tr.Counts()[engine.Done] != len(seeds) {
					t.Fatalf("done %v, want %d jobs done", res.tr.Counts(), len(seeds))
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
			assertNothingLanded(t, dst, dstDir, seedPackages(seeds)...)
		})
	}
}

func requests(kind string, want int) func(t *testing.T, h *faultSwitch) {
	return func(t *testing.T, h *faultSwitch) {
		t.Helper()
		if got := h.count(kind); got != want {
			t.Errorf("%d %s requests, want %d", got, kind, want)
		}
	}
}

// requestsWithin checks that between lo and hi requests of kind were made.
// A fault that first asks the real registry for its answer (and so takes
// longer than a client's header timeout on a loaded machine) may be met by
// the client's own retries as well as the engine's: the count is bounded,
// not exact.
func requestsWithin(kind string, lo, hi int) func(t *testing.T, h *faultSwitch) {
	return func(t *testing.T, h *faultSwitch) {
		t.Helper()
		if got := h.count(kind); got < lo || got > hi {
			t.Errorf("%d %s requests, want %d to %d", got, kind, lo, hi)
		}
	}
}

// netMirrorUnderFaults serves w.src as a network mirror behind a fault
// switch, read with short timeouts.
func netMirrorUnderFaults(t *testing.T, w *faultWorld, timeout time.Duration) (*faultSwitch, *netmirror.Mirror, string) {
	t.Helper()
	h := newFaultSwitch()
	srv := httptest.NewUnstartedServer(h.handler(netmirror.NewHandler(w.src, log.New(io.Discard, "", 0), hashing.Options{})))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // reset connections are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	m, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{
		HTTP: srv.Client(), Timeout: timeout, RetryBackoff: 10 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return h, m, srv.URL
}

// shortBody sends the real body less cut bytes, with a Content-Length that
// matches what it sends: a server that lies about the archive itself.
func shortBody(cut int) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		rec := serveReal(next, r)
		body := rec.Body.Bytes()
		w.Header().Set("Content-Length", fmt.Sprint(len(body)-cut))
		w.Write(body[:len(body)-cut])
		return true
	}
}

func TestNetMirrorFaults(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t)
	const timeout = 300 * time.Millisecond
	h, src, url := netMirrorUnderFaults(t, w, timeout)
	pkg := "example.com/acme/alpha 1.0.0"
	cases := []faultCase{
		{name: "archive 503 burst", fault: firstN(2, isArchive, status(503))},
		{name: "metadata 503 burst", fault: firstN(2, isDocument, status(503))},
		{name: "archive permanent 500", fault: only(isArchive, status(500)),
			want: []string{pkg, url, "HTTP 500 Internal Server Error", "(3 attempts)"},
			// The client's tries, not multiplied by the engine's.
			check: requests("archive", 2*(1+httpclient.DefaultRetries))},
		{name: "metadata permanent 500", fault: only(isDocument, status(500)),
			want:  []string{"mirror " + url + "/", "index.json", "HTTP 500 Internal Server Error", "(3 attempts)"},
			check: requests("document", 1+httpclient.DefaultRetries)},
		{name: "archive 404 is not retried", fault: only(isArchive, status(404)),
			want: []string{"HTTP 404 Not Found"}, check: requests("archive", 2)},
		// Tries do not multiply: the client tries each archive's request
		// as its policy says (3 times), and the engine, allowed 5
		// attempts a job, does not try again what the client tried to the
		// end (it made 5 requests, and engine x client for documents).
		{name: "archive 503 always, engine allowed 5 attempts", fault: only(isArchive, status(503)),
			opts:  &engine.Options{Jobs: 2, Attempts: 5, Backoff: 10 * time.Millisecond},
			want:  []string{pkg, "HTTP 503 Service Unavailable", "(3 attempts)"},
			check: requests("archive", 2*(1+httpclient.DefaultRetries))},
		{name: "connection reset mid-body once", fault: firstN(1, isArchive, resetMidBody)},
		{name: "connection reset mid-body always", fault: only(isArchive, resetMidBody),
			want: []string{pkg, "the connection broke after"}, check: requests("archive", 2*faultOpts.Attempts)},
		{name: "truncated archive once", fault: firstN(1, isArchive, truncated(1000))},
		{name: "truncated archive always", fault: only(isArchive, truncated(1000)),
			want: []string{pkg, "the connection broke after"}},
		{name: "truncated document", fault: only(isDocument, truncated(1000)),
			want: []string{"index.json", "unexpected EOF", "(3 attempts)"}},
		// The mirror's index states zh: (as tfmirror writes it): the bytes
		// that arrived are checked against it, with no inflating.
		{name: "archive shorter than stated", fault: only(isArchive, shortBody(10)),
			want: []string{pkg, "zh mismatch against mirror index"}},
		{name: "slow loris archive", fault: only(isArchive, trickle),
			want: []string{"no data for 300ms"}, within: 5 * time.Second},
		// The one stall watchdog, on every download path (and the engine
		// tries again what the client cannot: 3 attempts a job).
		{name: "archive stalled after its headers", fault: only(isArchive, stallAfterHeaders),
			want: []string{pkg, "no data for 300ms"}, within: 5 * time.Second, check: requests("archive", 2*faultOpts.Attempts)},
		{name: "slow loris document", fault: only(isDocument, trickle),
			want: []string{"index.json", "body not complete within 300ms"}, within: 5 * time.Second},
		{name: "no headers for an archive", fault: only(isArchive, silent),
			want: []string{pkg, "no answer within 300ms"}, within: 5 * time.Second},
		{name: "no headers for a document", fault: only(isDocument, silent),
			want: []string{"index.json", "no answer within 300ms"}, within: 5 * time.Second},
		{name: "archive redirect loop", fault: only(isArchive, redirectLoop),
			want: []string{pkg, "redirect loop"}, check: requests("archive", 2)},
		{name: "endless archive", fault: only(isArchive, endless),
			opts: &engine.Options{Jobs: 2, Attempts: 3, Backoff: 10 * time.Millisecond, Hashing: hashing.Options{MaxUnpacked: 1 << 20}},
			want: []string{pkg, "the source sent more than 2097152 bytes", "refusing the rest"}, check: requests("archive", 2)},
		{name: "document redirect loop", fault: only(isDocument, redirectLoop),
			want: []string{"index.json", "redirect loop"}},
	}
	runFaultCases(t, cases, w.seeds, h, func() backends.Reader { return src }, mustSelection(t, []string{"example.com/acme/alpha"}, ""))
}

// A 100 MB index.json is refused at the document cap, reading no more than
// the cap, and memory stays bounded.
func TestNetMirrorHugeDocument(t *testing.T) {
	w := newFaultWorld(t)
	h, src, _ := netMirrorUnderFaults(t, w, 10*time.Second)
	h.set(only(isDocument, hugeJSON(100<<20)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := syncUnder(t, 30*time.Second, src, w.dst, mustSelection(t, []string{"example.com/acme/alpha"}, ""), faultOpts)
	runtime.ReadMemStats(&after)
	msg := res.failure()
	if !strings.Contains(msg, fmt.Sprintf("document larger than %d bytes; refusing it", httpclient.DefaultMaxDocument)) {
		t.Fatalf("100 MB index.json: %q", msg)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused in %s, %d MiB allocated in all", res.elapsed.Round(time.Millisecond), alloc>>20)
	if alloc > 40<<20 {
		t.Errorf("%d MiB allocated reading a document capped at %d MiB", alloc>>20, httpclient.DefaultMaxDocument>>20)
	}
	if n := h.count("document"); n != 1 {
		t.Errorf("%d document requests: a refused document is not worth retrying", n)
	}
	assertNoTempFiles(t, w.dstDir)
}

// registryUnderFaults starts an origin registry (API and release files on
// two TLS servers, releases signed) behind a fault switch. It returns a
// function opening a client with short timeouts, and the seeds as the
// registry's packages.
func registryUnderFaults(t *testing.T, timeout time.Duration) (*faultSwitch, *registrytest.Server, func() backends.Reader, []backendtest.Seed) {
	t.Helper()
	plats := []string{"linux_amd64", "darwin_arm64"}
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	zips := map[string][]byte{}
	for _, plat := range plats {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
		ver.Archives[plat] = zips[plat]
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	h := newFaultSwitch()
	reg.Wrap(h.handler)
	var seeds []backendtest.Seed
	for _, plat := range plats {
		seeds = append(seeds, backendtest.Seed{Package: backendtest.Pkg(t, reg.Address("acme", "alpha"), "1.0.0", plat), Zip: zips[plat]})
	}
	open := func() backends.Reader {
		r, err := registry.Open("registry://"+reg.Host(), reg.Host(), registry.Options{HTTP: httpclient.Client{
			HTTP: reg.Client(), Timeout: timeout, RetryBackoff: 10 * time.Millisecond,
		}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return h, reg, open, seeds
}

func isDownloadMeta(r *http.Request) bool { return strings.Contains(r.URL.Path, "/download/") }

// rewriteJSON serves the real JSON document after edit changed it.
func rewriteJSON(edit func(doc map[string]any)) fault {
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		rec := serveReal(next, r)
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			return false
		}
		edit(doc)
		b, _ := json.Marshal(doc)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return true
	}
}

// packageSize sets every packages.*.package_size of a download document.
func packageSize(size func(real int64) int64) func(doc map[string]any) {
	return func(doc map[string]any) {
		pkgs, _ := doc["packages"].(map[string]any)
		for _, p := range pkgs {
			entry := p.(map[string]any)
			entry["package_size"] = size(int64(entry["package_size"].(float64)))
		}
	}
}

func TestRegistryFaults(t *testing.T) {
	t.Parallel()
	var metaHits hitsByURL
	h, reg, open, seeds := registryUnderFaults(t, 300*time.Millisecond)
	pkg := "acme/alpha 1.0.0"
	cases := []faultCase{
		{name: "archive 503 burst", fault: firstN(2, isArchive, status(503))},
		{name: "API 503 burst", fault: firstN(2, isDocument, status(503))},
		{name: "SHA256SUMS 502 burst", fault: firstN(2, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "_SHA256SUMS") }, status(502))},
		{name: "archive permanent 500", fault: only(isArchive, status(500)),
			want: []string{"registry " + reg.Host(), pkg, "HTTP 500 Internal Server Error", "(3 attempts)"},
			// The client's tries, not multiplied by the engine's.
			check: requests("archive", 2*(1+httpclient.DefaultRetries))},
		{name: "download metadata permanent 503", fault: counted(&metaHits, isDownloadMeta, status(503)),
			want: []string{"registry " + reg.Host(), pkg, "download metadata", "HTTP 503", "(3 attempts)"},
			// Each platform's download metadata is tried by the client's
			// policy, and not again around it.
			check: func(t *testing.T, _ *faultSwitch) {
				if n, want := metaHits.max(), 1+httpclient.DefaultRetries; n != want {
					t.Errorf("download metadata requested %d times for one platform, want %d", n, want)
				}
			}},
		{name: "connection reset mid-body", fault: only(isArchive, resetMidBody),
			want: []string{pkg, "the connection broke after"}, check: requests("archive", 2*faultOpts.Attempts)},
		{name: "Content-Length larger than the stated size", fault: only(isArchive, truncated(1000)),
			want: []string{pkg, "1271 bytes, but the registry's packages say 271"}},
		{name: "Content-Length larger than the body, no size stated", fault: anyOf(
			only(isDownloadMeta, rewriteJSON(func(doc map[string]any) { delete(doc, "packages") })),
			only(isArchive, truncated(1000))),
			want: []string{pkg, "the connection broke after 271 of 1271 bytes"}, check: requests("archive", 2*faultOpts.Attempts)},
		{name: "archive swapped, no size stated", fault: anyOf(
			only(isDownloadMeta, rewriteJSON(func(doc map[string]any) { delete(doc, "packages") })),
			only(isArchive, func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
				w.Write(registrytest.Tamper(serveReal(next, r).Body.Bytes()))
				return true
			})),
			want: []string{pkg, "but the signed SHA256SUMS says", "hash mismatch"}, check: requests("archive", 2)},
		{name: "Content-Length and body short", fault: only(isArchive, shortBody(10)),
			want: []string{pkg, "but the registry's packages say"}},
		{name: "package_size too large", fault: only(isDownloadMeta, rewriteJSON(packageSize(func(n int64) int64 { return n + 10 }))),
			want: []string{pkg, "but the registry's packages say"}},
		{name: "package_size too small", fault: only(isDownloadMeta, rewriteJSON(packageSize(func(n int64) int64 { return n - 10 }))),
			want: []string{pkg, "but the registry's packages say"}},
		{name: "package_size absurd", fault: only(isDownloadMeta, rewriteJSON(packageSize(func(int64) int64 { return 1 << 50 }))),
			want: []string{pkg, "the source states 1125899906842624 bytes", "refusing to download it"}, check: requests("archive", 0)},
		{name: "slow loris archive", fault: only(isArchive, trickle),
			want: []string{pkg, "no data for 300ms"}, within: 5 * time.Second},
		{name: "archive stalled after its headers", fault: only(isArchive, stallAfterHeaders),
			want: []string{pkg, "no data for 300ms"}, within: 5 * time.Second, check: requests("archive", 2*faultOpts.Attempts)},
		{name: "no headers for the versions list", fault: only(isDocument, silent),
			want: []string{"registry " + reg.Host(), "no answer within 300ms"}, within: 5 * time.Second},
		{name: "archive redirect loop", fault: only(isArchive, redirectLoop),
			want: []string{pkg, "redirect loop"}},
		{name: "versions list of 100 MB", fault: only(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/versions") }, hugeJSON(100<<20)),
			want: []string{"registry " + reg.Host(), "document larger than"}},
	}
	runFaultCases(t, cases, seeds, h, open, mustSelection(t, []string{reg.Address("acme", "alpha")}, "1.0.0"))
}
