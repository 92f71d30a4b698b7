package place

import (
	"oras.land/oras-go/v2/registry/remote/credentials"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/bundle"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/hashing"
)

// Kind is a kind of place (backends.Kind: the layers below name kinds
// without knowing how places are opened).
type Kind = backends.Kind

// The kinds of place.
const (
	FS        = backends.KindFS
	NetMirror = backends.KindNetMirror
	Registry  = backends.KindRegistry
	OCI       = backends.KindOCI
	S3        = backends.KindS3
	Bundle    = backends.KindBundle
	Release   = backends.KindRelease
)

// Spec is a parsed place argument.
type Spec struct {
	Kind Kind
	// Raw is the argument as the user wrote it.
	Raw string
	// Target is the argument without its scheme: a path, a URL, a host,
	// REGISTRY/TEMPLATE or BUCKET[/PREFIX].
	Target string
}

func (s Spec) String() string { return s.Raw }

// Parse classifies a place argument by its syntax alone: it touches no
// disk. A path is a filesystem place, or a bundle when it ends in .tar;
// what is there (a release directory, a directory named *.tar) the
// opening finds out (Discover).
func Parse(arg string) (Spec, error) {
	if arg == "" {
		return Spec{}, errors.New("empty place: give a directory, https://HOST/PATH/, registry://HOST, oci://REGISTRY/TEMPLATE or s3://BUCKET/PREFIX")
	}
	scheme, rest, ok := strings.Cut(arg, "://")
	if !ok {
		if err := mistypedScheme(arg); err != nil {
			return Spec{}, err
		}
		if err := missingColon(arg); err != nil {
			return Spec{}, err
		}
		if strings.HasSuffix(strings.ToLower(arg), ".tar") {
			return Spec{Kind: Bundle, Raw: arg, Target: arg}, nil
		}
		return Spec{Kind: FS, Raw: arg, Target: arg}, nil
	}
	switch strings.ToLower(scheme) {
	case "file":
		return Spec{Kind: FS, Raw: arg, Target: rest}, nil
	case "https":
		return Spec{Kind: NetMirror, Raw: arg, Target: arg}, nil
	case "http":
		return Spec{}, fmt.Errorf("place %s: network mirrors must be at an https: URL (the clients refuse http)", backends.RedactPlace(arg))
	case "registry":
		return Spec{Kind: Registry, Raw: arg, Target: strings.TrimSuffix(rest, "/")}, nil
	case "oci":
		if err := expandedTemplate(arg, rest); err != nil {
			return Spec{}, err
		}
		return Spec{Kind: OCI, Raw: arg, Target: rest}, nil
	case "s3":
		return Spec{Kind: S3, Raw: arg, Target: rest}, nil
	}
	return Spec{}, fmt.Errorf("place %s: unknown scheme %q (use a directory, file://, https://, registry://, oci:// or s3://)", backends.RedactPlace(arg), scheme)
}

// Discover is Parse, then what is on disk: a directory holding a release
// (see push.IsReleaseDir) is of kind Release, and a directory named *.tar
// a filesystem place. Opening a place discovers it so; a caller that needs
// a place's kind without opening it calls Discover.
func Discover(ctx context.Context, arg string) (Spec, error) {
	s, err := Parse(arg)
	if err != nil {
		return s, err
	}
	switch s.Kind {
	case FS:
		if push.IsReleaseDir(ctx, s.Target) {
			s.Kind = Release
		}
	case Bundle:
		if fi, err := os.Stat(s.Target); err == nil && fi.IsDir() {
			s.Kind = FS
		}
	}
	return s, nil
}

// IsRelease reports whether a path names a release directory (see
// push.IsReleaseDir), which opens as a read-only place of kind Release.
func IsRelease(path string) bool { return push.IsReleaseDir(context.Background(), path) }

// mistypedScheme catches a scheme written with one slash or none
// (registry:/host, https:host), which would otherwise be taken for a
// directory that does not exist.
func mistypedScheme(arg string) error {
	scheme, rest, ok := strings.Cut(arg, ":")
	if !ok {
		return nil
	}
	switch strings.ToLower(scheme) {
	case "file", "https", "http", "registry", "oci", "s3":
		return backends.Usagef("place %s: did you mean %s://%s? (a place with a scheme needs two slashes; a directory with a colon in its name can be written ./%s)",
			arg, scheme, strings.TrimLeft(rest, "/"), arg)
	}
	return nil
}

