package pull_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
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
	"github.com/tfmirror/tfmirror/sync/audit"
	"github.com/tfmirror/tfmirror/sync/pull"
)

// bigZip is a release zip of TYPE at version for plat with size bytes of
// random (incompressible) filler: streamed in many chunks.
func bigZip(t *testing.T, typ, version, plat string, size int) []byte {
	t.Helper()
	filler := make([]byte, size)
	rand.Read(filler)
	return backendtest.Zip(t,
		backendtest.Entry{Name: "terraform-provider-" + typ + "_v" + version, Body: []byte("#!/bin/sh\nexit 1\n")},
		backendtest.Entry{Name: "filler", Body: filler, Mode: 0o644})
}

// world is an origin registry, a directory CACHE and a pull-through mirror
// of the one into the other, served over TLS in process.
type world struct {
	reg   *registrytest.Server
	zips  map[string][]byte
	cache string
	m     *pull.Mirror
	srv   *httptest.Server
	logs  *backendtest.Buffer
	prov  backends.Provider
	audit string // the audit log's file
}

func newWorld(t *testing.T, faults registrytest.Faults, pol func(host string) *pull.Policy, zips map[string][]byte, more ...registrytest.Provider) *world {
	t.Helper()
	return newWorldTTL(t, time.Hour, faults, pol, zips, more...)
}

// newWorldTTL is newWorld whose upstream listings last ttl.
func newWorldTTL(t *testing.T, ttl time.Duration, faults registrytest.Faults, pol func(host string) *pull.Policy, zips map[string][]byte, more ...registrytest.Provider) *world {
	t.Helper()
	return newWorldWith(t, func(o *pull.Options) { o.TTL = ttl }, faults, pol, zips, more...)
}

// newWorldWith is newWorld whose mirror's options opt changes last.
func newWorldWith(t *testing.T, opt func(*pull.Options), faults registrytest.Faults, pol func(host string) *pull.Policy, zips map[string][]byte, more ...registrytest.Provider) *world {
	t.Helper()
	w := &world{zips: zips, cache: t.TempDir(), logs: &backendtest.Buffer{}}
	w.reg = registrytest.NewWithOptions(t, registrytest.Options{Faults: faults}, append([]registrytest.Provider{{
		Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{{Version: "1.0.0", Archives: zips}}}}, more...)...)
	var err error
	if w.prov, err = backends.ParseProvider(w.reg.Address("acme", "alpha")); err != nil {
		t.Fatal(err)
	}
	cache, err := fs.Open(w.cache, w.cache, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	src := func(ctx context.Context, p backends.Provider) (backends.Reader, error) {
		return registry.Open("registry://"+w.reg.Host(), w.reg.Host(), registry.Options{HTTP: httpclient.Client{HTTP: w.reg.Client()}})
	}
	logger := newLogger(w.logs)
	metrics := pull.NewMetrics()
	w.audit = filepath.Join(t.TempDir(), "audit.jsonl")
	auditLog, err := audit.Open(w.audit, "serve", "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auditLog.Close() })
	var policy *pull.Policy
	if pol != nil {
		policy = pol(w.reg.Host())
	}
	opts := pull.Options{Cache: cache, Upstream: src, UpstreamName: "test registry", Policy: policy,
		Logger: logger, Metrics: metrics, TTL: time.Hour, Audit: auditLog}
	opt(&opts)
	w.m = pull.New(opts)
	h := netmirror.NewHandler(w.m, logger, hashing.Options{})
	h.Access = func(netmirror.Access) {}
	w.srv = httptest.NewTLSServer(&pull.Server{Mirror: w.m, Next: h, Metrics: metrics, Access: pull.AccessLog(w.logs, true)})
	t.Cleanup(func() { w.srv.Close(); w.m.Close() })
	return w
}

func (w *world) url(file string) string {
	return w.srv.URL + "/" + w.prov.String() + "/" + file
}

func (w *world) get(t *testing.T, ctx context.Context, file string) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.url(file), nil)
	return w.srv.Client().Do(req)
}

// waitIdle waits until the mirror runs no fetch.
func (w *world) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
	for w.m.Flights() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("a fetch still runs after a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noSpoolLeft fails unless, within a minute (a bound for a loaded
// machine), this process holds no file of CACHE open (the staging files
// the clients were streamed from) and CACHE holds no staging file.
func (w *world) noSpoolLeft(t *testing.T) {
	t.Helper()
	var open []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		open = open[:0]
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, w.cache+"/") && !strings.HasSuffix(target, ".tfmirror-lock") {
				open = append(open, target)
			}
		}
		if len(open) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(open) > 0 {
		t.Errorf("files of CACHE still open: %v", open)
	}
	filepath.WalkDir(w.cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".") && d.Name() != ".tfmirror-lock" {
			t.Errorf("a staging file stays in CACHE: %s", p)
		}
		return nil
	})
}

