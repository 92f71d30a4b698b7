// Package ociclient is the registry client both OCI places (providers'
// and modules') share: the credentials container tools keep, the
// transport under oras's retries with the one retry policy and stall
// watchdog, and registry errors made readable.
package ociclient

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
)

// Defaults of a client (the OCI places' Options).
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

// Retry is the policy of a client's requests over backends.DefaultRetry (6
// tries by default, 250 ms apart at first, at most 3 s): retries more
// tries after the first (zero means DefaultRetries, negative none), and
// backoff, when set, the wait before the first retry.
func Retry(retries int, backoff time.Duration) backends.RetryPolicy {
	p := backends.DefaultRetry
	switch {
	case retries < 0:
		p.Attempts = 1
	case retries == 0:
		p.Attempts = 1 + DefaultRetries
	default:
		p.Attempts = 1 + retries
	}
	if backoff > 0 {
		p.Base = backoff
		p.Max = max(p.Max, backoff)
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
