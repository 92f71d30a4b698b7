package oci

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/ociclient"
	"github.com/tfmirror/tfmirror/hashing"
)

// Options configure how a Mirror talks to registries.
type Options struct {
	// PlainHTTP talks HTTP instead of HTTPS (local test registries).
	PlainHTTP bool
	// Insecure skips TLS certificate verification. Off by default.
	Insecure bool
	// RootCAs, when set, replaces the system's trusted roots.
	RootCAs *x509.CertPool
	// ClientCert, when set, is presented to a registry that asks for a
	// client certificate (mTLS).
	ClientCert *tls.Certificate
	// Credentials, when set, replaces the credentials found the way container
	// tools find them (see ociclient.DefaultCredentials).
	Credentials credentials.Store
	// Hashing caps the work hashing an untrusted zip may do.
	Hashing hashing.Options
	// UserAgent is sent with every request.
	UserAgent string
	// Timeout bounds the wait for each response's headers and then, while
	// its body is read, each wait for more bytes: a registry that never
	// answers, or stops sending, ends in a timeout error. Zero means
	// ociclient.DefaultTimeout.
	Timeout time.Duration
	// Retries bounds how many more times a request is tried after a
	// transient failure (5xx, 429, a timeout, a reset connection): zero
	// means ociclient.DefaultRetries, negative none. The sync engine
	// retries a job only for what these retries cannot (a blob cut off
	// mid-stream).
	Retries int
	// RetryBackoff is the wait before the first retry, doubled for each
	// one after up to 3s (±10%); zero means 250ms. Retry is the policy
	// Retries and RetryBackoff make.
	RetryBackoff time.Duration
	// Debug, when set, gets one line per request attempt (httpclient.Wrap).
	Debug io.Writer
	// Notify, when set, is told at once what a writer waits for (another
	// writer's lock) and that it took a lock over; the takeover is then
	// not kept among the Warnings as well.
	Notify func(backends.Notice)
}

// newClient builds the HTTP client every repository of a Mirror shares: the
// oras auth client (token cache, credentials per registry host, retries of
// transient failures) over a transport with the TLS settings asked for.
func newClient(o Options) (*auth.Client, error) {
	store := o.Credentials
	if store == nil {
		var err error
		if store, err = ociclient.DefaultCredentials(); err != nil {
			return nil, err
		}
	}
	// Idle connections are kept for every job at once (the default keeps
	// two per host), so that concurrent uploads reuse their connections
	// instead of each paying for a new TLS handshake.
	base := httpclient.NewClientTransport(o.RootCAs, o.ClientCert)
	base.TLSClientConfig.InsecureSkipVerify = o.Insecure // opt-in, for registries with self-signed certificates
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = ociclient.DefaultTimeout
	}
	client := &auth.Client{
		// oras's auth client drops credentials on any redirect that
		// leaves the registry's origin (TestCredentialsStayOnTheirRegistry).
		// httpclient.Wrap sits under oras's retries, so the debug log has a
		// line per try, and a certificate not trusted reads as it does for
		// every kind of place.
		// The stall watchdog is the one every download has
		// (httpclient.Watchdog); oras's retries follow o.Retry, and a
		// request they tried to the end is not tried again by the sync
		// engine (CountAttempts).
		Client:     &http.Client{Transport: ociclient.Transport(base, timeout, o.Retry(), o.Debug)},
		Cache:      auth.NewCache(),
		Credential: credentials.Credential(store),
	}
	ua := o.UserAgent
	if ua == "" {
		ua = "tfmirror"
	}
	client.SetUserAgent(ua)
	return client, nil
}

// Retry is the policy of o's requests (ociclient.Retry of Retries and
// RetryBackoff).
func (o Options) Retry() backends.RetryPolicy { return ociclient.Retry(o.Retries, o.RetryBackoff) }
