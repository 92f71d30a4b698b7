package cli

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/test/killtest"
)

// scalePlats are the platforms the scale-out tests fetch.
var scalePlats = []string{"linux_amd64", "darwin_arm64", "windows_amd64"}

// pullClient is an HTTP client trusting caPEM.
func pullClient(caPEM []byte) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}
}

// fetchedByProcess reads the fetches a serve process made from its
// /metrics: every outcome.
func fetchedByProcess(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	return int(metricSum(t, c, url, "tfmirror_pull_fetches_total{"))
}

// convergeOn runs two serve processes on one CACHE (place, with extra
// flags and environment), has many clients download every platform's zip
// through both at once, and checks that each client got each zip whole,
// that each process fetched each zip from the origin at most once, and
// that CACHE lists and verifies every zip.
func convergeOn(t *testing.T, w *pullWorld, zips map[string][]byte, env []string, place string, flags ...string) {
	t.Helper()
	args := append([]string{place, "--upstream", "origin", "--allow-host", "127.0.0.1"}, flags...)
	var urls []string
	var certs [][]byte
	for range 2 {
		url, cert, _ := startServeWith(t, env, args...)
		pem, err := os.ReadFile(cert)
		if err != nil {
			t.Fatal(err)
		}
		urls, certs = append(urls, url), append(certs, pem)
	}
	clients := []*http.Client{pullClient(certs[0]), pullClient(certs[1])}
	var wg gosync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range scalePlats {
				plat := scalePlats[(i+j)%len(scalePlats)]
				if err := getWhole(clients[i%2], urls[i%2]+pullAddr+"/terraform-provider-alpha_1.0.0_"+plat+".zip", zips[plat]); err != nil {
					errs <- err
				}
			}
		}()
	}
	reportAll(t, &wg, errs)
	total := 0
	for i, url := range urls {
		waitLanded(t, url, certs[i])
		n := fetchedByProcess(t, clients[i], url)
		if n > len(scalePlats) {
			t.Errorf("serve process %d fetched %d times from the origin, more than once per zip (%d)", i, n, len(scalePlats))
		}
		total += n
	}
	t.Logf("the origin served %d archives to the two processes", w.reg.Count(registrytest.KindArchive))
	if n := w.reg.Count(registrytest.KindArchive); n != total || n < len(scalePlats) {
		t.Errorf("the origin served %d archives; the processes say they fetched %d", n, total)
	}
	ls := run(t, env, append([]string{"ls", place, "-p", pullAddr, "--json"}, flags[2:]...)...)
	if ls.code != 0 || strings.Count(ls.stdout, `"platform"`) != len(scalePlats) {
		t.Errorf("CACHE lists, after both processes landed: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	if r := run(t, env, append([]string{"verify", place, "-p", pullAddr}, flags[2:]...)...); r.code != 0 {
		t.Errorf("verify of CACHE: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// scaleZips are the zips of the world's registry.
func scaleZips(t *testing.T) map[string][]byte {
	zips := map[string][]byte{}
	for _, plat := range scalePlats {
		zips[plat] = bigProviderZip(t, pullAddr, "1.0.0", plat).Zip
	}
	return zips
}

// Two serve processes on one versitygw bucket, many clients through both
// at once: every client gets every zip whole, each process fetches each
// zip from the origin at most once, and the bucket's documents list every
// zip, which verifies.
func TestPullThroughTwoProcessesOnOneBucket(t *testing.T) {
	zips := scaleZips(t)
	w := newPullWorldWith(t, registrytest.Faults{}, zips)
	s3 := newS3World(t)
	ca := caFile(t, w.reg.CertPEM(), readPEM(t, s3.srv.Args()[3]))
	env := append(append(cleanEnv(t), s3.srv.Env()...), "SSL_CERT_FILE="+w.ca, "SSL_CERT_DIR="+filepath.Dir(w.ca))
	convergeOn(t, w, zips, env, s3.place("cache"), "--listing-ttl", "1h", "--s3-endpoint", s3.srv.Args()[1], "--ca-cert", ca)
}

// The same with two serve processes on one OCI repository (the
// distribution registry).
func TestPullThroughTwoProcessesOnOneOCIRepository(t *testing.T) {
	zips := scaleZips(t)
	w := newPullWorldWith(t, registrytest.Faults{}, zips)
	reg := ocitest.New(t)
	ca := caFile(t, w.reg.CertPEM(), readPEM(t, reg.CAFile()))
	env := append(cleanEnv(t), "SSL_CERT_FILE="+w.ca, "SSL_CERT_DIR="+filepath.Dir(w.ca))
	convergeOn(t, w, zips, env, "oci://"+reg.Host()+"/tf/${hostname}/${namespace}/${type}", "--listing-ttl", "1h", "--ca-cert", ca)
}

func readPEM(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A serve process killed (SIGKILL) while it fetches leaves nothing of the
// fetch behind: no zip, no staging file in CACHE, no spool file; a new
// process then fetches and lands the zip whole.
func TestPullThroughKilledMidFetchLeavesNothing(t *testing.T) {
	host := scalePlats[0]
	zips := scaleZips(t)
	w := newPullWorldWith(t, registrytest.Faults{}, zips)
	release, half := make(chan struct{}), make(chan struct{})
	var once gosync.Once
	w.reg.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ".zip") {
				rw = &halfWriter{ResponseWriter: rw, half: func() { once.Do(func() { close(half) }) }, wait: release}
			}
			next.ServeHTTP(rw, r)
		})
	})
	cache := filepath.Join(t.TempDir(), "cache")
	spool := t.TempDir()
	cert := filepath.Join(t.TempDir(), "serve-ca.pem")
	// One kill, at a moment drawn within a window while the fetch is held
	// half sent (the origin sends the rest only once release is closed).
	var stdout io.ReadCloser
	killtest.Kills{
		Start: func(t *testing.T, _ int) *exec.Cmd {
			cmd := exec.Command(tfmirrorBin, "serve", cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--addr", "127.0.0.1:0", "--cert-out", cert, "--spool-dir", spool)
			cmd.Env = append(os.Environ(), w.env...)
			stdout, _ = cmd.StdoutPipe()
			return cmd
		},
		Ready: func(t *testing.T, k *killtest.Kill) {
			url := ""
			sc := bufio.NewScanner(stdout)
			for sc.Scan() && url == "" {
				if i := strings.Index(sc.Text(), " at https://"); i >= 0 && strings.HasPrefix(sc.Text(), "Serving ") {
					url = sc.Text()[i+len(" at "):]
				}
			}
			if url == "" {
				t.Fatal("serve said not where it serves")
			}
			go io.Copy(io.Discard, stdout)
			c := pullClient(readPEM(t, cert))
			go func() {
				if resp, err := c.Get(url + pullAddr + "/terraform-provider-alpha_1.0.0_" + host + ".zip"); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			select {
			case <-half:
			case <-k.Exited:
				t.Fatal("serve ended before the fetch started")
			case <-time.After(time.Minute): // a bound for a loaded machine
				t.Fatal("the fetch did not start")
			}
		},
		Window: 100 * time.Millisecond, N: 1, MaxAttempts: 1,
	}.Run(t)
	var left []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".tfmirror-lock") {
			left = append(left, p)
		}
		return nil
	})
	if spooled, _ := os.ReadDir(spool); len(spooled) > 0 {
		left = append(left, spool+"/"+spooled[0].Name())
	}
	if len(left) > 0 {
		t.Errorf("left behind by a process killed mid-fetch: %v", left)
	}

	// A new process fetches the zip again and lands it whole.
	close(release)
	url, cert, _ := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1")
	caPEM := readPEM(t, cert)
	resp, err := pullClient(caPEM).Get(url + pullAddr + "/terraform-provider-alpha_1.0.0_" + host + ".zip")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(b, zips[host]) {
		t.Fatalf("after the kill: %d bytes (%v), not the zip", len(b), err)
	}
	waitLanded(t, url, caPEM)
	if got := cacheZips(t, cache); len(got) != 1 {
		t.Errorf("CACHE holds %v after a new process fetched the zip", got)
	}
}

