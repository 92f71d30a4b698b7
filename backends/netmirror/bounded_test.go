package netmirror_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
)

// Oversized requests get an answer, not a dropped connection: a 64 KB
// URL a 414, over HTTP/2 (as the clients speak) and HTTP/1.1, and headers
// over MaxHeaderBytes a 431 (over HTTP/1.1: an HTTP/2 client keeps to the
// limit the server advertises).
func TestOversizedRequestsAreAnswered(t *testing.T) {
	dir := t.TempDir()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	certOut := filepath.Join(t.TempDir(), "cert.pem")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan netmirror.Serving, 1)
	done := make(chan error, 1)
	go func() {
		done <- netmirror.Serve(ctx, m, netmirror.ServeOptions{Addr: "127.0.0.1:0", CertOut: certOut, Ready: func(s netmirror.Serving) { ready <- s }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	s := <-ready
	pem, _ := os.ReadFile(certOut)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	long := s.URL + strings.Repeat("x/", 32<<10) + "index.json"
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		c := &http.Client{Transport: tr}
		resp, err := c.Get(long)
		if err != nil {
			t.Fatalf("a 64 KB URL (HTTP/2 %v): %v", h2, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestURITooLong || !strings.Contains(string(body), "414") {
			t.Errorf("a 64 KB URL (HTTP/2 %v): %d %q", h2, resp.StatusCode, body)
		}
		if h2 {
			continue // an HTTP/2 client does not send more than the server's advertised limit
		}
		req, _ := http.NewRequest(http.MethodGet, s.URL+"example.com/acme/alpha/index.json", nil)
		req.Header.Set("X-Big", strings.Repeat("y", 2*netmirror.MaxHeaderBytes))
		resp, err = c.Do(req)
		if err != nil {
			t.Fatalf("headers over MaxHeaderBytes (HTTP/2 %v): %v", h2, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("headers over MaxHeaderBytes (HTTP/2 %v): %d", h2, resp.StatusCode)
		}
	}
}

// Once the server drains, a request is answered 503 with what to do.
func TestDrainingIs503(t *testing.T) {
	stopping := make(chan struct{})
	h := netmirror.Bounded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), stopping)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 {
		t.Fatalf("before draining: %d", rec.Code)
	}
	close(stopping)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "try again") || rec.Header().Get("Retry-After") == "" {
		t.Errorf("while draining: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
}

// A stop says how it went: the requests in flight when it began, and
// those the drain cut short.
func TestStopSaysWhatItDrained(t *testing.T) {
	for _, c := range []struct {
		name  string
		drain time.Duration
		want  string
	}{
		{"finished", time.Minute, "1 request in flight finished"},
		{"cut", 10 * time.Millisecond, "1 of 1 request in flight cut short after a drain of 10ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				select {
				case <-release:
				case <-r.Context().Done():
				}
				io.WriteString(w, "ok")
			})
			certOut := filepath.Join(t.TempDir(), "cert.pem")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready, stopped := make(chan netmirror.Serving, 1), make(chan netmirror.Drained, 1)
			done := make(chan error, 1)
			go func() {
				done <- netmirror.Serve(ctx, nil, netmirror.ServeOptions{Addr: "127.0.0.1:0", CertOut: certOut, Handler: h, Drain: c.drain,
					Ready: func(s netmirror.Serving) { ready <- s }, Stopped: func(d netmirror.Drained) { stopped <- d }})
			}()
			s := <-ready
			pem, _ := os.ReadFile(certOut)
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pem)
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			go func() {
				if resp, err := client.Get(s.URL + "slow"); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			<-entered
			cancel()
			if c.drain == time.Minute {
				close(release) // it finishes while the server drains
			} else {
				defer close(release) // held past the drain
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if d := <-stopped; d.String() != c.want {
				t.Errorf("the stop: %q (%+v), want %q", d, d, c.want)
			}
		})
	}
}
