package bench

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/tlscert"
)

// BenchmarkPullThrough measures `tfmirror serve CACHE --upstream` against
// its yardsticks, side by side in one run, with an origin registry on
// loopback TLS serving 100 distinct zips of ~20 MB (25 versions x 4
// platforms, each holding a 64 MB executable):
//
//	(1) RSS: 100 clients download the 100 zips at once through a cold
//	    mirror (a directory CACHE): the serve process's peak RSS (VmHWM),
//	    and the wall time
//	(2) cold: one zip through a running mirror that lacks it, against the
//	    same zip downloaded straight from the origin, ROUNDS times (default
//	    3; each a zip of a version the mirror has listed, not fetched),
//	    alternating which goes first; medians
//	(3) warm: 100 clients download the 100 zips at once from the mirror
//	    that landed them (served from CACHE, each zip's zh: known from its
//	    landing) and from Debian's nginx serving the same directory with the
//	    same certificate (HTTP/1.1 both, as the clients speak to mirrors);
//	    throughput and p50/p99 of one download, ROUNDS times in turns,
//	    medians; and, for the record, once from a fresh serve process,
//	    which hashes each zip as it first serves it
//
// The clients run in this process: they share the machine's cores with
// the servers, alike for each. Figures are logged (go test -bench
// PullThrough -run '^$' -v ./bench/).
func BenchmarkPullThrough(b *testing.B) {
	if _, err := exec.LookPath("nginx"); err != nil {
		b.Skip("nginx is not installed (apt-get install -y nginx): it is the warm yardstick")
	}
	bin := buildTfmirror(b)
	pw := newPullBenchWorld(b)
	parts := os.Getenv("PULL_BENCH") // a part alone: rss, cold or warm
	for range b.N {
		if parts == "cold" {
			pw.cold(b, bin)
			continue
		}
		cache := filepath.Join(b.TempDir(), "cache")
		srv := pw.serve(b, bin, cache)
		start := time.Now()
		lat := pw.download(b, srv.url, pw.paths)
		wall := time.Since(start)
		srv.waitIdle(b)
		rss := srv.peakRSS(b)
		b.Logf("(1) 100 concurrent cold downloads of distinct zips: %.2fs, %.0f MB/s; serve's peak RSS %d MB (target < 150 MB); p99 %.2fs",
			wall.Seconds(), float64(pw.total)/wall.Seconds()/1e6, rss>>20, percentile(lat, 99).Seconds())
		if parts == "rss" {
			srv.stop()
			continue
		}
		if parts == "" {
			pw.cold(b, bin)
		}

		// Warm: the process that landed the zips serves them, and nginx
		// the same directory, in turns, ROUNDS times; medians.
		ngURL := pw.nginx(b, cache)
		var tRates, nRates []float64
		var tP50, tP99, nP50, nP99 []time.Duration
		run := func(url string, rates *[]float64, p50, p99 *[]time.Duration) {
			start := time.Now()
			l := pw.download(b, url, pw.paths)
			*rates = append(*rates, float64(pw.total)/time.Since(start).Seconds())
			*p50, *p99 = append(*p50, percentile(l, 50)), append(*p99, percentile(l, 99))
		}
		for r := range pw.rounds() {
			if r%2 == 0 {
				run(srv.url, &tRates, &tP50, &tP99)
				run(ngURL, &nRates, &nP50, &nP99)
			} else {
				run(ngURL, &nRates, &nP50, &nP99)
				run(srv.url, &tRates, &tP50, &tP99)
			}
		}
		srv.stop()
		tRate, nRate := median(tRates), median(nRates)
		b.Logf("(3) warm, 100 concurrent clients (medians of %d, in turns): tfmirror, the process that landed the zips, %.0f MB/s (p50 %.2fs, p99 %.2fs); nginx %.0f MB/s (p50 %.2fs, p99 %.2fs); throughput %.2fx nginx's (target >= 0.8), p99 %.2fx (target <= 1.25)",
			len(tRates), tRate/1e6, percentile(tP50, 50).Seconds(), percentile(tP99, 50).Seconds(), nRate/1e6, percentile(nP50, 50).Seconds(), percentile(nP99, 50).Seconds(),
			tRate/nRate, percentile(tP99, 50).Seconds()/percentile(nP99, 50).Seconds())
		// A fresh serve process over the same CACHE hashes each zip as it
		// first serves it.
		srv = pw.serve(b, bin, cache)
		start = time.Now()
		fl := pw.download(b, srv.url, pw.paths)
		fWall := time.Since(start)
		srv.stop()
		b.Logf("(3) warm, a fresh serve process (each zip hashed as first served), once: %.0f MB/s (p50 %.2fs, p99 %.2fs)",
			float64(pw.total)/fWall.Seconds()/1e6, percentile(fl, 50).Seconds(), percentile(fl, 99).Seconds())
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// rounds is ROUNDS, 3 by default.
func (pw *pullBenchWorld) rounds() int {
	if r, err := strconv.Atoi(os.Getenv("ROUNDS")); err == nil && r > 0 {
		return r
	}
	return 3
}

// pullBenchWorld is the origin registry and what talks to it.
type pullBenchWorld struct {
	reg       *registrytest.Server
	env       []string // tfmirror's: trusts the registry
	cert, key string   // the mirrors' certificate, for 127.0.0.1
	pool      *x509.CertPool
	paths     []string // the zips' mirror paths, HOST/NS/TYPE/FILE
	direct    []string // the same zips' download URLs at the origin
	sizes     map[string]int
	total     int64
	coldUsed  int // versions the cold rounds fetched already
}

func newPullBenchWorld(b *testing.B) *pullBenchWorld {
	plats := []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"}
	var names []string
	for v := range 25 {
		for _, plat := range plats {
			names = append(names, fmt.Sprintf("bench/alpha/1.0.%d/%s", v, plat))
		}
	}
	zips := releaseZips(b, executableBytes(b, 64<<20), names)
	p := registrytest.Provider{Namespace: "bench", Type: "alpha"}
	pw := &pullBenchWorld{sizes: map[string]int{}}
	for v := range 25 {
		ver := registrytest.Version{Version: fmt.Sprintf("1.0.%d", v), Archives: map[string][]byte{}}
		for _, plat := range plats {
			ver.Archives[plat] = zips[fmt.Sprintf("bench/alpha/1.0.%d/%s", v, plat)]
		}
		p.Versions = append(p.Versions, ver)
	}
	// Without the OpenTofu 1.12 packages field, as registry.terraform.io.
	pw.reg = registrytest.NewWithOptions(b, registrytest.Options{Faults: registrytest.Faults{NoPackages: true}}, p)
	dir := b.TempDir()
	ca := filepath.Join(dir, "registry-ca.pem")
	os.WriteFile(ca, pw.reg.CertPEM(), 0o644)
	pw.env = append(os.Environ(), "SSL_CERT_FILE="+ca, "SSL_CERT_DIR="+dir, "TF_CLI_CONFIG_FILE="+filepath.Join(dir, "none.tfrc"), "HOME="+dir)
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	pw.cert, pw.key = filepath.Join(dir, "mirror.pem"), filepath.Join(dir, "mirror.key")
	os.WriteFile(pw.cert, certPEM, 0o644)
	os.WriteFile(pw.key, keyPEM, 0o600)
	pw.pool = x509.NewCertPool()
	pw.pool.AppendCertsFromPEM(certPEM)
	host := pw.reg.Host()
	for v := range 25 {
		for _, plat := range plats {
			file := fmt.Sprintf("terraform-provider-alpha_1.0.%d_%s.zip", v, plat)
			path := host + "/bench/alpha/" + file
			pw.paths = append(pw.paths, path)
			pw.direct = append(pw.direct, fmt.Sprintf("https://%s/bench/alpha/1.0.%d/%s", pw.reg.FilesHost(), v, file))
			size := len(zips[fmt.Sprintf("bench/alpha/1.0.%d/%s", v, plat)])
			pw.sizes[path] = size
			pw.total += int64(size)
		}
	}
	b.Logf("origin: %d zips, %d MB in all", len(pw.paths), pw.total>>20)
	return pw
}

// client is an HTTP/1.1 client trusting pool (the clients speak HTTP/1.1
// to mirrors unless the server offers h2; nginx here does not).
func client(pool *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}, MaxIdleConnsPerHost: 128, DisableCompression: true}}
}

