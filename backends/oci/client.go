package oci

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/tfmirror/tfmirror/backends/httpclient"
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
	// Credentials, when set, replaces the credentials found the way container
	// tools find them (see DefaultCredentials).
	Credentials credentials.Store
	// Hashing caps the work hashing an untrusted zip may do.
	Hashing hashing.Options
	// UserAgent is sent with every request.
	UserAgent string
	// Timeout bounds the wait for each response's headers and then, while
	// its body is read, each wait for more bytes: a registry that never
	// answers, or stops sending, ends in a timeout error. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Retries bounds how many more times a request is tried after a
	// transient failure (5xx, 429, a timeout, a reset connection): zero
	// means DefaultRetries, negative none. The sync engine retries whole
	// jobs on top of this.
	Retries int
	// RetryBackoff is the wait before the first retry, doubled for each
	// one after up to 3s; zero means 250ms.
	RetryBackoff time.Duration
	// Debug, when set, gets one line per request attempt (httpclient.Wrap).
	Debug io.Writer
}

// Defaults for Options' zero fields.
const (
	DefaultTimeout = 2 * time.Minute
	DefaultRetries = 5
)

// DefaultCredentials returns the credentials container tools would use,
// searched in the order podman and OpenTofu search them: $REGISTRY_AUTH_FILE,
// $XDG_RUNTIME_DIR/containers/auth.json,
// $XDG_CONFIG_HOME/containers/auth.json (~/.config by default), then
// Docker's config.json ($DOCKER_CONFIG or ~/.docker). Credential helpers
// (credsStore, credHelpers) named in those files are run as Docker runs
// them. Files that do not exist are skipped.
func DefaultCredentials() (credentials.Store, error) {
	var paths []string
	if p := os.Getenv("REGISTRY_AUTH_FILE"); p != "" {
		paths = append(paths, p)
	}
	if runtime.GOOS == "linux" {
		if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
			paths = append(paths, filepath.Join(d, "containers", "auth.json"))
		}
	}
	configHome := os.Getenv("XDG_CONFIG_HOME")
	if configHome == "" {
		if home, err := os.UserHomeDir(); err == nil {
			configHome = filepath.Join(home, ".config")
		}
	}
	if configHome != "" {
		paths = append(paths, filepath.Join(configHome, "containers", "auth.json"))
	}
	var stores []credentials.Store
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] || !isFile(p) {
			continue
		}
		seen[p] = true
		s, err := credentials.NewStore(p, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("credentials %s: %w", p, err)
		}
		stores = append(stores, s)
	}
	// Without a home directory there is no Docker config to read; that is
	// no reason to refuse anonymous access.
	if docker, err := credentials.NewStoreFromDocker(credentials.StoreOptions{}); err == nil && !seen[docker.ConfigPath()] {
		stores = append(stores, docker)
	} else if err != nil && (os.Getenv("DOCKER_CONFIG") != "" || os.Getenv("HOME") != "") {
		return nil, fmt.Errorf("docker credentials: %w", err)
	}
	if len(stores) == 0 {
		return credentials.NewMemoryStore(), nil
	}
	return credentials.NewStoreWithFallbacks(stores[0], stores[1:]...), nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// newClient builds the HTTP client every repository of a Mirror shares: the
// oras auth client (token cache, credentials per registry host, retries of
// transient failures) over a transport with the TLS settings asked for.
func newClient(o Options) (*auth.Client, error) {
	store := o.Credentials
	if store == nil {
		var err error
		if store, err = DefaultCredentials(); err != nil {
			return nil, err
		}
	}
	// Idle connections are kept for every job at once (the default keeps
	// two per host), so that concurrent uploads reuse their connections
	// instead of each paying for a new TLS handshake.
	base := httpclient.NewTransport(o.RootCAs)
	base.TLSClientConfig.InsecureSkipVerify = o.Insecure // opt-in, for registries with self-signed certificates
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	client := &auth.Client{
		// oras's auth client drops credentials on any redirect that
		// leaves the registry's origin (TestCredentialsStayOnTheirRegistry).
		// httpclient.Wrap sits under oras's retries, so the debug log has a
		// line per try, and a certificate not trusted reads as it does for
		// every kind of place.
		Client: &http.Client{Transport: httpclient.CountAttempts(&retry.Transport{
			Base:   httpclient.Wrap(&timeoutTransport{base: base, d: timeout}, o.Debug),
			Policy: retryPolicy(o),
		})},
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

func retryPolicy(o Options) func() retry.Policy {
	n, first := o.Retries, o.RetryBackoff
	switch {
	case n < 0:
		n = 0
	case n == 0:
		n = DefaultRetries
	}
	if first <= 0 {
		first = 250 * time.Millisecond
	}
	p := &retry.GenericPolicy{
		Retryable: retry.DefaultPredicate,
		Backoff:   retry.ExponentialBackoff(first, 2, 0.1),
		MinWait:   first,
		MaxWait:   max(3*time.Second, first),
		MaxRetry:  n,
	}
	return func() retry.Policy { return p }
}

// errStalled is the cause of a request cancelled by timeoutTransport.
var errStalled = errors.New("stalled")

// timeoutError is a request that timed out; it is a net.Error with
// Timeout() true, so oras's retry policy and backends.IsTransient both
// take it for one.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string   { return e.msg }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// timeoutTransport gives each request d to start answering, and then d
// for each next bytes of its body: a large blob on a slow link is fine, a
// stalled one is not.
type timeoutTransport struct {
	base http.RoundTripper
	d    time.Duration
}

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.d, func() { cancel(errStalled) })
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		stalled := errors.Is(context.Cause(ctx), errStalled)
		cancel(nil)
		if stalled {
			return nil, &timeoutError{fmt.Sprintf("no answer within %s", t.d)}
		}
		return nil, err
	}
	timer.Reset(t.d)
	resp.Body = &stallBody{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, d: t.d}
	return resp, nil
}

type stallBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	d      time.Duration
}

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), errStalled) {
		err = &timeoutError{fmt.Sprintf("no data for %s", b.d)}
	}
	return n, err
}

func (b *stallBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
