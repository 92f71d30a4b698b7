package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync"
)

// threeVersions is a local origin registry serving acme/alpha 1.0.0,
// 1.1.0 and 1.2.0 for two platforms, opened as registry://127.0.0.1:PORT.
func threeVersions(t *testing.T) (*registrytest.Server, backends.Reader) {
	t.Helper()
	var vs []registrytest.Version
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
		for _, plat := range []string{"darwin_arm64", "linux_amd64"} {
			ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, plat), "")
		}
		vs = append(vs, ver)
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: vs})
	r, err := placeopen.Open(t.Context(), "registry://"+reg.Host(), placeopen.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return reg, r
}

// hostSelection is -p for each of ps, with -v ">= 0" (a registry needs a
// constraint).
func hostSelection(t *testing.T, ps ...string) sync.Selection {
	t.Helper()
	var sel sync.Selection
	for _, p := range ps {
		f, err := backends.ParseProviderFilter(p)
		if err != nil {
			t.Fatal(err)
		}
		sel.Providers = append(sel.Providers, f)
	}
	vc, err := backends.ParseVersionConstraint(">= 0")
	if err != nil {
		t.Fatal(err)
	}
	sel.Versions = vc
	return sel
}

// `ui registry://HOST -p acme/alpha`: acme/alpha is the registry's own
// provider, HOST/acme/alpha, with its three versions, as `ls` lists them;
// never registry.terraform.io/acme/alpha with "no version".
func TestHostRuleRegistryShowsItsVersions(t *testing.T) {
	reg, r := threeVersions(t)
	cfg := Config{Mirrors: []Mirror{{Reader: r, Kind: "registry"}}, Selection: hostSelection(t, "acme/alpha")}
	tm, waitFor, press := newProgram(t, cfg)
	waitFor(reg.Host()+"/acme/alpha", "1.2.0", "1.1.0", "1.0.0", "linux_amd64", "darwin_arm64", listed)
	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(e2eWait)).(Model)
	v := final.prov()
	want := reg.Host() + "/acme/alpha"
	if got := fmt.Sprint(v.providerUnion()); got != "["+want+"]" {
		t.Errorf("the list holds %s, want [%s]", got, want)
	}
	if v.current.String() != want {
		t.Errorf("the matrix shows %s, want %s", v.current, want)
	}
	if rows, _, _ := matrixData(final); fmt.Sprint(rows) != "[1.2.0 1.1.0 1.0.0]" {
		t.Errorf("the matrix's versions are %v, want the registry's three", rows)
	}
}

// With several places, -p narrows the list to what the rule selects in
// each (the registry's own acme/alpha, the directory's acme/alpha on any
// host, not its hashicorp/null), and the matrix shows the provider the
// list's cursor is on, whichever it is.
func TestHostRuleListAndMatrixAgree(t *testing.T) {
	reg, r := threeVersions(t)
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, backendtest.Seeds(t, []string{"example.com/acme/alpha", "registry.terraform.io/hashicorp/null"},
		[]string{"0.9.0"}, []string{"linux_amd64"}))
	d, err := fs.Open("./mirror", dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Mirrors: []Mirror{{Reader: r, Kind: "registry"}, {Reader: d, Kind: "fs"}}, Selection: hostSelection(t, "acme/alpha")}
	h := newHarness(t, cfg, 120, 36)
	h.until("every place listed", loaded)
	v := h.m.prov()
	list := v.providerUnion()
	want := []string{reg.Host() + "/acme/alpha", "example.com/acme/alpha"}
	slices.Sort(want)
	var got []string
	for _, p := range list {
		got = append(got, p.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the list holds %v, want %v (-p narrows it; hashicorp/null is not asked for)", got, want)
	}
	versions := map[string]string{reg.Host() + "/acme/alpha": "[1.2.0 1.1.0 1.0.0]", "example.com/acme/alpha": "[0.9.0]"}
	for i := range list {
		if i > 0 {
			h.press("down")
		}
		h.until("the matrix of the provider under the cursor", func(m Model) bool {
			sel, ok := m.prov().list.Selected()
			return ok && m.prov().current == sel && loaded(m)
		})
		sel, _ := h.m.prov().list.Selected()
		if rows, _, _ := matrixData(h.m); fmt.Sprint(rows) != versions[sel.String()] {
			t.Errorf("%s: the matrix shows versions %v, want %s", sel, rows, versions[sel.String()])
		}
		if !strings.Contains(h.screen(), sel.String()) {
			t.Errorf("%s is not named on the screen:\n%s", sel, h.screen())
		}
	}
}

// A NAMESPACE/TYPE no place can put on a host (a network mirror beside a
// directory that does not hold it) is said so on the status line, with the
// full address to write; no provider on a guessed host is listed.
func TestHostRuleUnknownHostSaid(t *testing.T) {
	w := newWorld(t)
	net := serveNet(t, w.Primary, nil)
	empty := t.TempDir()
	d, err := fs.Open("./empty", empty, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}, {Reader: d, Kind: "fs"}}, Selection: hostSelection(t, "acme/cloud")}
	h := newHarness(t, cfg, 120, 36)
	h.until("the status line says the host cannot be known", func(m Model) bool {
		return strings.Contains(m.status().text, "HOSTNAME/acme/cloud")
	})
	if st := h.m.status(); !strings.Contains(st.text, net.String()+" cannot list its providers") {
		t.Errorf("status %q does not name the network mirror", st.text)
	}
	if ps := h.m.prov().providerUnion(); len(ps) != 0 {
		t.Errorf("the list holds %v, want nothing (no host is guessed)", ps)
	}
}