// download GETs base+path for every path at once and returns each
// download's time; a short or failed one fails the benchmark.
func (pw *pullBenchWorld) download(b *testing.B, base string, paths []string) []time.Duration {
	c := client(pw.pool)
	lat := make([]time.Duration, len(paths))
	errs := make(chan error, len(paths))
	var wg gosync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			resp, err := c.Get(base + p)
			if err != nil {
				errs <- err
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat[i] = time.Since(start)
			if err != nil || resp.StatusCode != 200 || n != int64(pw.sizes[p]) {
				errs <- fmt.Errorf("%s%s: %d, %d bytes (%v)", base, p, resp.StatusCode, n, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return lat
}

// cold compares one zip through a mirror that lacks it with the same zip
// straight from the origin: on loopback, where the work of each byte (TLS
// both ways, hashing, spool and staging writes) is all there is, and with
// the origin's downloads held to 50 MB/s (400 Mbit/s), as a registry
// across a network is.
func (pw *pullBenchWorld) cold(b *testing.B, bin string) {
	pw.coldAt(b, bin, 0)
	pw.reg.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ".zip") {
				w = &throttled{ResponseWriter: w, rate: 50e6, start: time.Now()}
			}
			next.ServeHTTP(w, r)
		})
	})
	pw.coldAt(b, bin, 50e6)
	pw.reg.Wrap(func(next http.Handler) http.Handler { return next })
}

