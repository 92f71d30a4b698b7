package netmirror

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/tlscert"
	"github.com/tfmirror/tfmirror/hashing"
)

// DefaultAddr is where `tfmirror serve` listens unless told otherwise: the
// loopback interface, so nothing is exposed by accident.
const DefaultAddr = "127.0.0.1:8443"

// ServeOptions configure Serve.
type ServeOptions struct {
	// Addr is HOST:PORT to listen on; empty means DefaultAddr. Port 0 picks
	// a free port.
	Addr string
	// CertFile and KeyFile are a PEM certificate and key. Without them a
	// self-signed pair is made and its certificate written to CertOut.
	CertFile, KeyFile string
	// CertOut is where the generated certificate goes; empty means
	// tfmirror-serve-PORT.pem in the temp directory.
	CertOut string
	// Logger receives a line per request and the server's own troubles.
	Logger  *log.Logger
	Hashing hashing.Options
	// Ready is called once the server listens, before it serves.
	Ready func(Serving)
	// Handler, when set, is served instead of NewHandler of the place
	// (a pull-through mirror's, which wraps one).
	Handler http.Handler
	// Drain is how long requests in flight may take to finish once ctx is
	// cancelled; zero means DefaultDrain.
	Drain time.Duration
	// ClientCAs, when set, are the CAs a client certificate is verified
	// against (mTLS), as ClientAuth asks for one.
	ClientCAs  *x509.CertPool
	ClientAuth tls.ClientAuthType
	// Stopped, when set, is told how the stop went once ctx was cancelled
	// and the server drained.
	Stopped func(Drained)
}

// Drained is how a stop went: the requests in flight when ctx was
// cancelled, and those still running after the drain, cut short.
type Drained struct {
	InFlight, Cut int
	Drain         time.Duration
}

// String says it in a few words: "2 requests in flight finished".
func (d Drained) String() string {
	switch {
	case d.InFlight == 0:
		return "no request was in flight"
	case d.Cut > 0:
		return fmt.Sprintf("%d of %s in flight cut short after a drain of %s", d.Cut, plural(d.InFlight, "request"), d.Drain)
	}
	return plural(d.InFlight, "request") + " in flight finished"
}

// plural is "1 request", "2 requests".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// DefaultDrain is how long Serve lets requests in flight finish when told
// to stop, unless ServeOptions.Drain says otherwise.
const DefaultDrain = 5 * time.Second

// Serving describes a listening server.
type Serving struct {
	// URL is the network_mirror url for clients.
	URL string
	// Addr is the address listened on.
	Addr string
	// CertOut is the generated certificate's PEM file; empty when the
	// certificate was given.
	CertOut string
	// Hosts are the names the generated certificate is valid for.
	Hosts []string
}

// Serve serves the place r over HTTPS (see Handler) until ctx is
// cancelled, then shuts down gracefully, letting requests in flight finish
// for opts.Drain.
func Serve(ctx context.Context, r backends.Reader, opts ServeOptions) error {
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %q: want HOST:PORT (e.g. %s): %v", addr, DefaultAddr, err)
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return errors.New("serve: give both --tls-cert and --tls-key, or neither (for a self-signed certificate)")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer func() { _ = ln.Close() }() // closed already by Shutdown or Close
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	info := Serving{Addr: ln.Addr().String()}

	urlHost := host
	unspecified := host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified()
	if unspecified {
		urlHost = "localhost"
		if name, err := os.Hostname(); err == nil && name != "" {
			urlHost = name
		}
	}
	info.URL = "https://" + net.JoinHostPort(urlHost, port) + "/"

	var cert tls.Certificate
	if opts.CertFile != "" {
		cert, err = tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return fmt.Errorf("serve: --tls-cert %s / --tls-key %s: %w", opts.CertFile, opts.KeyFile, err)
		}
	} else {
		for _, h := range []string{"127.0.0.1", "::1", "localhost", host, urlHost} {
			if h != "" && !slices.Contains(info.Hosts, h) && !(h == host && unspecified) {
				info.Hosts = append(info.Hosts, h)
			}
		}
		if cert, err = selfSignedPair(&info, opts.CertOut, port); err != nil {
			return err
		}
	}

	handler := opts.Handler
	if handler == nil {
		handler = NewHandler(r, opts.Logger, opts.Hashing)
	}
	var n inFlight
	srv := &http.Server{
		Handler:           Bounded(n.count(ctx, handler), ctx.Done()),
		MaxHeaderBytes:    MaxHeaderBytes,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, ClientCAs: opts.ClientCAs, ClientAuth: opts.ClientAuth},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          opts.Logger,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if opts.Ready != nil {
		opts.Ready(info)
	}
	return serveUntil(ctx, srv, ln, opts, &n)
}

