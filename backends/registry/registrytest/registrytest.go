package registrytest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tfmirror/tfmirror/hashing"
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
		srv.Listener.Close()
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

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	f := s.currentFaults()
	if r.URL.Path == "/.well-known/terraform.json" {
		s.record(r, KindDiscovery)
		if !s.authorized(w, r) {
			return
		}
		base := "/v1/providers/"
		if s.opts.AbsoluteDiscovery {
			base = s.api.URL + base
		}
		writeJSON(w, "application/json", map[string]string{"providers.v1": base, "modules.v1": "/v1/modules/"})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/providers/")
	parts := strings.Split(rest, "/")
	kind := KindOther
	switch {
	case ok && len(parts) == 3 && parts[2] == "versions":
		kind = KindVersions
	case ok && len(parts) == 6 && parts[3] == "download":
		kind = KindDownload
	}
	s.record(r, kind)
	if !s.authorized(w, r) {
		return
	}
	ct := "application/json"
	if f.ContentType != "" {
		ct = f.ContentType
	}
	switch {
	case f.RedirectLoop:
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	case f.APIStatus != 0:
		http.Error(w, "registrytest: fault", f.APIStatus)
	case kind == KindVersions:
		s.serveVersions(w, ct, parts[0], parts[1])
	case kind == KindDownload:
		s.serveDownload(w, ct, f, parts[0], parts[1], parts[2], parts[4]+"_"+parts[5])
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" || r.Header.Get("Authorization") == "Bearer "+s.opts.Token {
		return true
	}
	http.Error(w, `{"errors":["unauthorized"]}`, http.StatusUnauthorized)
	return false
}

type platformJSON struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

func (s *Server) serveVersions(w http.ResponseWriter, ct, ns, typ string) {
	type versionJSON struct {
		Version   string         `json:"version"`
		Protocols []string       `json:"protocols"`
		Platforms []platformJSON `json:"platforms"`
	}
	doc := struct {
		Versions []versionJSON `json:"versions"`
		Warnings []string      `json:"warnings"`
	}{Versions: []versionJSON{}}
	for _, key := range s.order {
		r := s.releases[key]
		if r.ns != ns || r.typ != typ {
			continue
		}
		vj := versionJSON{Version: r.version, Protocols: r.protocols, Platforms: []platformJSON{}}
		for _, plat := range sortedKeys(r.zips) {
			goos, arch, _ := strings.Cut(plat, "_")
			vj.Platforms = append(vj.Platforms, platformJSON{goos, arch})
		}
		doc.Versions = append(doc.Versions, vj)
	}
	if len(doc.Versions) == 0 {
		writeStatus(w, http.StatusNotFound)
		return
	}
	writeJSON(w, ct, doc)
}

func (s *Server) serveDownload(w http.ResponseWriter, ct string, f Faults, ns, typ, version, plat string) {
	r := s.releases[ns+"/"+typ+"/"+version]
	if r == nil || r.zips[plat] == nil {
		writeStatus(w, http.StatusNotFound)
		return
	}
	base := fmt.Sprintf("%s/%s/%s/%s/", s.files.URL, ns, typ, version)
	goos, arch, _ := strings.Cut(plat, "_")
	type key struct {
		KeyID      string `json:"key_id"`
		ASCIIArmor string `json:"ascii_armor"`
	}
	doc := map[string]any{
		"protocols":             r.protocols,
		"os":                    goos,
		"arch":                  arch,
		"filename":              r.filename(plat),
		"download_url":          base + r.filename(plat),
		"shasums_url":           base + r.sumsName(),
		"shasums_signature_url": base + r.sumsName() + ".sig",
		"shasum":                s.SHA256(ns, typ, version, plat),
		"signing_keys":          map[string][]key{"gpg_public_keys": {{KeyID: s.KeyID(), ASCIIArmor: s.armored}}},
	}
	if f.NoSigningKeys {
		doc["signing_keys"] = map[string][]key{"gpg_public_keys": {}}
	}
	if !f.NoPackages {
		pkgs := map[string]any{}
		for _, p := range sortedKeys(r.zips) {
			sum, h1 := r.digests[p], r.h1s[p]
			if f.UnsignedPackages && p != plat {
				sum, h1 = sha256.Sum256(Tamper(r.zips[p])), "h1:"+strings.Repeat("A", 43)+"="
			}
			hashes := []string{fmt.Sprintf("zh:%x", sum)}
			if h1 != "" {
				hashes = append([]string{h1}, hashes...)
			}
			pkgs[p] = map[string]any{"hashes": hashes, "package_size": len(r.zips[p])}
		}
		doc["packages"] = pkgs
	}
	writeJSON(w, ct, doc)
}

