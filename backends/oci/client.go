package oci

import (
	"crypto/x509"
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

	"github.com/tfmirror/tfmirror/backends"
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
	// means DefaultRetries, negative none. The sync engine retries a job
	// only for what these retries cannot (a blob cut off mid-stream).
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
		// The stall watchdog is the one every download has
		// (httpclient.Watchdog); oras's retries follow o.Retry, and a
		// request they tried to the end is not tried again by the sync
		// engine (CountAttempts).
		Client:     &http.Client{Transport: Transport(base, timeout, o.Retry(), o.Debug)},
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

// Retry is the policy of o's requests: Retries and RetryBackoff over
// backends.DefaultRetry (6 tries by default, 250 ms apart at first, at
// most 3 s).
func (o Options) Retry() backends.RetryPolicy {
	p := backends.DefaultRetry
	switch {
	case o.Retries < 0:
		p.Attempts = 1
	case o.Retries == 0:
		p.Attempts = 1 + DefaultRetries
	default:
		p.Attempts = 1 + o.Retries
	}
	if o.RetryBackoff > 0 {
		p.Base = o.RetryBackoff
		p.Max = max(p.Max, o.RetryBackoff)
	}
	return p
}

// Transport is the transport of every OCI client (providers' and modules'):
// base under the stall watchdog (httpclient.Watchdog, timeout) and the
// debug log (httpclient.Wrap), under oras's retries following policy. A
// request oras tried to the end is not tried again by the sync engine
// (httpclient.CountAttempts).
func Transport(base http.RoundTripper, timeout time.Duration, policy backends.RetryPolicy, debug io.Writer) http.RoundTripper {
	return httpclient.CountAttempts(&retry.Transport{
		Base:   httpclient.Wrap(httpclient.Watchdog(base, timeout), debug),
		Policy: func() retry.Policy { return orasPolicy{policy} },
	}, policy.Tries(), transientOutcome)
}

// orasPolicy adapts a backends.RetryPolicy to oras-go's retry.Policy: the
// same attempts, waits and classification (backends.TransientStatus,
// backends.IsTransient) as every other request.
type orasPolicy struct{ p backends.RetryPolicy }

func (o orasPolicy) Retry(attempt int, resp *http.Response, err error) (time.Duration, error) {
	if !transientOutcome(resp, err) || attempt+1 >= o.p.Tries() {
		return -1, nil
	}
	return o.p.Backoff(attempt + 1), nil
}

// transientOutcome reports whether a request's outcome is worth another
// try.
func transientOutcome(resp *http.Response, err error) bool {
	if err != nil {
		return backends.IsTransient(err)
	}
	return resp.StatusCode == 0 || backends.TransientStatus(resp.StatusCode)
}
