package ui

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// TestModelURLNamesKeepTheirHost: at 80x24 a long OCI template and a
// network mirror's URL are cut in the middle, keeping the registry's host
// and port, what tells them apart from each other and from any other
// registry (the template's end alone, "…/${type}", named no registry).
func TestModelURLNamesKeepTheirHost(t *testing.T) {
	w := newWorld(t)
	reg := ocitest.New(t)
	tmpl := reg.Host() + "/terraform/providers/${namespace}/${type}"
	o, err := oci.Open("oci://"+tmpl, tmpl, oci.Options{RootCAs: reg.RootCAs(), Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	net := serveNet(t, w.Primary, nil)
	cfg := Config{Mirrors: []Mirror{{Reader: w.primary, Kind: "fs"}, {Reader: net, Kind: "net"}, {Reader: o, Kind: "oci"}}}
	h := newHarness(t, cfg, 80, 24)
	h.until("load", loaded)
	header := strings.Split(h.screen(), "\n")[0]
	_, port, _ := strings.Cut(reg.Host(), ":")
	if !strings.Contains(header, port) {
		t.Errorf("the header cuts the OCI registry's host:port (%s) out of its name: %q", reg.Host(), header)
	}
	_, netPort, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(net.String(), "https://"), "/"), ":")
	if !strings.Contains(header, netPort) {
		t.Errorf("the header cuts the network mirror's port (%s) out of its name: %q", netPort, header)
	}
	if !strings.Contains(header, "…") {
		t.Errorf("nothing was cut at 80 columns; the test shows nothing: %q", header)
	}
}
