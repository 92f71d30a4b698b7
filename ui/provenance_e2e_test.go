package ui

import (
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// TestEndToEndFromRegistryWritesProvenance: copies made in the UI from an
// origin registry (the Provider Registry Protocol over TLS, its SHA256SUMS
// signed with a GPG key made in the test) leave in the destination what a
// CLI sync leaves: the signed SHA256SUMS, its signature and the key beside
// the index documents, so verify names the registry's key at once, with no
// later sync to backfill them; the jobs name their signer.
func TestEndToEndFromRegistryWritesProvenance(t *testing.T) {
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range []string{"darwin_arm64", "linux_amd64"} {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	src, err := placeopen.Open(t.Context(), "registry://"+reg.Host(), placeopen.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dst, err := fs.Open("./mirror", dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := backends.ParseProviderFilter(reg.Address("acme", "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	vc, err := backends.ParseVersionConstraint("1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	sel := sync.Selection{Providers: []backends.ProviderFilter{addr}, Versions: vc}
	cfg := Config{Mirrors: []Mirror{{Reader: src, Kind: "registry"}, {Reader: dst, Kind: "fs"}}, Selection: sel}
	tm, waitFor, press := newProgram(t, cfg)

	waitFor("acme/alpha", "1.0.0", "linux_amd64", listed)
	press("enter", "r", "enter") // the matrix; the row of 1.0.0; queue…
	waitFor("2 to copy: 2 from [1] registry://")
	press("enter")
	waitFor("2 done")
	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(e2eWait)).(Model)
	tr := final.jobs.Tracker()
	for _, id := range tr.Order {
		if j := tr.Jobs[id]; j.State != engine.Done || j.Info.Signer == nil || j.Info.Signer.Fingerprint != reg.Fingerprint() {
			t.Errorf("job %s: %s, signer %+v; want done, signed by %s", j.Info.Package, j.State, j.Info.Signer, reg.Fingerprint())
		}
	}

	again, err := fs.Open("./mirror", dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := backends.ParseVersion("1.0.0")
	p, err := backends.ParseProvider(reg.Address("acme", "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if signed, err := sync.ReadProvenance(t.Context(), again, p, v, provenance.Options{}); err != nil || signed == nil {
		t.Fatalf("the destination keeps no provenance of %s 1.0.0 (%v)", p, err)
	}
	found, err := sync.VerifyPlaceWith(t.Context(), again, sel, sync.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 {
		t.Fatalf("verify found %d packages, want 2", len(found))
	}
	for _, f := range found {
		if f.Status != sync.StatusOK || f.Signer == nil || f.Signer.Fingerprint != reg.Fingerprint() {
			t.Errorf("verify %s: %s %q, signer %+v; want ok, signed by %s", f.Package, f.Status, f.Detail, f.Signer, reg.Fingerprint())
		}
	}
}
