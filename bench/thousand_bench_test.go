package bench

import (
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/tlscert"
)

// BenchmarkThousandClients has 1,000 clients at once, each on a connection
// of its own (as 1,000 terraform init runs are), ask a mirror for a
// provider's index.json, then its VERSION.json, then an archive (the first
// byte, then it hangs up: the bytes are the throughput benchmarks'
// business). The mirror is a published tree (tfmirror publish, 1 version x
// 4 platforms) served by `tfmirror serve DIR` and by Debian's nginx with
// docs/publish.md's configuration, in turns, ROUNDS times (default 2);
// p50/p99 of each request's time, medians over the rounds (target: p99
// within 1.25x nginx's).
func BenchmarkThousandClients(b *testing.B) {
	bin := buildTfmirror(b)
	d := b.TempDir()
	src, site := filepath.Join(d, "src"), filepath.Join(d, "site")
	plats := []string{"darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}
	backendtest.WritePacked(b, src, backendtest.Seeds(b, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, plats))
	if out, err := exec.Command(bin, "publish", src, site).CombinedOutput(); err != nil {
		b.Fatalf("publish: %v\n%s", err, out)
	}
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cert, key := filepath.Join(d, "cert.pem"), filepath.Join(d, "key.pem")
	if err := os.WriteFile(cert, certPEM, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	ng := backendtest.Nginx(b, site, cert, key, backendtest.NginxStatic)
	srv := startServer(b, exec.Command(bin, "serve", site, "--addr", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key), pool)
	defer srv.stop()
	rounds := 2
	fmt.Sscan(os.Getenv("ROUNDS"), &rounds)
	kinds := []string{"index.json", "VERSION.json", "archive's first byte"}
	p := map[string][][]float64{} // by server: [kind][round] p50, p99
	for range b.N {
		for r := range rounds {
			order := []string{"tfmirror", "nginx"}
			if r%2 == 1 {
				order = []string{"nginx", "tfmirror"}
			}
			for _, name := range order {
				url := map[string]string{"tfmirror": srv.url, "nginx": ng}[name]
				lat := thousand(b, pool, url, plats)
				for k := range kinds {
					p[name+" p50"] = append(p[name+" p50"], []float64{percentile(lat[k], 50).Seconds()})
					p[name+" p99"] = append(p[name+" p99"], []float64{percentile(lat[k], 99).Seconds()})
				}
			}
		}
	}
	for k, kind := range kinds {
		med := func(key string) float64 {
			var ds []time.Duration
			for i := k; i < len(p[key]); i += len(kinds) {
				ds = append(ds, time.Duration(p[key][i][0]*1e9))
			}
			return percentile(ds, 50).Seconds()
		}
		b.Logf("1,000 clients, %-21s tfmirror p50 %.3fs p99 %.3fs; nginx p50 %.3fs p99 %.3fs: p99 %.2fx nginx's (target <= 1.25)",
			kind+":", med("tfmirror p50"), med("tfmirror p99"), med("nginx p50"), med("nginx p99"), med("tfmirror p99")/med("nginx p99"))
	}
}

// thousand runs the 1,000 clients against the mirror at url, all released
// at once, and returns each request's time by kind (index.json,
// VERSION.json, an archive's first byte).
func thousand(b *testing.B, pool *x509.CertPool, url string, plats []string) [3][]time.Duration {
	const n = 1000
	var lat [3][]time.Duration
	for k := range lat {
		lat[k] = make([]time.Duration, n)
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg gosync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := client(pool) // a connection of its own
			defer c.CloseIdleConnections()
			<-start
			paths := []string{"example.com/acme/alpha/index.json", "example.com/acme/alpha/1.0.0.json",
				"example.com/acme/alpha/terraform-provider-alpha_1.0.0_" + plats[i%len(plats)] + ".zip"}
			for k, path := range paths {
				t0 := time.Now()
				var first time.Duration
				req, _ := http.NewRequest(http.MethodGet, url+path, nil)
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
					GotFirstResponseByte: func() { first = time.Since(t0) }}))
				resp, err := c.Do(req)
				if err != nil {
					errs <- err
					return
				}
				if k < 2 {
					io.Copy(io.Discard, resp.Body)
					first = time.Since(t0) // a document: the whole of it
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("%s%s: %d", url, path, resp.StatusCode)
				}
				lat[k][i] = first
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return lat
}
