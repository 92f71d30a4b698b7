package modplace

import (
	"context"
	"fmt"

	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/s3"
)

// Options are the place options every kind of place is opened with: one
// struct, so module commands get the same credentials, roots and --debug as
// provider commands.
type Options = place.Options

// OpenRegistry opens registry://HOST.
func OpenRegistry(arg string, o Options) (*modules.Registry, error) {
	s, err := place.Parse(arg)
	if err != nil {
		return nil, err
	}
	if s.Kind != place.Registry {
		return nil, fmt.Errorf("place %s: modules are read from a module registry: registry://HOST", arg)
	}
	hc, err := o.NetClient()
	if err != nil {
		return nil, err
	}
	return modules.NewRegistry(arg, s.Target, modules.Options{HTTP: hc, Credentials: o.Tokens()})
}

// Builder returns the package builder for sources a registry names.
func Builder(o Options, tempDir string) (*fetch.Builder, error) {
	hc, err := o.NetClient()
	if err != nil {
		return nil, err
	}
	return fetch.New(fetch.Options{HTTP: hc, Credentials: o.Tokens(), TempDir: tempDir, Hashing: o.Hashing}), nil
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

// OpenWriter opens a place modules can be written to: oci://REGISTRY/TEMPLATE,
// s3://BUCKET[/PREFIX] or a directory.
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
	case place.S3:
		r, err := place.Open(ctx, arg, o)
		if err != nil {
			return nil, err
		}
		st, ok := r.(*s3.Store)
		if !ok {
			return nil, fmt.Errorf("place %s: not a bucket", arg)
		}
		return st.Modules(), nil
	case place.Registry:
		return nil, fmt.Errorf("place %s: a module registry is read-only; write modules to oci://REGISTRY/TEMPLATE, s3://BUCKET/PREFIX or a directory", arg)
	}
	return nil, fmt.Errorf("place %s: not a module place (use registry://HOST, oci://REGISTRY/TEMPLATE, s3://BUCKET/PREFIX or a directory)", arg)
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
	return modoci.Open(arg, s.Target, modoci.Options{PlainHTTP: o.PlainHTTP, Insecure: o.Insecure, RootCAs: roots, Credentials: o.OCICredentials, Debug: o.Debug})
}