// cached lists the zips in CACHE.
func (w *world) cached() []string {
	var out []string
	filepath.WalkDir(w.cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".zip") {
			out = append(out, filepath.Base(p))
		}
		return nil
	})
	return out
}

// gate holds each zip the registry sends after its first half until
// open is closed, telling half when the first half is out.
type gate struct {
	open chan struct{}
	half chan struct{}
	once gosync.Once
}

func newGate() *gate { return &gate{open: make(chan struct{}), half: make(chan struct{})} }

func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".zip") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&gatedWriter{ResponseWriter: w, g: g}, r)
	})
}

type gatedWriter struct {
	http.ResponseWriter
	g       *gate
	written int
}

func (gw *gatedWriter) Write(b []byte) (int, error) {
	half := len(b) / 2
	if gw.written == 0 && half > 0 {
		n, err := gw.ResponseWriter.Write(b[:half])
		gw.written += n
		if err != nil {
			return n, err
		}
		http.NewResponseController(gw.ResponseWriter).Flush()
		gw.g.once.Do(func() { close(gw.g.half) })
		<-gw.g.open
		m, err := gw.ResponseWriter.Write(b[half:])
		gw.written += m
		return n + m, err
	}
	n, err := gw.ResponseWriter.Write(b)
	gw.written += n
	return n, err
}

// Many clients ask at once for a zip CACHE lacks: the origin serves it
// once; every client receives its first half while the origin still
// holds back the rest (streamed, not stored first); one client that hangs
// up does not stop the others; each gets the whole zip, which then lies
// in CACHE, and the staging file the clients read is closed.
func TestOneFetchStreamedToEveryClient(t *testing.T) {
	host := "linux_amd64"
	zips := map[string][]byte{host: bigZip(t, "alpha", "1.0.0", host, 2<<20), "darwin_arm64": bigZip(t, "alpha", "1.0.0", "darwin_arm64", 1000)}
	w := newWorld(t, registrytest.Faults{}, nil, zips)
	g := newGate()
	w.reg.Wrap(g.wrap)
	file := "terraform-provider-alpha_1.0.0_" + host + ".zip"
	if resp, err := w.get(t, context.Background(), "1.0.0.json"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("version document: %v %v", resp, err)
	}

	const clients = 8
	type result struct {
		body []byte
		err  error
	}
	results := make(chan result, clients)
	halfway := make(chan struct{}, clients+1)
	var wg gosync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := w.get(t, context.Background(), file)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			first := make([]byte, 64<<10)
			if _, err := io.ReadFull(resp.Body, first); err != nil {
				results <- result{err: err}
				return
			}
			halfway <- struct{}{}
			rest, err := io.ReadAll(resp.Body)
			results <- result{body: append(first, rest...), err: err}
		}()
	}
	// One more client hangs up once bytes arrive.
	ctx, hangUp := context.WithCancel(context.Background())
	go func() {
		resp, err := w.get(t, ctx, file)
		if err == nil {
			io.ReadFull(resp.Body, make([]byte, 64<<10))
			halfway <- struct{}{}
			hangUp()
			resp.Body.Close()
		}
	}()
	deadline := time.After(time.Minute) // a bound for a loaded machine
	for i := 0; i < clients+1; i++ {
		select {
		case <-halfway:
		case <-deadline:
			t.Fatalf("%d of %d clients received bytes while the origin held back the rest: not streamed", i, clients+1)
		}
	}
	close(g.open)
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil || !bytes.Equal(r.body, zips[host]) {
			t.Errorf("a client got %d bytes (%v), not the %d of the zip", len(r.body), r.err, len(zips[host]))
		}
	}
	w.waitIdle(t)
	if n := w.reg.Count(registrytest.KindArchive); n != 1 {
		t.Errorf("the origin served the zip %d times, want once", n)
	}
	if got := w.cached(); len(got) != 1 || got[0] != file {
		t.Errorf("CACHE holds %v, want %s", got, file)
	}
	w.noSpoolLeft(t)
	// Served from CACHE now: the origin is not asked again.
	resp, err := w.get(t, context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, zips[host]) || w.reg.Count(registrytest.KindArchive) != 1 {
		t.Errorf("warm: %d bytes, origin asked %d times", len(b), w.reg.Count(registrytest.KindArchive))
	}
	// The zip changed in CACHE behind the mirror's back (same size): the
	// zh: known from its landing no longer vouches for it; it is hashed as
	// it streams and cut short.
	var path string
	filepath.WalkDir(w.cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Base(p) == file {
			path = p
		}
		return nil
	})
	damaged := bytes.Clone(zips[host])
	damaged[len(damaged)/2] ^= 0xff
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err = w.get(t, context.Background(), file)
	if err == nil {
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == 200 {
			t.Errorf("a zip changed in CACHE was served whole (%d bytes)", len(b))
		}
	}
}