// throttled sends at most rate bytes a second.
type throttled struct {
	http.ResponseWriter
	rate  float64
	start time.Time
	sent  int
}

func (t *throttled) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 64<<10)
		m, err := t.ResponseWriter.Write(p[:k])
		n, t.sent, p = n+m, t.sent+m, p[k:]
		if err != nil {
			return n, err
		}
		http.NewResponseController(t.ResponseWriter).Flush()
		if ahead := time.Duration(float64(t.sent)/t.rate*1e9) - time.Since(t.start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	return n, nil
}

func (pw *pullBenchWorld) coldAt(b *testing.B, bin string, rate float64) {
	rounds := pw.rounds()
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pw.reg.CertPool()}, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
	var viaMirror, straight []time.Duration
	var viaCPU, serveCPU, directCPU time.Duration // summed over the rounds
	srv := pw.serve(b, bin, filepath.Join(b.TempDir(), "cache"))
	defer srv.stop()
	for r := range rounds {
		// A zip of a version not listed yet, each round.
		i := (r*4 + pw.coldUsed*4) % len(pw.paths)
		doc := pw.paths[i][:strings.LastIndex(pw.paths[i], "/")] + fmt.Sprintf("/1.0.%d.json", i/4)
		if resp, err := client(pw.pool).Get(srv.url + doc); err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: %v %v", doc, resp, err)
		}
		// The CPU each costs: this process's (the origin and the client)
		// and the serve process's until its fetch has landed.
		mirror := func() {
			self, served := cpuSpent(), srv.cpu(b)
			viaMirror = append(viaMirror, pw.download(b, srv.url, pw.paths[i:i+1])[0])
			viaCPU += cpuSpent() - self
			srv.waitIdle(b)
			serveCPU += srv.cpu(b) - served
		}
		origin := func() {
			self := cpuSpent()
			defer func() { directCPU += cpuSpent() - self }()
			start := time.Now()
			resp, err := direct.Get(pw.direct[i])
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			straight = append(straight, time.Since(start))
		}
		if r%2 == 0 {
			mirror()
			origin()
		} else {
			origin()
			mirror()
		}
	}
	pw.coldUsed += rounds
	m, o := percentile(viaMirror, 50), percentile(straight, 50)
	origin := "on loopback"
	if rate > 0 {
		origin = fmt.Sprintf("from an origin sending %.0f MB/s", rate/1e6)
	}
	b.Logf("(2) cold, one ~20 MB zip %s: through the mirror %.3fs, straight from the origin %.3fs (medians of %d): %.2fx (target <= 1.15); CPU per zip through the mirror %.0f ms (origin and client %.0f, serve %.0f), straight %.0f ms: %.2fx",
		origin, m.Seconds(), o.Seconds(), rounds, m.Seconds()/o.Seconds(),
		perRound(viaCPU+serveCPU, rounds), perRound(viaCPU, rounds), perRound(serveCPU, rounds), perRound(directCPU, rounds), (viaCPU+serveCPU).Seconds()/directCPU.Seconds())
}

