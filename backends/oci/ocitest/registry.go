package ocitest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"

	// The storage driver and access controller register themselves by name.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

// Options configure a Registry.
type Options struct {
	// PlainHTTP serves plain HTTP instead of TLS (clients then need their
	// plain-http switch).
	PlainHTTP bool
	// Users, when set, turns on HTTP basic authentication (htpasswd) with
	// these user names and passwords; anonymous requests get 401.
	Users map[string]string
	// Logs keeps the registry's own log output (off by default: it is
	// verbose and only useful when debugging the registry itself).
	Logs bool
	// TornWrites stores small files (the links that name blobs, manifests
	// and tags in a repository) as distribution 2.8's filesystem driver
	// did: truncated in place, then written (distribution/distribution#4478,
	// fixed in 3.0 by a rename). A request that reads such a link meanwhile
	// finds it empty, so concurrent pushes of one blob get answers such as
	// MANIFEST_BLOB_UNKNOWN or DIGEST_INVALID, as from Debian's
	// docker-registry. The registry pauses briefly between the two steps, so
	// that tests meet the window as often as busy production registries do.
	TornWrites bool
	// NoDelete turns deletes off (storage.delete.enabled false, the
	// distribution registry's default): DELETE requests are answered 405
	// UNSUPPORTED.
	NoDelete bool
}

// Request is one request the registry served.
type Request struct {
	Method string
	Path   string
	Status int
}

func (r Request) String() string { return fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status) }

// Registry is a running registry. It stops when the test ends.
type Registry struct {
	// PlainHTTP reports whether the registry speaks plain HTTP.
	PlainHTTP bool

	server  *httptest.Server
	root    string
	caFile  string
	mu      sync.Mutex
	reqs    []Request
	tamper  func(http.ResponseWriter, *http.Request) bool
	tamperM sync.Mutex

	handshakes atomic.Int32
}

// New starts a registry over TLS, anonymous, with logs off.
func New(t testing.TB) *Registry { return NewWithOptions(t, Options{}) }

// NewWithOptions starts a registry configured by o.
func NewWithOptions(t testing.TB, o Options) *Registry {
	t.Helper()
	if !o.Logs {
		// The registry logs through logrus's standard logger; its context
		// logger is internal to the distribution module, so this is the only
		// switch there is.
		logrus.SetOutput(io.Discard)
	}
	dir := t.TempDir()
	r := &Registry{PlainHTTP: o.PlainHTTP, root: filepath.Join(dir, "storage")}

	cfg := r.config(t, o, dir)
	ctx, cancel := context.WithCancel(context.Background())
	app := handlers.NewApp(ctx, cfg)

	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			r.mu.Lock()
			r.reqs = append(r.reqs, Request{Method: req.Method, Path: req.URL.Path, Status: rec.status})
			r.mu.Unlock()
		}()
		r.tamperM.Lock()
		tamper := r.tamper
		r.tamperM.Unlock()
		if tamper != nil && tamper(rec, req) {
			return
		}
		app.ServeHTTP(rec, req)
	})

	srv := httptest.NewUnstartedServer(handler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("ocitest: listen: %v", err)
	}
	_ = srv.Listener.Close() // replaced by l, unused
	srv.Listener = l
	if !o.Logs {
		// Clients that hang up mid-handshake (tests of TLS failures) would
		// otherwise print to stderr.
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	}
	if o.PlainHTTP {
		srv.Start()
	} else {
		srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			r.handshakes.Add(1)
			return nil, nil
		}}
		srv.StartTLS()
		r.caFile = filepath.Join(dir, "ca.pem")
		cert := srv.Certificate()
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
		if err := os.WriteFile(r.caFile, pemBytes, 0o644); err != nil {
			t.Fatalf("ocitest: %v", err)
		}
	}
	r.server = srv
	t.Cleanup(func() {
		srv.Close()
		_ = app.Shutdown() // the test is over
		cancel()
	})
	return r
}

