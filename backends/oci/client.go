package oci

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"

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
}

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
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = &tls.Config{
		MinVersion:         tls.VersionTLS12,
		RootCAs:            o.RootCAs,
		InsecureSkipVerify: o.Insecure, // opt-in, for registries with self-signed certificates
	}
	base.ResponseHeaderTimeout = 2 * time.Minute
	client := &auth.Client{
		Client:     &http.Client{Transport: retry.NewTransport(base)},
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