func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request) {
	f := s.currentFaults()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 {
		s.record(r, KindOther)
		http.NotFound(w, r)
		return
	}
	rel := s.releases[parts[0]+"/"+parts[1]+"/"+parts[2]]
	name := parts[3]
	switch {
	case rel == nil:
		s.record(r, KindOther)
		http.NotFound(w, r)
	case name == rel.sumsName():
		s.record(r, KindSums)
		body := rel.sums
		if f.TamperSums {
			body = tamperHex(body)
		}
		writeBody(w, "text/plain; charset=utf-8", body)
	case name == rel.sumsName()+".sig":
		s.record(r, KindSig)
		switch {
		case f.MissingSig:
			http.NotFound(w, r)
		case f.UnknownKey:
			writeBody(w, "application/octet-stream", rel.sigO)
		default:
			writeBody(w, "application/octet-stream", rel.sig)
		}
	default:
		for plat, zb := range rel.zips {
			if name != rel.filename(plat) {
				continue
			}
			s.record(r, KindArchive)
			if f.TamperArchive {
				zb = Tamper(zb)
			}
			w.Header().Set("Content-Type", "application/zip")
			w.Header().Set("Content-Length", fmt.Sprint(len(zb)))
			n, _ := w.Write(zb)
			s.mu.Lock()
			s.bytes += int64(n)
			s.mu.Unlock()
			return
		}
		s.record(r, KindOther)
		http.NotFound(w, r)
	}
}

// tamperHex changes the first hex digit of a SHA256SUMS document.
func tamperHex(b []byte) []byte {
	out := append([]byte(nil), b...)
	if len(out) > 0 {
		if out[0] == '0' {
			out[0] = '1'
		} else {
			out[0] = '0'
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, ct string, v any) {
	b, _ := json.Marshal(v)
	writeBody(w, ct, b)
}

func writeBody(w http.ResponseWriter, ct string, b []byte) {
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.Write(b)
}

func writeStatus(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"errors":[%q]}`, http.StatusText(code))
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NewKey makes a GPG signing key (Ed25519: quick to generate).
func NewKey(name string) (*openpgp.Entity, error) {
	return openpgp.NewEntity(name, "", "", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519, Time: func() time.Time { return time.Now().Add(-time.Hour) }})
}

// ArmoredPublicKey returns e's public key, ASCII-armored, as registries
// publish it.
func ArmoredPublicKey(e *openpgp.Entity) (string, error) {
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		return "", err
	}
	if err := e.Serialize(w); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// Sign makes a binary detached signature of doc, as registries publish for
// SHA256SUMS.
func Sign(e *openpgp.Entity, doc []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := openpgp.DetachSign(&buf, e, bytes.NewReader(doc), nil); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipH1 is the h1: of a zip, as OpenTofu's registry lists it in packages;
// "" for bytes that are not a zip (a test's deliberately broken archive).
func zipH1(zb []byte) string {
	f, err := os.CreateTemp("", "registrytest-*.zip")
	if err != nil {
		return ""
	}
	defer os.Remove(f.Name())
	_, err = f.Write(zb)
	if cerr := f.Close(); err != nil || cerr != nil {
		return ""
	}
	h, err := hashing.ZipH1(f.Name(), hashing.Options{})
	if err != nil {
		return ""
	}
	return string(h)
}

// zipTime is fixed so the same files always make the same zip bytes.
var zipTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// Zip builds a zip of files (name -> content), in name order, stored
// uncompressed with fixed timestamps, so equal inputs give equal bytes.
// Names starting with "terraform-provider-" are executable.
func Zip(files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Store, Modified: zipTime}
		h.SetMode(0o644)
		if strings.HasPrefix(n, "terraform-provider-") {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			panic(err) // writes to a bytes.Buffer do not fail
		}
		io.WriteString(w, files[n])
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// ProviderZip builds a release zip for a provider: one executable,
// terraform-provider-TYPE_vVERSION, a tiny shell script (the clients install
// it without running it). extra makes otherwise equal zips differ.
func ProviderZip(typ, version, extra string) []byte {
	name := fmt.Sprintf("terraform-provider-%s_v%s", typ, version)
	return Zip(map[string]string{name: "#!/bin/sh\n# " + typ + " " + version + " " + extra + "\nexit 1\n"})
}

// Tamper returns a zip with one byte of its first file's content changed,
// rebuilt so it is still a valid zip (of the same size when its entries are
// stored, as Zip makes them): a substituted archive that only its hash gives
// away. Input that is not a zip gets its last byte flipped instead.
func Tamper(zb []byte) []byte {
	flip := func() []byte {
		out := append([]byte(nil), zb...)
		if len(out) > 0 {
			out[len(out)-1] ^= 1
		}
		return out
	}
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil || len(zr.File) == 0 {
		return flip()
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return flip()
		}
		content, _ := io.ReadAll(rc)
		rc.Close()
		if i == 0 && len(content) > 0 {
			content[len(content)-1] ^= 1
		}
		h := &zip.FileHeader{Name: f.Name, Method: zip.Store, Modified: f.Modified}
		h.SetMode(f.Mode())
		w, _ := zw.CreateHeader(h)
		w.Write(content)
	}
	zw.Close()
	return buf.Bytes()
}