// halfWriter writes the first half of the first write, tells half, and
// waits for wait before the rest.
type halfWriter struct {
	http.ResponseWriter
	half    func()
	wait    chan struct{}
	started bool
}

func (h *halfWriter) Write(b []byte) (int, error) {
	if h.started || len(b) < 2 {
		return h.ResponseWriter.Write(b)
	}
	h.started = true
	n, err := h.ResponseWriter.Write(b[:len(b)/2])
	if err != nil {
		return n, err
	}
	http.NewResponseController(h.ResponseWriter).Flush()
	h.half()
	<-h.wait
	m, err := h.ResponseWriter.Write(b[len(b)/2:])
	return n + m, err
}

// With min_age and a bucket CACHE, the first sighting of each version is
// a note in the bucket, written conditionally: two serve processes on the
// bucket hold a new version back with the same reason and the same time,
// and the bucket's listing does not take the note for a provider.
func TestPullThroughCooldownRecordedInTheBucket(t *testing.T) {
	w := newPullWorld(t, registrytest.Faults{})
	s3 := newS3World(t)
	ca := caFile(t, w.reg.CertPEM(), readPEM(t, s3.srv.Args()[3]))
	env := append(append(cleanEnv(t), s3.srv.Env()...), "SSL_CERT_FILE="+w.ca, "SSL_CERT_DIR="+filepath.Dir(w.ca))
	heldBackTwice(t, env, s3.place("cache"), "--s3-endpoint", s3.srv.Args()[1], "--ca-cert", ca)
	if keys := s3.listKeys(t, "cache/.tfmirror-notes/first-seen/"); len(keys) != 1 {
		t.Errorf("notes in the bucket: %v, want the provider's first-seen document", keys)
	}
	r := run(t, env, "ls", s3.place("cache"), "--s3-endpoint", s3.srv.Args()[1], "--ca-cert", ca)
	if strings.Contains(r.stderr, "notes") {
		t.Errorf("the bucket's listing takes the note for something: exit %d\n%s", r.code, r.stderr)
	}
}

