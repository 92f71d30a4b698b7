package netmirror_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/tlscert"
	"github.com/tfmirror/tfmirror/hashing"
)

// pkg names one packed archive to put in a test mirror.
type pkg struct{ host, ns, typ, version, platform string }

func (p pkg) path(dir string) string {
	return filepath.Join(dir, p.host, p.ns, p.typ, "terraform-provider-"+p.typ+"_"+p.version+"_"+p.platform+".zip")
}

// writeMirror writes release zips into a filesystem mirror directory (no
// index documents) and returns their bytes by package.
func writeMirror(t testing.TB, dir string, pkgs ...pkg) map[pkg][]byte {
	t.Helper()
	out := map[pkg][]byte{}
	for _, p := range pkgs {
		zb := registrytest.ProviderZip(p.typ, p.version, p.platform)
		if err := os.MkdirAll(filepath.Dir(p.path(dir)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p.path(dir), zb, 0o644); err != nil {
			t.Fatal(err)
		}
		out[p] = zb
	}
	return out
}

// serveDir serves dir with the handler over TLS on 127.0.0.1.
func serveDir(t testing.TB, dir string) (*httptest.Server, *netmirror.Handler, *backendtest.Buffer) {
	t.Helper()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return servePlace(t, m)
}

// servePlace serves any place with the handler over TLS on 127.0.0.1.
func servePlace(t testing.TB, r backends.Reader) (*httptest.Server, *netmirror.Handler, *backendtest.Buffer) {
	t.Helper()
	logs := &backendtest.Buffer{}
	h := netmirror.NewHandler(r, log.New(logs, "", 0), hashing.Options{})
	// The certificate `tfmirror serve` makes, not httptest's RSA one: the
	// handshake cost is part of what the benchmark measures.
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, h, logs
}

// tlsServer runs handler over TLS on 127.0.0.1.
func tlsServer(t testing.TB, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// clients holds one client per test server, as a process holds one.
var clients gosync.Map

func clientFor(srv *httptest.Server) *http.Client {
	if c, ok := clients.Load(srv); ok {
		return c.(*http.Client)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c, _ := clients.LoadOrStore(srv, &http.Client{Transport: httpclient.NewTransport(pool)})
	return c.(*http.Client)
}

func openMirror(t testing.TB, srv *httptest.Server, url string, creds backends.Credentials) *netmirror.Mirror {
	t.Helper()
	m, err := netmirror.Open(url, netmirror.Options{HTTP: httpclient.Client{HTTP: clientFor(srv), Timeout: 5 * time.Second}, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustProvider and mustVersion parse, failing the test on bad input.
var (
	mustProvider = backendtest.Provider
	mustVersion  = backendtest.Version
)

func sumsOf(t testing.TB, zb []byte) hashing.Sums {
	t.Helper()
	f := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(f, zb, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := hashing.HashPath(f, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var bg = context.Background()