// perRound is d/rounds in milliseconds.
func perRound(d time.Duration, rounds int) float64 { return d.Seconds() * 1000 / float64(rounds) }

// cpu is the CPU time the serve process has used so far: the sum of its
// threads' /proc/PID/task/TID/schedstat (nanoseconds; a thread that ended
// is no longer counted, which the Go runtime rarely does).
func (s *pullServer) cpu(b *testing.B) time.Duration {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", s.cmd.Process.Pid))
	if len(stats) == 0 {
		b.Skip("no /proc/PID/task/*/schedstat")
	}
	var total time.Duration
	for _, st := range stats {
		if f, err := os.ReadFile(st); err == nil {
			ns, _ := strconv.ParseInt(strings.Fields(string(f))[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// pullServer is a running serve process.
type pullServer struct {
	cmd *exec.Cmd
	url string
	c   *http.Client
}

func (pw *pullBenchWorld) serve(b *testing.B, bin, cache string) *pullServer {
	cmd := exec.Command(bin, "serve", cache, "--upstream", "registry://"+pw.reg.Host(), "--addr", "127.0.0.1:0",
		"--tls-cert", pw.cert, "--tls-key", pw.key, "--spool-dir", b.TempDir())
	cmd.Env = pw.env
	return startServer(b, cmd, pw.pool)
}

// startServer starts a serve command and waits for the URL it prints.
func startServer(b *testing.B, cmd *exec.Cmd, pool *x509.CertPool) *pullServer {
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if os.Getenv("TFMIRROR_BENCH_LOG") != "" {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &pullServer{cmd: cmd, c: client(pool)}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), " at https://"); i >= 0 && strings.HasPrefix(sc.Text(), "Serving ") {
			s.url = sc.Text()[i+len(" at "):]
			break
		}
	}
	go io.Copy(io.Discard, out)
	if s.url == "" {
		cmd.Process.Kill()
		b.Fatal("serve printed no URL")
	}
	s.url = strings.Replace(s.url, "localhost", "127.0.0.1", 1)
	return s
}

// waitIdle waits until the server runs no fetch.
func (s *pullServer) waitIdle(b *testing.B) {
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var h struct{ Fetching int }
		resp, err := s.c.Get(s.url + "healthz")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.Fetching == 0 {
				return
			}
		}
	}
	b.Fatal("serve still fetches after 5 minutes")
}

// peakRSS is the process's peak resident set (VmHWM).
func (s *pullServer) peakRSS(b *testing.B) int64 {
	f, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(f), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (s *pullServer) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}

// nginx starts Debian's nginx serving dir over TLS with the mirror's
// certificate on a free port, stopped when the benchmark ends.
func (pw *pullBenchWorld) nginx(b *testing.B, dir string) string {
	return backendtest.Nginx(b, dir, pw.cert, pw.key, "")
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (p*len(s) + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}