// A zip that does not match the signed SHA256SUMS is cut short for the
// clients that are receiving it (their bodies end in an error, never
// whole), and nothing of it lands in CACHE or stays open.
func TestMismatchCutsTheStreamAndLandsNothing(t *testing.T) {
	host := "linux_amd64"
	zips := map[string][]byte{host: bigZip(t, "alpha", "1.0.0", host, 1<<20)}
	w := newWorld(t, registrytest.Faults{TamperArchive: true, NoPackages: true}, nil, zips)
	file := "terraform-provider-alpha_1.0.0_" + host + ".zip"
	var wg gosync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := w.get(t, context.Background(), file)
			if err != nil {
				return // refused before anything was sent
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if resp.StatusCode == 200 && err == nil {
				t.Errorf("a client received %d bytes of the tampered zip whole (status 200, no error)", len(b))
			}
		}()
	}
	wg.Wait()
	w.waitIdle(t)
	if got := w.cached(); len(got) != 0 {
		t.Errorf("CACHE holds %v", got)
	}
	w.noSpoolLeft(t)
	if !strings.Contains(w.logs.String(), "not landed") {
		t.Errorf("the log does not say the zip was not landed:\n%s", w.logs)
	}
	if b, _ := os.ReadFile(w.audit); !strings.Contains(string(b), `"event":"refused"`) || !strings.Contains(string(b), "signed SHA256SUMS") {
		t.Errorf("the audit log does not record the refusal and why:\n%s", b)
	}
}

func newLogger(w io.Writer) *log.Logger { return log.New(w, "", 0) }

// When told to stop (SIGTERM cancels serve's context), the server lets a
// download in flight finish, whole, before it returns; the fetch behind it
// lands.
func TestStopDrainsDownloadsInFlight(t *testing.T) {
	host := "linux_amd64"
	zips := map[string][]byte{host: bigZip(t, "alpha", "1.0.0", host, 1<<20)}
	w := newWorld(t, registrytest.Faults{}, nil, zips)
	g := newGate()
	w.reg.Wrap(g.wrap)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	certOut := filepath.Join(t.TempDir(), "ca.pem")
	ready := make(chan netmirror.Serving, 1)
	served := make(chan error, 1)
	go func() {
		served <- netmirror.Serve(ctx, nil, netmirror.ServeOptions{Addr: "127.0.0.1:0", CertOut: certOut,
			Handler: w.srv.Config.Handler, Drain: time.Minute, Ready: func(s netmirror.Serving) { ready <- s }})
	}()
	s := <-ready
	pem, _ := os.ReadFile(certOut)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(strings.Replace(s.URL, "localhost", "127.0.0.1", 1) + w.prov.String() + "/terraform-provider-alpha_1.0.0_" + host + ".zip")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 64<<10)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	stop() // as SIGTERM does
	select {
	case err := <-served:
		t.Fatalf("serve returned (%v) while a download was in flight", err)
	case <-g.half:
	}
	close(g.open)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(append(first, rest...), zips[host]) {
		t.Errorf("the download in flight got %d bytes (%v), not the whole zip", len(first)+len(rest), err)
	}
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
	w.waitIdle(t)
	if got := w.cached(); len(got) != 1 {
		t.Errorf("CACHE holds %v after the drain", got)
	}
}

