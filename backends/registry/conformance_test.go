package registry_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// TestConformance runs the case of every capability an origin registry
// has (backendtest.Capabilities) against a real one (registrytest).
// The suite's providers live on example.com, so the client resolves
// example.com to the test registry (whose certificate is valid for that
// name); everything else, the release files included, is dialled as is.
func TestConformance(t *testing.T) {
	backendtest.Conformance(t, backendtest.Place{Seeded: func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		byProvider := map[string]*registrytest.Provider{}
		var order []string
		for _, s := range seeds {
			p := s.Package.Provider
			rp := byProvider[p.String()]
			if rp == nil {
				rp = &registrytest.Provider{Namespace: p.Namespace, Type: p.Type}
				byProvider[p.String()] = rp
				order = append(order, p.String())
			}
			var v *registrytest.Version
			for i := range rp.Versions {
				if rp.Versions[i].Version == s.Package.Version.String() {
					v = &rp.Versions[i]
				}
			}
			if v == nil {
				rp.Versions = append(rp.Versions, registrytest.Version{Version: s.Package.Version.String(), Archives: map[string][]byte{}})
				v = &rp.Versions[len(rp.Versions)-1]
			}
			v.Archives[s.Package.Platform.String()] = s.Zip
		}
		var providers []registrytest.Provider
		for _, k := range order {
			providers = append(providers, *byProvider[k])
		}
		srv := registrytest.New(t, providers...)
		transport := httpclient.NewTransport(srv.CertPool())
		dialer := &net.Dialer{Timeout: 5 * time.Second}
		transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "example.com:443" {
				addr = srv.Host()
			}
			return dialer.DialContext(ctx, network, addr)
		}
		r, err := registry.Open("registry://example.com", "example.com", registry.Options{HTTP: httpclient.Client{HTTP: &http.Client{Transport: transport}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}})
}