// config is the distribution registry's configuration: filesystem storage
// that can delete (unless NoDelete), the torn-writes middleware and htpasswd users when the
// options ask for them.
func (r *Registry) config(t testing.TB, o Options, dir string) *configuration.Configuration {
	t.Helper()
	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{
		"filesystem":  configuration.Parameters{"rootdirectory": r.root},
		"delete":      configuration.Parameters{"enabled": !o.NoDelete},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	if o.TornWrites {
		registerTornWrites()
		cfg.Middleware = map[string][]configuration.Middleware{"storage": {{Name: tornWritesName}}}
	}
	cfg.HTTP.Secret = "ocitest-not-a-secret"
	cfg.Catalog.MaxEntries = 1000 // the YAML loader's default; zero lists nothing
	if len(o.Users) > 0 {
		htpasswd := filepath.Join(dir, "htpasswd")
		var buf bytes.Buffer
		for user, pass := range o.Users {
			h, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
			if err != nil {
				t.Fatalf("ocitest: %v", err)
			}
			fmt.Fprintf(&buf, "%s:%s\n", user, h)
		}
		if err := os.WriteFile(htpasswd, buf.Bytes(), 0o600); err != nil {
			t.Fatalf("ocitest: %v", err)
		}
		cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "ocitest", "path": htpasswd}}
	}

	return cfg
}

// Host returns the registry's address as a client names it: 127.0.0.1:PORT.
func (r *Registry) Host() string { return r.server.Listener.Addr().String() }

// URL returns the registry's base URL (http:// or https://).
func (r *Registry) URL() string { return r.server.URL }

// CAFile returns a PEM file holding the certificate the registry serves, for
// SSL_CERT_FILE or a client's root pool; "" for a plain HTTP registry.
func (r *Registry) CAFile() string { return r.caFile }

// RootCAs returns a pool that trusts the registry's certificate (nil for
// plain HTTP).
func (r *Registry) RootCAs() *x509.CertPool {
	if r.PlainHTTP {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(r.server.Certificate())
	return pool
}

// TLSConfig returns a client TLS configuration that trusts the registry.
func (r *Registry) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: r.RootCAs(), MinVersion: tls.VersionTLS12}
}

// Client returns an HTTP client that trusts the registry.
func (r *Registry) Client() *http.Client { return r.server.Client() }

// Handshakes returns how many TLS handshakes clients began, including those
// that failed (a client that does not trust the certificate makes no
// request, but it does begin one).
func (r *Registry) Handshakes() int { return int(r.handshakes.Load()) }

// Requests returns the requests served so far, in order.
func (r *Registry) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// ResetRequests forgets the requests served so far.
func (r *Registry) ResetRequests() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

// Count returns how many requests so far had the method and a path that
// contains the fragment, e.g. Count("POST", "/blobs/uploads/").
func (r *Registry) Count(method, fragment string) int {
	n := 0
	for _, q := range r.Requests() {
		if q.Method == method && strings.Contains(q.Path, fragment) {
			n++
		}
	}
	return n
}

// BlobUploads counts blob uploads started (POST .../blobs/uploads/), the
// request a client makes before sending any blob bytes.
func (r *Registry) BlobUploads() int { return r.Count(http.MethodPost, "/blobs/uploads/") }

// CorruptBlob overwrites the stored bytes of a blob in place, keeping their
// length, so the registry serves content that does not match its digest (a
// damaged disk or a tampering proxy). digest is "sha256:HEX".
func (r *Registry) CorruptBlob(t testing.TB, digest string) {
	t.Helper()
	algo, hex, ok := strings.Cut(digest, ":")
	if !ok || len(hex) < 2 {
		t.Fatalf("ocitest: bad digest %q", digest)
	}
	p := filepath.Join(r.root, "docker", "registry", "v2", "blobs", algo, hex[:2], hex, "data")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("ocitest: corrupt %s: %v", digest, err)
	}
	for i := range b {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatalf("ocitest: corrupt %s: %v", digest, err)
	}
}

// Intercept installs a function that sees each request before the registry
// does; when it returns true it has answered the request itself. Tests use
// it to simulate proxies and broken servers; nil removes it.
func (r *Registry) Intercept(f func(w http.ResponseWriter, req *http.Request) bool) {
	r.tamperM.Lock()
	defer r.tamperM.Unlock()
	r.tamper = f
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