// When the upstream fails after its listing expired, the last listing is
// served (stale, with a warning): the version document still lists the
// platform CACHE does not hold; the one it holds downloads.
func TestStaleListingWhileTheUpstreamFails(t *testing.T) {
	zips := map[string][]byte{"linux_amd64": bigZip(t, "alpha", "1.0.0", "linux_amd64", 1000), "darwin_arm64": bigZip(t, "alpha", "1.0.0", "darwin_arm64", 1000)}
	w := newWorldTTL(t, time.Millisecond, registrytest.Faults{}, nil, zips)
	file := "terraform-provider-alpha_1.0.0_linux_amd64.zip"
	resp, err := w.get(t, context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	w.waitIdle(t)
	w.reg.Wrap(func(http.Handler) http.Handler {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	})
	// The handler reuses a listing for a moment (netmirror.ListingTTL):
	// wait for the mirror to ask the upstream again, and fail.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(w.logs.String(), "serving its listing of") {
		if time.Now().After(deadline) {
			t.Fatalf("no stale listing served after a minute:\n%s", w.logs)
		}
		if code, body := w.body(t, "1.0.0.json"); code != 200 || !strings.Contains(body, "darwin_arm64") || !strings.Contains(body, "linux_amd64") {
			t.Fatalf("1.0.0.json with the upstream failing: %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := w.body(t, file); code != 200 || body != string(zips["linux_amd64"]) {
		t.Errorf("the cached zip with the upstream failing: %d, %d bytes", code, len(body))
	}
}

// From an upstream whose streams do not hash themselves (a directory
// whose index documents state the zips' hashes), a zip is served whole
// and lands; one changed behind its documents is cut short for the client
// and lands nothing.
func TestUpstreamThatStatesHashesOnly(t *testing.T) {
	upDir, cacheDir := t.TempDir(), t.TempDir()
	plat := "linux_amd64"
	seeds := []backendtest.Seed{
		{Package: backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), Zip: bigZip(t, "alpha", "1.0.0", plat, 300<<10)},
		{Package: backendtest.Pkg(t, "example.com/acme/alpha", "1.1.0", plat), Zip: bigZip(t, "alpha", "1.1.0", plat, 300<<10)},
	}
	backendtest.WritePacked(t, upDir, seeds)
	up, err := fs.Open(upDir, upDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Flush(context.Background(), seeds[0].Package.Provider); err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(seeds[1].Zip)
	damaged[len(damaged)/2] ^= 0xff
	os.WriteFile(filepath.Join(upDir, "example.com", "acme", "alpha", seeds[1].Package.Filename()), damaged, 0o644)
	cache, err := fs.Open(cacheDir, cacheDir, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	m := pull.New(pull.Options{Cache: cache, UpstreamName: upDir,
		Upstream: func(context.Context, backends.Provider) (backends.Reader, error) { return up, nil }})
	defer m.Close()
	srv := httptest.NewTLSServer(netmirror.NewHandler(m, nil, hashing.Options{}))
	defer srv.Close()
	get := func(s backendtest.Seed) ([]byte, int, error) {
		resp, err := srv.Client().Get(srv.URL + "/example.com/acme/alpha/" + s.Package.Filename())
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return b, resp.StatusCode, err
	}
	if b, code, err := get(seeds[0]); err != nil || code != 200 || !bytes.Equal(b, seeds[0].Zip) {
		t.Errorf("the intact zip: %d, %d bytes (%v)", code, len(b), err)
	}
	if b, code, err := get(seeds[1]); err == nil && code == 200 {
		t.Errorf("the zip changed behind its documents was served whole (%d bytes)", len(b))
	}
	for deadline := time.Now().Add(time.Minute); m.Flights() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a fetch still runs after a minute")
		}
	}
	var landed []string
	filepath.WalkDir(cacheDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".zip") {
			landed = append(landed, filepath.Base(p))
		}
		return nil
	})
	if len(landed) != 1 || landed[0] != seeds[0].Package.Filename() {
		t.Errorf("CACHE holds %v, want only %s", landed, seeds[0].Package.Filename())
	}
}

// TestOneUpstreamReaderPerHost: the upstream of a host is opened once and
// kept; a listing past its TTL asks the registry again through that one
// reader (backends.Refresher), not through a new registry client.
func TestOneUpstreamReaderPerHost(t *testing.T) {
	var opens atomic.Int32
	zips := map[string][]byte{"linux_amd64": registrytest.ProviderZip("alpha", "1.0.0", "linux")}
	w := newWorldWith(t, func(o *pull.Options) {
		o.TTL = time.Millisecond
		open := o.Upstream
		o.Upstream = func(ctx context.Context, p backends.Provider) (backends.Reader, error) {
			opens.Add(1)
			return open(ctx, p)
		}
	}, registrytest.Faults{}, nil, zips)
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for w.reg.Count(registrytest.KindVersions) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the registry was asked for the versions %d times in a minute of expired listings, want 3", w.reg.Count(registrytest.KindVersions))
		}
		if vs, err := w.m.Versions(ctx, w.prov); err != nil || len(vs) != 1 {
			t.Fatalf("Versions: %v, %v", vs, err)
		}
	}
	if n := opens.Load(); n != 1 {
		t.Errorf("the upstream of one host was opened %d times, want once", n)
	}
}