// Options carry what opening any kind of place may need, for providers
// and modules alike (backends/modules/modplace opens module places with
// them).
type Options struct {
	// Create: a filesystem destination that does not exist yet is created.
	Create bool
	// Unpacked: a filesystem destination is written in the unpacked layout.
	Unpacked bool
	Hashing  hashing.Options
	// PlainHTTP: OCI registries are spoken to over plain HTTP (local test
	// registries); HTTPS otherwise.
	PlainHTTP bool
	// Insecure: TLS certificates of OCI registries are not verified.
	Insecure bool
	// HTTPClient, when set, carries the transport for network mirrors and
	// origin registries (tests pass one that trusts their servers).
	// Otherwise one is made that trusts the system pool (SSL_CERT_FILE,
	// SSL_CERT_DIR) and CACertFile.
	HTTPClient *http.Client
	// CACertFile names a PEM file of certificates that network mirrors,
	// origin registries and OCI registries may also be signed by (--ca-cert).
	CACertFile string
	// Credentials supply bearer tokens for network mirrors and origin
	// registries; nil means the TF_TOKEN_* environment variables.
	Credentials backends.Credentials
	// OCICredentials, when set, is where OCI registries' credentials come
	// from; nil means those container tools use (ociclient.DefaultCredentials).
	OCICredentials credentials.Store
	// Debug, when set, gets a line for every HTTP request attempt of every
	// kind of place (--debug; see httpclient.Wrap).
	Debug io.Writer
	// S3Endpoint is the URL of an S3-compatible store for s3:// places
	// (--s3-endpoint), addressed path-style; empty means AWS S3. Their
	// credentials and region come from the AWS configuration chain.
	S3Endpoint string
	// S3CacheControl is the Cache-Control of the objects an s3:// place
	// writes (tfmirror publish); none when zero.
	S3CacheControl s3.CacheControl
	// Signatures says how origin registries' signatures are checked (key
	// expiry, as OPENTOFU_ENFORCE_GPG_EXPIRATION).
	Signatures provenance.Options
	// Release says how a release directory opens: the provider its zips
	// are (--provider HOST/NAMESPACE/TYPE) and the keys that check its
	// SHA256SUMS.sig (--signing-key); Signatures apply to them.
	Release push.ReleaseOptions
	// ClientCertFile and ClientKeyFile are the client certificate every
	// HTTPS place is presented (--client-cert, --client-key): network
	// mirrors, registries, OCI registries, object storage.
	ClientCertFile, ClientKeyFile string
	// Notify, when set, is told at once what a place's writer waits for
	// and what it must say as it happens (an OCI repository's lock taken
	// over).
	Notify func(backends.Notice)
	// Timeout bounds each request to network mirrors and registries, and
	// each wait of their downloads for more bytes; zero means
	// httpclient.DefaultTimeout.
	Timeout time.Duration
}

// NetClient is the HTTP setup for network mirrors, registries (provider and
// module) and module package downloads.
func (o Options) NetClient() (httpclient.Client, error) {
	if o.HTTPClient != nil {
		return httpclient.Client{HTTP: o.HTTPClient, Debug: o.Debug, Timeout: o.Timeout}, nil
	}
	cert, err := o.ClientCert()
	if err != nil {
		return httpclient.Client{}, err
	}
	c, err := httpclient.NewWith(o.CACertFile, cert)
	c.Debug, c.Timeout = o.Debug, o.Timeout
	return c, err
}

// ClientCert is the client certificate HTTPS places present, or nil.
func (o Options) ClientCert() (*tls.Certificate, error) {
	return httpclient.LoadClientCert(o.ClientCertFile, o.ClientKeyFile)
}

// Tokens are the bearer tokens for network places: Credentials, or the
// TF_TOKEN_* environment variables.
func (o Options) Tokens() backends.Credentials {
	if o.Credentials != nil {
		return o.Credentials
	}
	return backends.EnvCredentials(os.Environ())
}

