package registrytest

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// Provider is a provider the registry serves.
type Provider struct {
	Namespace string
	Type      string
	Versions  []Version
}

// Version is one release of a provider.
type Version struct {
	Version string
	// Protocols are the plugin protocol versions; nil means ["5.0"].
	Protocols []string
	// Archives are the release zips by platform (os_arch).
	Archives map[string][]byte
}

// Faults make the registry misbehave. The zero value is a correct registry.
type Faults struct {
	// TamperArchive serves each zip with one byte of its first file changed
	// (same size, so only its hash gives it away).
	TamperArchive bool
	// TamperSums changes a digit of each SHA256SUMS after it was signed.
	TamperSums bool
	// UnknownKey signs SHA256SUMS with a key the registry does not list.
	UnknownKey bool
	// MissingSig answers 404 for the signature files.
	MissingSig bool
	// ContentType, when set, is the Content-Type of the API's JSON answers
	// (versions and download metadata).
	ContentType string
	// RedirectLoop makes API requests redirect to themselves forever.
	RedirectLoop bool
	// APIStatus, when set, is the status of every API request (not
	// discovery), e.g. 500.
	APIStatus int
	// NoPackages leaves out the OpenTofu 1.12 "packages" field.
	NoPackages bool
	// UnsignedPackages makes the packages field list, for every platform
	// but the one asked for, a zh: (and h1:) of another zip than the one
	// SHA256SUMS signs.
	UnsignedPackages bool
	// WrongPackagesH1 makes the packages field list, for every platform,
	// the right zh: beside an h1: of another package.
	WrongPackagesH1 bool
	// NoSigningKeys leaves out the signing keys.
	NoSigningKeys bool
}

// Options configure a Server.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer <Token>" on
	// discovery and API requests; without it they answer 401.
	Token string
	// AbsoluteDiscovery advertises providers.v1 as an absolute URL rather
	// than the usual relative path.
	AbsoluteDiscovery bool
	Faults            Faults
	// Addr, when set, is where the API server listens (e.g. 127.0.0.1:443,
	// for provider addresses without a port, which the clients' network
	// mirror protocol needs); by default a free port of 127.0.0.1. The
	// release files are served from a free port either way.
	Addr string
	// ManifestLine adds to each release's SHA256SUMS the line of a file
	// that is no package, as HashiCorp's releases list
	// terraform-provider-TYPE_VERSION_manifest.json: the clients lock its
	// zh: too.
	ManifestLine bool
}

// Kind is a kind of request, for counting.
type Kind string

const (
	KindDiscovery Kind = "discovery"
	KindVersions  Kind = "versions"
	KindDownload  Kind = "download" // download metadata
	KindSums      Kind = "shasums"
	KindSig       Kind = "signature"
	KindArchive   Kind = "archive"
	KindOther     Kind = "other"
)

// Request is one request the registry answered.
type Request struct {
	Kind          Kind
	Host          string // the server's host:port
	Path          string
	Authorization string
}

// Server is a running registry. It stops when the test ends.
type Server struct {
	api, files *httptest.Server
	opts       Options
	key, other *openpgp.Entity
	armored    string

	releases map[string]*release // "ns/type/version"
	order    []string

	mu       sync.Mutex
	faults   Faults
	requests []Request
	bytes    int64
	wrap     func(next http.Handler) http.Handler

	handshakes atomic.Int32
}

type release struct {
	ns, typ   string
	version   string
	protocols []string
	zips      map[string][]byte   // by platform
	digests   map[string][32]byte // SHA-256 of each zip, computed once
	h1s       map[string]string   // h1: of each zip, for packages
	sums      []byte
	sig, sigO []byte // by the registry's key and by the unknown key
}

// ManifestName is the file name of a release's manifest, which ManifestLine
// lists in its SHA256SUMS.
func ManifestName(typ, version string) string {
	return "terraform-provider-" + typ + "_" + version + "_manifest.json"
}

// New starts a correct registry serving providers.
func New(t testing.TB, providers ...Provider) *Server {
	return NewWithOptions(t, Options{}, providers...)
}

// NewWithOptions starts a registry with options.
func NewWithOptions(t testing.TB, opts Options, providers ...Provider) *Server {
	t.Helper()
	s := &Server{opts: opts, faults: opts.Faults, releases: map[string]*release{}}
	var err error
	if s.key, err = NewKey("tfmirror test registry"); err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	if s.other, err = NewKey("someone else"); err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	if s.armored, err = ArmoredPublicKey(s.key); err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	for _, p := range providers {
		for _, v := range p.Versions {
			r := &release{ns: p.Namespace, typ: p.Type, version: v.Version, protocols: v.Protocols, zips: v.Archives}
			if r.protocols == nil {
				r.protocols = []string{"5.0"}
			}
			var plats []string
			for plat := range r.zips {
				plats = append(plats, plat)
			}
			sort.Strings(plats)
			var sums bytes.Buffer
			for _, plat := range plats {
				sum := sha256.Sum256(r.zips[plat])
				if r.digests == nil {
					r.digests = map[string][32]byte{}
				}
				r.digests[plat] = sum
				if r.h1s == nil {
					r.h1s = map[string]string{}
				}
				r.h1s[plat] = zipH1(r.zips[plat])
				fmt.Fprintf(&sums, "%x  %s\n", sum, r.filename(plat))
			}
			if opts.ManifestLine {
				fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256([]byte(`{"version":1,"metadata":{"protocol_versions":["5.0"]}}`)), ManifestName(p.Type, v.Version))
			}
			r.sums = sums.Bytes()
			if r.sig, err = Sign(s.key, r.sums); err != nil {
				t.Fatalf("registrytest: %v", err)
			}
			if r.sigO, err = Sign(s.other, r.sums); err != nil {
				t.Fatalf("registrytest: %v", err)
			}
			key := p.Namespace + "/" + p.Type + "/" + v.Version
			s.releases[key] = r
			s.order = append(s.order, key)
		}
	}
	if s.api, err = s.startTLS(opts.Addr, s.wrapped(http.HandlerFunc(s.serveAPI))); err != nil {
		t.Skipf("registrytest: %v", err)
	}
	if s.files, err = s.startTLS("", s.wrapped(http.HandlerFunc(s.serveFiles))); err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	t.Cleanup(s.api.Close)
	t.Cleanup(s.files.Close)
	return s
}

