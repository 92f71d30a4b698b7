package sync_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// hostRuleProviders are what every place of TestHostRule holds: acme/alpha
// on two hosts, and another provider.
var hostRuleProviders = []string{"example.com/acme/alpha", "registry.terraform.io/acme/alpha", "registry.terraform.io/hashicorp/null"}

// fill lands every seed in w, as a sync would.
func fill(ctx context.Context, t *testing.T, w backends.Writer, seeds []backendtest.Seed) {
	t.Helper()
	done := map[backends.Provider]bool{}
	for _, s := range seeds {
		if err := backendtest.Commit(ctx, t, w, s.Package, s.Zip, false); err != nil {
			t.Fatal(err)
		}
		done[s.Package.Provider] = true
	}
	for p := range done {
		if err := w.Flush(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHostRule holds the one rule for --provider over every kind of place,
// each a real one holding the same providers: HOST/NAMESPACE/TYPE is that
// provider; NAMESPACE/TYPE is it on any host where the place lists hosts
// (a directory, S3, OCI with a catalogue), on HOST for registry://HOST, and
// a usage error (exit 2) naming the full address where the host cannot be
// known (a network mirror, an OCI template without ${hostname}).
func TestHostRule(t *testing.T) {
	ctx := context.Background()
	seeds := backendtest.Seeds(t, hostRuleProviders, []string{"1.0.0"}, []string{"linux_amd64"})
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, seeds)
	dirPlace, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}

	ociReg := ocitest.New(t)
	openOCI := func(tmpl string) *oci.Mirror {
		m, err := oci.Open("oci://"+ociReg.Host()+tmpl, ociReg.Host()+tmpl, oci.Options{RootCAs: ociReg.RootCAs(), Credentials: credentials.NewMemoryStore()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	fill(ctx, t, openOCI("/cat/${hostname}/${namespace}/${type}"), seeds)
	// Without ${hostname} two hosts' acme/alpha would share a repository:
	// one of them is kept.
	var short []backendtest.Seed
	for _, s := range seeds {
		if s.Package.Provider.Hostname == "registry.terraform.io" {
			short = append(short, s)
		}
	}
	fill(ctx, t, openOCI("/short/${namespace}/${type}"), short)

	netSrv := httptest.NewTLSServer(netmirror.NewHandler(dirPlace, log.New(io.Discard, "", 0), hashing.Options{}))
	t.Cleanup(netSrv.Close)
	net, err := place.Open(ctx, netSrv.URL+"/", place.Options{HTTPClient: netSrv.Client()})
	if err != nil {
		t.Fatal(err)
	}

	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{"linux_amd64": seeds[0].Zip}}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	regPlace, err := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}

	places := []struct {
		name string
		open func(t *testing.T) backends.Reader
		// bare is what acme/alpha selects ("usage" for the usage error).
		bare string
	}{
		{"directory", func(*testing.T) backends.Reader { return dirPlace }, "[example.com/acme/alpha registry.terraform.io/acme/alpha]"},
		{"s3", func(t *testing.T) backends.Reader {
			srv := s3test.Start(t)
			target := srv.Bucket(t) + "/tf"
			w, err := s3.Open(ctx, "s3://"+target, target, srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			fill(ctx, t, w, seeds)
			return w
		}, "[example.com/acme/alpha registry.terraform.io/acme/alpha]"},
		{"oci with a catalogue", func(*testing.T) backends.Reader { return openOCI("/cat/${hostname}/${namespace}/${type}") }, "[example.com/acme/alpha registry.terraform.io/acme/alpha]"},
		{"registry", func(*testing.T) backends.Reader { return regPlace }, "[" + reg.Host() + "/acme/alpha]"},
		{"network mirror", func(*testing.T) backends.Reader { return net }, "usage"},
		{"oci template without a catalogue", func(*testing.T) backends.Reader { return openOCI("/short/${namespace}/${type}") }, "usage"},
	}
	for _, pl := range places {
		t.Run(pl.name, func(t *testing.T) {
			r := pl.open(t)
			for _, c := range []struct {
				filter string
				want   string
			}{
				{"acme/alpha", pl.bare},
				{"ACME/Alpha", pl.bare}, // namespaces and types are case-folded
				{"example.com/acme/alpha", "[example.com/acme/alpha]"},
				{"registry.terraform.io/acme/alpha", "[registry.terraform.io/acme/alpha]"},
			} {
				ps, err := sync.Selection{Providers: backendtest.ProviderFilters(t, c.filter)}.ProvidersIn(ctx, r)
				switch {
				case c.want == "usage":
					if !errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), "HOSTNAME/acme/alpha") || !strings.Contains(err.Error(), r.String()) {
						t.Errorf("-p %s: %v, %v; want a usage error naming %s and asking for HOSTNAME/acme/alpha", c.filter, ps, err, r)
					}
				case err != nil:
					t.Errorf("-p %s: %v", c.filter, err)
				case fmt.Sprint(ps) != c.want:
					t.Errorf("-p %s selects %v, want %s", c.filter, ps, c.want)
				}
			}
			// With a lock file, NAMESPACE/TYPE means the locked providers
			// it matches, wherever the place cannot say.
			locked, err := backends.ParseProvider("registry.terraform.io/acme/alpha")
			if err != nil {
				t.Fatal(err)
			}
			sel := sync.Selection{Providers: backendtest.ProviderFilters(t, "acme/alpha"), Locked: map[backends.Provider]sync.Locked{locked: {Version: seeds[0].Package.Version}}}
			ps, err := sel.ProvidersIn(ctx, r)
			want := "[registry.terraform.io/acme/alpha]"
			if pl.name == "registry" {
				want = "[]" // acme/alpha is the registry's own, which the lock does not hold
			}
			if err != nil || fmt.Sprint(ps) != want {
				t.Errorf("-p acme/alpha --lock: %v, %v; want %s", ps, err, want)
			}
		})
	}
}

// TestHostsUnknownBeforeListing: the UI, which lists its places while it
// runs, refuses at once a NAMESPACE/TYPE that none of them can place on a
// host, and lets it through where one may.
func TestHostsUnknownBeforeListing(t *testing.T) {
	dir := t.TempDir()
	dirPlace, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	net, err := netmirror.Open("https://mirror.example/", netmirror.Options{})
	if err != nil {
		t.Fatal(err)
	}
	short, err := oci.Open("oci://reg.example/tf/${namespace}/${type}", "reg.example/tf/${namespace}/${type}", oci.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := oci.Open("oci://reg.example/tf/${hostname}/${namespace}/${type}", "reg.example/tf/${hostname}/${namespace}/${type}", oci.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := place.Open(context.Background(), "registry://registry.example", place.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		places []backends.Reader
		filter string
		usage  bool
	}{
		{"network mirror", []backends.Reader{net}, "acme/alpha", true},
		{"oci without a catalogue", []backends.Reader{short}, "acme/alpha", true},
		{"both", []backends.Reader{net, short}, "acme/alpha", true},
		{"full address", []backends.Reader{net, short}, "example.com/acme/alpha", false},
		{"beside a directory", []backends.Reader{net, dirPlace}, "acme/alpha", false},
		{"oci with a catalogue", []backends.Reader{cat}, "acme/alpha", false},
		{"registry", []backends.Reader{reg}, "acme/alpha", false},
	} {
		err := sync.Selection{Providers: backendtest.ProviderFilters(t, c.filter)}.HostsUnknown(c.places)
		if got := errors.Is(err, backends.ErrUsage); got != c.usage {
			t.Errorf("%s: -p %s: %v; want usage error %v", c.name, c.filter, err, c.usage)
		}
		if c.usage && !strings.Contains(err.Error(), "HOSTNAME/acme/alpha") {
			t.Errorf("%s: %v does not ask for the full address", c.name, err)
		}
	}
}