// tlsClient is the HTTP transport for places that speak TLS through an
// SDK of their own (object storage): HTTPClient, or one that trusts the
// system pool and CACertFile.
func (o Options) tlsClient() (*http.Client, error) {
	if o.HTTPClient != nil {
		return o.HTTPClient, nil
	}
	roots, err := httpclient.LoadRoots(o.CACertFile)
	if err != nil {
		return nil, err
	}
	cert, err := o.ClientCert()
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: httpclient.NewClientTransport(roots, cert)}, nil
}

// Opener opens one kind of place. Kinds register theirs in Openers.
type Opener func(ctx context.Context, s Spec, o Options) (backends.Reader, error)

// Openers maps each kind to its opener.
func Openers() map[Kind]Opener {
	return map[Kind]Opener{
		FS: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			return fs.Open(s.Raw, s.Target, fs.Options{Create: o.Create, Unpacked: o.Unpacked, Hashing: o.Hashing})
		},
		NetMirror: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			hc, err := o.NetClient()
			if err != nil {
				return nil, err
			}
			return netmirror.Open(s.Raw, netmirror.Options{HTTP: hc, Credentials: o.Tokens()})
		},
		Registry: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			hc, err := o.NetClient()
			if err != nil {
				return nil, err
			}
			return registry.Open(s.Raw, s.Target, registry.Options{HTTP: hc, Credentials: o.Tokens(), Signatures: o.Signatures})
		},
		Release: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			ro := o.Release
			ro.Signatures = o.Signatures
			return push.OpenReleaseDir(ctx, s.Raw, s.Target, ro)
		},
		Bundle: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			return bundle.Open(s.Raw, s.Target, bundle.Options{Provenance: o.Signatures})
		},
		OCI: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			roots, err := httpclient.LoadRoots(o.CACertFile)
			if err != nil {
				return nil, err
			}
			cert, err := o.ClientCert()
			if err != nil {
				return nil, err
			}
			return oci.Open(s.Raw, s.Target, oci.Options{PlainHTTP: o.PlainHTTP, Insecure: o.Insecure, RootCAs: roots, ClientCert: cert, Hashing: o.Hashing, Credentials: o.OCICredentials, Debug: o.Debug, Notify: o.Notify})
		},
		S3: func(ctx context.Context, s Spec, o Options) (backends.Reader, error) {
			hc, err := o.tlsClient()
			if err != nil {
				return nil, err
			}
			return s3.Open(ctx, s.Raw, s.Target, s3.Options{Endpoint: o.S3Endpoint, HTTPClient: hc, Hashing: o.Hashing, Debug: o.Debug, CacheControl: o.S3CacheControl})
		},
	}
}

// Open opens the place an argument names.
func Open(ctx context.Context, arg string, o Options) (backends.Reader, error) {
	s, err := Discover(ctx, arg)
	if err != nil {
		return nil, err
	}
	open, ok := Openers()[s.Kind]
	if !ok {
		return nil, fmt.Errorf("place %s: %s places are not supported yet", arg, s.Kind)
	}
	return open(ctx, s, o)
}

// OpenWriter opens a place that must be writable.
func OpenWriter(ctx context.Context, arg string, o Options) (backends.Writer, error) {
	o.Create = true
	if s, err := Discover(ctx, arg); err == nil && s.Kind == Bundle {
		return nil, fmt.Errorf("place %s: a bundle is read-only: write one with `tfmirror export SRC %s`, land one with `tfmirror import %s DST`", arg, arg, arg)
	} else if err == nil && s.Kind == Release {
		return nil, fmt.Errorf("place %s: a release directory is read-only: copy its packages into a mirror (tfmirror sync %s DST -p HOST/NAMESPACE/TYPE) or push them (tfmirror push %s oci://REGISTRY/TEMPLATE -p HOST/NAMESPACE/TYPE)", arg, arg, arg)
	}
	r, err := Open(ctx, arg, o)
	if err != nil {
		return nil, err
	}
	w, ok := r.(backends.Writer)
	if !ok {
		return nil, fmt.Errorf("place %s: cannot be written to (network mirrors and origin registries are read-only; write to a directory, oci:// or s3://, and serve a directory with `tfmirror serve`)", arg)
	}
	return w, nil
}