// The same with an OCI CACHE: the sighting is a note in the provider's
// repository, and a second process (started after the first saw the
// version) holds it back for the same reason.
func TestPullThroughCooldownRecordedInTheOCIRepository(t *testing.T) {
	w := newPullWorld(t, registrytest.Faults{})
	reg := ocitest.New(t)
	ca := caFile(t, w.reg.CertPEM(), readPEM(t, reg.CAFile()))
	env := append(cleanEnv(t), "SSL_CERT_FILE="+w.ca, "SSL_CERT_DIR="+filepath.Dir(w.ca))
	heldBackTwice(t, env, "oci://"+reg.Host()+"/tf/${hostname}/${namespace}/${type}", "--ca-cert", ca)
	// Written once, by the first; the second read it and had nothing to add.
	tag := "/manifests/" + oci.NoteTag("first-seen/"+pullAddr+".json")
	if n := reg.Count(http.MethodPut, tag) - reg.Count(http.MethodPut, tag+"-"); n != 1 {
		t.Errorf("the first-seen note was pushed %d times, want once", n)
	}
}

// heldBackTwice starts two serve processes of cache (with flags) in turn,
// each with a min_age policy, and fails unless both hold the provider's
// version back with the same reason (the same first-seen time).
func heldBackTwice(t *testing.T, env []string, cache string, flags ...string) {
	t.Helper()
	policy := writeFile(t, t.TempDir(), "policy.hcl", "min_age = \"24h\"\n\nprovider \""+pullAddr+"\" {\n  versions = \">= 1.0\"\n}\n")
	var reasons []string
	for range 2 {
		url, cert, _ := startServeWith(t, env, append([]string{cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--spec", policy}, flags...)...)
		resp, err := pullClient(readPEM(t, cert)).Get(url + pullAddr + "/index.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.Contains(string(b), "first seen") {
			t.Fatalf("index.json within the cooldown: %d %q", resp.StatusCode, b)
		}
		reasons = append(reasons, string(b))
	}
	if reasons[0] != reasons[1] {
		t.Errorf("the two processes disagree on when the version was first seen:\n%s%s", reasons[0], reasons[1])
	}
}