// startTLS starts an HTTPS server on 127.0.0.1 that counts the TLS
// handshakes clients begin (Handshakes), including those that fail; on
// addr when it is not "".
func (s *Server) startTLS(addr string, h http.Handler) (*httptest.Server, error) {
	srv := httptest.NewUnstartedServer(h)
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
		}
		_ = srv.Listener.Close() // replaced by l, unused
		srv.Listener = l
	}
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		s.handshakes.Add(1)
		return nil, nil
	}}
	// Clients that refuse the certificate hang up mid-handshake; the
	// server would log each to stderr.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv, nil
}

// Handshakes returns how many TLS handshakes clients began with the
// registry's servers, including those that failed (a client that does not
// trust the certificate makes no request, but it does begin one).
func (s *Server) Handshakes() int { return int(s.handshakes.Load()) }

func (r *release) filename(plat string) string {
	return fmt.Sprintf("terraform-provider-%s_%s_%s.zip", r.typ, r.version, plat)
}

func (r *release) sumsName() string {
	return fmt.Sprintf("terraform-provider-%s_%s_SHA256SUMS", r.typ, r.version)
}

// SetFaults switches faults on or off for the requests that follow.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Wrap puts a handler in front of both servers (the API and the release
// files), for faults Faults does not offer: wrap gets the registry's own
// handler and returns the one that answers instead. nil removes it.
func (s *Server) Wrap(wrap func(next http.Handler) http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wrap = wrap
}

func (s *Server) wrapped(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		wrap := s.wrap
		s.mu.Unlock()
		if wrap != nil {
			wrap(next).ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) currentFaults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// Host is the registry's hostname: 127.0.0.1:PORT of the API server, or
// 127.0.0.1 alone where it listens on 443, as the clients write it.
func (s *Server) Host() string { return strings.TrimSuffix(hostOf(s.api.URL), ":443") }

// FilesHost is 127.0.0.1:PORT of the server holding the release files.
func (s *Server) FilesHost() string { return hostOf(s.files.URL) }

// Address returns the provider address HOST/NS/TYPE on this registry.
func (s *Server) Address(ns, typ string) string { return s.Host() + "/" + ns + "/" + typ }

// URL is the API server's base URL.
func (s *Server) URL() string { return s.api.URL }

func hostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// Certificate is the servers' TLS certificate (both use the same one).
func (s *Server) Certificate() *x509.Certificate { return s.api.Certificate() }

// CertPool trusts the servers.
func (s *Server) CertPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return pool
}

// CertPEM is the servers' certificate in PEM, for SSL_CERT_FILE.
func (s *Server) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// Client is an HTTP client that trusts the servers.
func (s *Server) Client() *http.Client { return s.api.Client() }

// KeyID is the signing key's ID as the clients report it.
func (s *Server) KeyID() string { return s.key.PrimaryKey.KeyIdString() }

// OtherKeyID is the ID of the key the UnknownKey fault signs with.
func (s *Server) OtherKeyID() string { return s.other.PrimaryKey.KeyIdString() }

// Fingerprint is the signing key's fingerprint, upper-case hex, as trust
// policies pin it.
func (s *Server) Fingerprint() string { return fingerprint(s.key) }

// OtherFingerprint is the fingerprint of the key the UnknownKey fault
// signs with.
func (s *Server) OtherFingerprint() string { return fingerprint(s.other) }

func fingerprint(e *openpgp.Entity) string {
	return strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
}

// PublicKey is the signing key, ASCII-armored.
func (s *Server) PublicKey() string { return s.armored }

// SHA256 returns the hex SHA-256 of a release zip, or "".
func (s *Server) SHA256(ns, typ, version, platform string) string {
	r := s.releases[ns+"/"+typ+"/"+version]
	if r == nil || r.zips[platform] == nil {
		return ""
	}
	sum := r.digests[platform]
	return hex.EncodeToString(sum[:])
}

// Requests returns every request answered so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests of a kind were answered.
func (s *Server) Count(k Kind) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Kind == k {
			n++
		}
	}
	return n
}

// ArchiveBytes is how many zip bytes were sent.
func (s *Server) ArchiveBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Reset forgets the requests and bytes counted so far.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests, s.bytes = nil, 0
}

func (s *Server) record(r *http.Request, k Kind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Kind: k, Host: r.Host, Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
}
