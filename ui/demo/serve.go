package demo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/tlscert"
	"github.com/tfmirror/tfmirror/hashing"
)

// Served is the primary mirror served over HTTPS on loopback.
type Served struct {
	// URL is the network_mirror url.
	URL string
	// CertFile is the server's self-signed certificate (PEM), for
	// SSL_CERT_FILE when pointing terraform at it.
	CertFile string
	// Client trusts the certificate.
	Client *http.Client
	done   chan error
	cancel context.CancelFunc
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// BytesPerSecond slows archive downloads to this rate, so a transfer in
	// the demo takes long enough to watch; zero is full speed.
	BytesPerSecond int
}

// Serve serves the primary mirror as a network mirror on 127.0.0.1 until
// ctx is cancelled or Close is called.
func (w *World) Serve(ctx context.Context, opts ServeOptions) (*Served, error) {
	m, err := fs.Open(w.Primary, w.Primary, fs.Options{})
	if err != nil {
		return nil, err
	}
	var h http.Handler = netmirror.NewHandler(m, nil, hashing.Options{})
	if opts.BytesPerSecond > 0 {
		h = throttle(h, opts.BytesPerSecond)
	}
	cert, err := w.cert()
	if err != nil {
		return nil, err
	}
	ts, err := serveTLS(ctx, h, cert)
	if err != nil {
		return nil, fmt.Errorf("demo: serving the network mirror: %w", err)
	}
	return &Served{URL: "https://" + ts.addr + "/", CertFile: w.CertFile(), Client: ts.client, done: ts.done, cancel: ts.cancel}, nil
}

// CertFile is the PEM certificate every server of the world presents
// (self-signed for 127.0.0.1 and localhost), written when the first one
// starts: for --ca-cert, and SSL_CERT_FILE when pointing the clients at
// them.
func (w *World) CertFile() string { return filepath.Join(w.Dir, "server.pem") }

// worldCert is the certificate and key the world's servers share.
type worldCert struct {
	certPEM, keyPEM []byte
}

// cert makes the world's certificate on first use and writes CertFile.
func (w *World) cert() (*worldCert, error) {
	w.certOnce.Do(func() {
		certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
		if err == nil {
			err = os.WriteFile(w.CertFile(), certPEM, 0o644)
		}
		w.certVal, w.certErr = &worldCert{certPEM: certPEM, keyPEM: keyPEM}, err
	})
	return w.certVal, w.certErr
}

// tlsServer is an HTTPS server on 127.0.0.1 with a self-signed certificate
// and a client that trusts it.
type tlsServer struct {
	addr   string
	client *http.Client
	done   chan error
	cancel context.CancelFunc
	// onClose, when set, runs once the server has stopped.
	onClose func()
}

func serveTLS(ctx context.Context, h http.Handler, wc *worldCert) (*tlsServer, error) {
	cert, err := tls.X509KeyPair(wc.certPEM, wc.keyPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(wc.certPEM)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	ts := &tlsServer{
		addr: ln.Addr().String(),
		client: &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		}},
		done:   make(chan error, 1),
		cancel: cancel,
	}
	go func() { ts.done <- srv.ServeTLS(ln, "", "") }()
	go func() {
		<-ctx.Done()
		_ = srv.Close() // the demo is over; ServeTLS returns
	}()
	return ts, nil
}

func (ts *tlsServer) close() error {
	ts.cancel()
	err := <-ts.done
	if ts.onClose != nil {
		ts.onClose()
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops the server.
func (s *Served) Close() error {
	s.cancel()
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Open opens the served mirror as tfmirror's network mirror client does,
// trusting the server's certificate.
func (s *Served) Open() (backends.Reader, error) {
	return netmirror.Open(s.URL, netmirror.Options{HTTP: httpclient.Client{HTTP: s.Client}})
}

// throttle slows the bodies of zip downloads to about rate bytes a second.
func throttle(h http.Handler, rate int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".zip") {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&slowWriter{ResponseWriter: w, ctx: r.Context(), rate: rate}, r)
	})
}

type slowWriter struct {
	http.ResponseWriter
	ctx  context.Context
	rate int
}

func (s *slowWriter) Write(p []byte) (int, error) {
	const chunk = 32 << 10
	n := 0
	for len(p) > 0 {
		k := min(chunk, len(p))
		w, err := s.ResponseWriter.Write(p[:k])
		n += w
		if err != nil {
			return n, err
		}
		if f, ok := s.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		p = p[k:]
		select {
		case <-s.ctx.Done():
			return n, s.ctx.Err()
		case <-time.After(time.Duration(k) * time.Second / time.Duration(s.rate)):
		}
	}
	return n, nil
}