// inFlight counts the requests being answered, and those that finished
// after ctx was cancelled (drained).
type inFlight struct{ now, drained atomic.Int64 }

func (n *inFlight) count(ctx context.Context, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.now.Add(1)
		defer func() {
			if ctx.Err() != nil {
				n.drained.Add(1)
			}
			n.now.Add(-1)
		}()
		h.ServeHTTP(w, r)
	})
}

// MaxURL is the longest request target Serve answers (414 beyond it); the
// protocol's longest is a few hundred bytes.
const MaxURL = 8 << 10

// MaxHeaderBytes bounds a request's headers, its request line included
// (431 beyond it, from net/http): room for a URL well over MaxURL, so that
// one gets its 414, and for a long bearer token.
const MaxHeaderBytes = 256 << 10

// Bounded answers, before h: 503 once stopping is closed (the server
// drains: the requests in flight finish, new ones are told to come back),
// and 414 to a request whose target is longer than MaxURL.
func Bounded(h http.Handler, stopping <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stopping:
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "5")
			http.Error(w, "503 draining: this mirror is shutting down; try again in a moment", http.StatusServiceUnavailable)
			return
		default:
		}
		if len(r.RequestURI) > MaxURL || len(r.URL.RawPath) > MaxURL || len(r.URL.Path) > MaxURL {
			http.Error(w, fmt.Sprintf("414 URI too long: a mirror's paths are short; this one is over %d bytes", MaxURL), http.StatusRequestURITooLong)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// serveUntil serves ln until ctx is cancelled, then lets the requests in
// flight (counted by n) finish for opts.Drain (DefaultDrain when
// zero) before closing them, and tells opts.Stopped how that went.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, opts ServeOptions, n *inFlight) error {
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	d := Drained{Drain: opts.Drain}
	if d.Drain <= 0 {
		d.Drain = DefaultDrain
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.Drain)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	d.InFlight = int(n.drained.Load())
	if err != nil {
		d.Cut = int(n.now.Load())
		d.InFlight += d.Cut
		_ = srv.Close() // the drain ran out: cut the rest
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	if opts.Stopped != nil {
		opts.Stopped(d)
	}
	return nil
}

// selfSignedPair makes the certificate Serve presents when none is given,
// valid for info.Hosts, and writes it to certOut (or, when empty, a file named
// after the port in the temp directory), recorded in info.CertOut. It is a
// step of its own because that file is what clients are told to trust: it
// must be written before the server is announced ready.
func selfSignedPair(info *Serving, certOut, port string) (tls.Certificate, error) {
	certPEM, keyPEM, err := tlscert.SelfSigned(info.Hosts, time.Now())
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("serve: making a certificate: %w", err)
	}
	info.CertOut = certOut
	if info.CertOut == "" {
		n, _ := strconv.Atoi(port)
		info.CertOut = fmt.Sprintf("%s%ctfmirror-serve-%d.pem", os.TempDir(), os.PathSeparator, n)
	}
	if err := os.WriteFile(info.CertOut, certPEM, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("serve: writing the certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("serve: %w", err)
	}
	return cert, nil
}
