// Package modplace turns command-line place arguments into module places:
// registry://HOST (a module registry), oci://REGISTRY/TEMPLATE (an OCI
// mirror, see modules.Template) and a directory (a filesystem mirror). The
// argument syntax is the providers' (backends/place); the kinds differ.
package modplace

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/hashing"
)

// Options carry what opening module places may need.
type Options struct {
	// HTTP is the client for registries and archive downloads; nil makes
	// one trusting the system roots (SSL_CERT_FILE, SSL_CERT_DIR) and
	// CACertFile.
	HTTP       *http.Client
	CACertFile string
	// Credentials supplies registry tokens (the CLI configuration's
	// credentials blocks and TF_TOKEN_*, as for provider places); nil means
	// the TF_TOKEN_* environment variables.
	Credentials backends.Credentials
	// OCICredentials, when set, is where OCI registries' credentials come
	// from; nil means those container tools use (oci.DefaultCredentials).
	OCICredentials credentials.Store
	// PlainHTTP and Insecure apply to OCI registries.
	PlainHTTP bool
	Insecure  bool
	// OCI, when set, is the client under OCI authentication (tests).
	OCI     *http.Client
	Hashing hashing.Options
	// Debug, when set, gets a line for every HTTP request attempt (--debug;
	// see httpclient.Wrap).
	Debug io.Writer
}

func (o Options) httpClient() (httpclient.Client, error) {
	if o.HTTP != nil {
		return httpclient.Client{HTTP: o.HTTP, Debug: o.Debug}, nil
	}
	c, err := httpclient.New(o.CACertFile)
	c.Debug = o.Debug
	return c, err
}

func (o Options) credentials() backends.Credentials {
	if o.Credentials != nil {
		return o.Credentials
	}
	return backends.EnvCredentials(os.Environ())
}

// OpenRegistry opens registry://HOST.
func OpenRegistry(arg string, o Options) (*modules.Registry, error) {
	s, err := place.Parse(arg)
	if err != nil {
		return nil, err
	}
	if s.Kind != place.Registry {
		return nil, fmt.Errorf("place %s: modules are read from a module registry: registry://HOST", arg)
	}
	hc, err := o.httpClient()
	if err != nil {
		return nil, err
	}
	return modules.NewRegistry(arg, s.Target, modules.Options{HTTP: hc, Credentials: o.credentials()})
}

// Builder returns the package builder for sources a registry names.
func Builder(o Options, tempDir string) (*fetch.Builder, error) {
	hc, err := o.httpClient()
	if err != nil {
		return nil, err
	}
	return fetch.New(fetch.Options{HTTP: hc, Credentials: o.credentials(), TempDir: tempDir, Hashing: o.Hashing}), nil
}

// Open opens any module place for listing.
func Open(ctx context.Context, arg string, o Options) (modules.Lister, error) {
	s, err := place.Parse(arg)
	if err != nil {
		return nil, err
	}
	if s.Kind == place.Registry {
		return OpenRegistry(arg, o)
	}
	return OpenWriter(ctx, arg, o)
}

// OpenWriter opens a place modules can be written to: oci://REGISTRY/TEMPLATE
// or a directory.
func OpenWriter(ctx context.Context, arg string, o Options) (modules.Writer, error) {
	s, err := place.Parse(arg)
	if err != nil {
		return nil, err
	}
	switch s.Kind {
	case place.OCI:
		return OpenOCI(arg, o)
	case place.FS:
		return modfs.Open(arg, s.Target, o.Hashing)
	case place.Registry:
		return nil, fmt.Errorf("place %s: a module registry is read-only; write modules to oci://REGISTRY/TEMPLATE or a directory", arg)
	}
	return nil, fmt.Errorf("place %s: not a module place (use registry://HOST, oci://REGISTRY/TEMPLATE or a directory)", arg)
}

// OpenOCI opens oci://REGISTRY/TEMPLATE.
func OpenOCI(arg string, o Options) (*modoci.Store, error) {
	s, err := place.Parse(arg)
	if err != nil {
		return nil, err
	}
	if s.Kind != place.OCI {
		return nil, fmt.Errorf("%s: want oci://REGISTRY/TEMPLATE, e.g. %s", arg, modules.ExampleTemplate)
	}
	roots, err := httpclient.LoadRoots(o.CACertFile)
	if err != nil {
		return nil, err
	}
	return modoci.Open(arg, s.Target, modoci.Options{PlainHTTP: o.PlainHTTP, Insecure: o.Insecure, RootCAs: roots, HTTP: o.OCI, Credentials: o.OCICredentials, Debug: o.Debug})
}
