package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// LoadRoots returns the system pool plus the PEM certificates in caFile
// (--ca-cert), or nil (the system pool, which honours SSL_CERT_FILE and
// SSL_CERT_DIR) when caFile is "". Every place that speaks TLS (network
// mirrors, registries, OCI registries) trusts what it returns.
func LoadRoots(caFile string) (*x509.CertPool, error) {
	if caFile == "" {
		return nil, nil
	}
	pemBytes, err := regular.ReadFile(caFile, 0)
	if err != nil {
		return nil, usageError{fmt.Errorf("--ca-cert: %w", err)}
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pemBytes) {
		return nil, usageError{fmt.Errorf("--ca-cert %s: no PEM certificate in it", caFile)}
	}
	return roots, nil
}

// usageError is a mistake in what the user gave (a --ca-cert file): it
// matches backends.ErrUsage without adding to the message.
type usageError struct{ error }

func (e usageError) Unwrap() error        { return e.error }
func (e usageError) Is(target error) bool { return target == backends.ErrUsage }

// NewTransport returns a transport for network places: http.DefaultTransport's
// settings, trusting roots (nil: the system pool), and keeping enough idle
// connections per host for concurrent metadata requests; the default of 2
// would make most of them pay for a new TLS handshake.
func NewTransport(roots *x509.CertPool) *http.Transport {
	return NewClientTransport(roots, nil)
}

// NewClientTransport is NewTransport presenting cert (nil: none) to servers
// that ask for a client certificate (mTLS).
func NewClientTransport(roots *x509.CertPool, cert *tls.Certificate) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		t.TLSClientConfig.Certificates = []tls.Certificate{*cert}
	}
	return t
}

// LoadClientCert loads the client certificate and key every HTTPS request
// presents (--client-cert, --client-key): nil when both are "".
func LoadClientCert(certFile, keyFile string) (*tls.Certificate, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, usageError{fmt.Errorf("give both --client-cert and --client-key, or neither")}
	}
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, usageError{fmt.Errorf("--client-cert %s / --client-key %s: %v", certFile, keyFile, err)}
	}
	return &c, nil
}

// New returns a Client with the default limits whose transport trusts the
// system pool plus caFile ("" for none).
func New(caFile string) (Client, error) {
	return NewWith(caFile, nil)
}

// NewWith is New presenting cert to servers that ask for a client
// certificate.
func NewWith(caFile string, cert *tls.Certificate) (Client, error) {
	roots, err := LoadRoots(caFile)
	if err != nil {
		return Client{}, err
	}
	return Client{HTTP: &http.Client{Transport: NewClientTransport(roots, cert)}}, nil
}
