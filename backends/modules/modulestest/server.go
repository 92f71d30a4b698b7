package modulestest

import (
	"context"
	"crypto/x509"
	"encoding/json"
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
	"testing"

	"github.com/hashicorp/go-version"
)

// Style is how the registry answers a download request.
type Style int

const (
	// Body: 200 with {"location": "..."}.
	Body Style = iota
	// Header204: 204 No Content with X-Terraform-Get.
	Header204
	// HeaderEmptyJSON: 200 with "{}" and X-Terraform-Get.
	HeaderEmptyJSON
	// Direct: 200 with {"location": "...", "use_registry_credentials": ...}.
	Direct
	// BadBody: 200 with a body that is not JSON and X-Terraform-Get, which
	// the clients refuse.
	BadBody
)

// Download is the answer for one version.
type Download struct {
	Location string
	Style    Style
	// UseCreds is the use_registry_credentials value of a Direct answer.
	UseCreds bool
}

// Server is a running module registry. It stops when the test ends.
type Server struct {
	srv    *httptest.Server
	caFile string

	mu       sync.Mutex
	base     string
	listed   map[string][]string            // NS/NAME/SYSTEM -> versions as listed
	download map[string]map[string]Download // NS/NAME/SYSTEM -> canonical version -> answer
	handlers map[string]http.HandlerFunc
	token    string
	reqs     []string
	seen     []Seen
}

// Seen is one request the server answered, with the credentials it carried.
type Seen struct {
	// Host is the Host header: the name the client asked for.
	Host string
	// Path is the URL path.
	Path string
	// Authorization is the Authorization header, "" when none came.
	Authorization string
}

// New starts a registry whose modules.v1 endpoint is /v1/modules/.
func New(t testing.TB) *Server {
	t.Helper()
	s := start(t, true)
	srv := s.srv
	s.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(s.caFile, pemBytes, 0o644); err != nil {
		t.Fatalf("modulestest: %v", err)
	}
	return s
}

// NewPlain starts the same registry over plain HTTP (no CA file), to be
// named by another registry's discovery document or a redirect.
func NewPlain(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

func start(t testing.TB, tls bool) *Server {
	s := &Server{base: "/v1/modules/", listed: map[string][]string{}, download: map[string]map[string]Download{}, handlers: map[string]http.HandlerFunc{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("modulestest: listen: %v", err)
	}
	_ = srv.Listener.Close() // replaced by l, unused
	srv.Listener = l
	// Clients that give up mid-handshake (a test's binary exiting) are
	// normal here, not worth a log line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	s.srv = srv
	return s
}

// Host returns 127.0.0.1:PORT.
func (s *Server) Host() string { return s.srv.Listener.Addr().String() }

// URL returns https://127.0.0.1:PORT.
func (s *Server) URL() string { return s.srv.URL }

// Client returns an HTTP client that trusts the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Names returns a client that reaches servers by names of their own: each
// key, HOST:PORT as a URL implies it (e.g. "registry.example.com:443",
// "cdn.example.com:443", "registry.example.com:80"), is dialled at its
// server's loopback address. Every name under example.com is covered by the
// servers' certificate, so tests can put a registry and a package on
// different hosts, ports and schemes without leaving 127.0.0.1.
func Names(names map[string]*Server) *http.Client {
	var any *Server
	addrs := map[string]string{}
	for name, s := range names {
		addrs[name] = s.Host()
		if s.srv.TLS != nil {
			any = s
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if any != nil {
		tr.TLSClientConfig = any.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := addrs[addr]; ok {
			addr = to
		}
		if h, _, _ := net.SplitHostPort(addr); h != "127.0.0.1" {
			return nil, fmt.Errorf("modulestest: %s is not one of the test's servers", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// RootCAs returns a pool holding the server's certificate.
func (s *Server) RootCAs() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.srv.Certificate())
	return p
}

// CAFile returns a PEM file of the server's certificate (SSL_CERT_FILE).
func (s *Server) CAFile() string { return s.caFile }

// SetBase changes the modules.v1 path the discovery document names (it
// may be relative to the document, or absolute).
func (s *Server) SetBase(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base = base
}

// RequireToken makes every registry API request need "Bearer token".
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// Add lists a version of NS/NAME/SYSTEM (as listed, e.g. "v1.2") and
// sets the download answer for its canonical form.
func (s *Server) Add(module, listed string, d Download) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed[module] = append(s.listed[module], listed)
	if v, err := version.NewVersion(listed); err == nil {
		if s.download[module] == nil {
			s.download[module] = map[string]Download{}
		}
		s.download[module][v.String()] = d
	}
}

// List sets the raw version strings of a module without download answers
// (for versions that do not parse).
func (s *Server) List(module string, listed ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed[module] = append(s.listed[module], listed...)
}

// File serves b at path (for package archives).
func (s *Server) File(path string, b []byte) {
	s.Handle(path, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(b) })
}

// Handle serves path with h (exact path match).
func (s *Server) Handle(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[path] = h
}

// Requests returns "METHOD PATH?QUERY" for each request served, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// Seen returns each request served, in order, with its Authorization
// header.
func (s *Server) Seen() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.seen...)
}

// Count returns how many requests had a path containing fragment.
func (s *Server) Count(fragment string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.Contains(r, fragment) {
			n++
		}
	}
	return n
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	line := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		line += "?" + r.URL.RawQuery
	}
	s.reqs = append(s.reqs, line)
	s.seen = append(s.seen, Seen{Host: r.Host, Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
	base, token := s.base, s.token
	h := s.handlers[r.URL.Path]
	s.mu.Unlock()

	if h != nil {
		h(w, r)
		return
	}
	if r.URL.Path == "/.well-known/terraform.json" {
		writeJSON(w, http.StatusOK, map[string]string{"modules.v1": base})
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/v1/modules/") {
		http.NotFound(w, r)
		return
	}
	if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
		http.Error(w, `{"errors":["unauthorized"]}`, http.StatusUnauthorized)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/modules/"), "/")
	switch {
	case len(parts) == 4 && parts[3] == "versions":
		s.versions(w, strings.Join(parts[:3], "/"))
	case len(parts) == 5 && parts[4] == "download":
		s.downloadAnswer(w, strings.Join(parts[:3], "/"), parts[3])
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) versions(w http.ResponseWriter, module string) {
	s.mu.Lock()
	listed, ok := s.listed[module]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, nil)
		return
	}
	type v struct {
		Version string `json:"version"`
	}
	var vs []v
	for _, l := range listed {
		vs = append(vs, v{l})
	}
	writeJSON(w, http.StatusOK, map[string]any{"modules": []any{map[string]any{"versions": vs}}})
}

func (s *Server) downloadAnswer(w http.ResponseWriter, module, ver string) {
	s.mu.Lock()
	d, ok := s.download[module][ver]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, nil)
		return
	}
	switch d.Style {
	case Body:
		writeJSON(w, http.StatusOK, map[string]string{"location": d.Location})
	case Header204:
		w.Header().Set("X-Terraform-Get", d.Location)
		w.WriteHeader(http.StatusNoContent)
	case HeaderEmptyJSON:
		w.Header().Set("X-Terraform-Get", d.Location)
		writeJSON(w, http.StatusOK, map[string]string{})
	case Direct:
		writeJSON(w, http.StatusOK, map[string]any{"location": d.Location, "use_registry_credentials": d.UseCreds})
	case BadBody:
		w.Header().Set("X-Terraform-Get", d.Location)
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "ok")
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client reports what it got
}
