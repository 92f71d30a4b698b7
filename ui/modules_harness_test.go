package ui

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

// modHost is the module registry's hostname in tests. The test server's
// certificate covers it and the client dials the server whatever the
// host, so names, locations and views do not depend on a port.
const modHost = "example.com"

// modWorld is a real module registry over TLS offering acme/network/aws
// 2.0.0, 1.1.0 and 1.0.0 as zips, and 0.9.0 whose download answer is
// missing; and a directory holding 1.0.0, fetched and packed from the
// registry as a sync would.
type modWorld struct {
	srv     *modulestest.Server
	client  *http.Client
	reg     *modules.Registry
	builder *fetch.Builder
	dir     string
	store   *modfs.Store
	module  modules.Module
}

func moduleFiles(version string) []modulestest.Entry {
	return modulestest.Files(map[string]string{
		"main.tf":      "variable \"cidr\" {}\n# acme/network " + version + "\n",
		"outputs.tf":   "output \"id\" { value = \"" + version + "\" }\n",
		"CHANGELOG.md": "## " + version + "\n",
	})
}

// dialing returns a client that trusts srv and reaches it for any host.
func dialing(srv *modulestest.Server) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: srv.RootCAs(), MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, srv.Host())
		},
	}}
}

func newModWorld(t *testing.T) *modWorld {
	t.Helper()
	s := modulestest.New(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		path := "/archives/network-" + v + ".zip"
		s.File(path, modulestest.Zip(t, moduleFiles(v)))
		s.Add("acme/network/aws", v, modulestest.Download{Location: path})
	}
	s.List("acme/network/aws", "0.9.0") // listed, but its download answer is a 404
	client := dialing(s)
	reg, err := modules.NewRegistry("registry://"+modHost, modHost, modules.Options{HTTP: httpclient.Client{HTTP: client}})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modules.ParseModule("acme/network/aws", modHost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := modfs.Open("./modules", dir, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := &modWorld{srv: s, client: client, reg: reg, module: mod, dir: dir, store: store,
		builder: fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: client}, TempDir: t.TempDir()})}
	t.Cleanup(func() { w.builder.Close() })
	w.seed(t, w.reg, w.builder, w.store, "1.0.0")
	return w
}

// seed fetches version v of the module from reg and stores it in dst.
func (w *modWorld) seed(t *testing.T, reg *modules.Registry, b modules.Builder, dst modules.Writer, v string) {
	t.Helper()
	c, err := backends.ParseVersionConstraint(v)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := reg.ListModule(t.Context(), w.module, c)
	if err != nil || len(ls.Items) != 1 || ls.Items[0].Source == nil {
		t.Fatalf("listing %s %s: %v %+v", w.module, v, err, ls)
	}
	it := ls.Items[0]
	pkg, err := b.Build(t.Context(), w.module, it.Version, *it.Source, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pkg.Remove()
	if _, err := dst.Put(t.Context(), pkg, false, nil); err != nil {
		t.Fatal(err)
	}
}

// zipPath is where the directory keeps version v.
func (w *modWorld) zipPath(v string) string {
	return filepath.Join(w.dir, modHost, "acme", "network", "aws", v+".zip")
}

func (w *modWorld) config() ModulesConfig {
	return ModulesConfig{
		Modules: []modules.Module{w.module},
		Places:  []ModulePlace{{Lister: w.reg, Kind: "registry"}, {Lister: w.store, Kind: "fs"}},
		Builder: w.builder,
	}
}

// ociPair adds two OCI places in one real registry: A holds 1.1.0 as the
// registry serves it, B holds a 1.1.0 built from a second registry that
// serves other contents, so their digests differ.
func (w *modWorld) ociPair(t *testing.T) (a, b *modoci.Store) {
	t.Helper()
	oreg := ocitest.New(t)
	open := func(repo string) *modoci.Store {
		tmpl := oreg.Host() + "/" + repo + "/${namespace}/${name}-${system}"
		s, err := modoci.Open("oci://"+tmpl, tmpl, modoci.Options{HTTP: oreg.Client(), Credentials: credentials.NewMemoryStore()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b = open("a"), open("b")
	w.seed(t, w.reg, w.builder, a, "1.1.0")

	other := modulestest.New(t)
	other.File("/archives/network-1.1.0.zip", modulestest.Zip(t, moduleFiles("1.1.0-rebuilt")))
	other.Add("acme/network/aws", "1.1.0", modulestest.Download{Location: "/archives/network-1.1.0.zip"})
	oc := dialing(other)
	oreg2, err := modules.NewRegistry("registry://"+modHost, modHost, modules.Options{HTTP: httpclient.Client{HTTP: oc}})
	if err != nil {
		t.Fatal(err)
	}
	ob := fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: oc}, TempDir: t.TempDir()})
	defer ob.Close()
	w.seed(t, oreg2, ob, b, "1.1.0")
	return a, b
}

// modulesLoaded reports that every place's listing of the module shown is
// in.
func modulesLoaded(m Model) bool {
	v := m.mods()
	if !v.hasCurrent {
		return false
	}
	ls := v.cache[v.current]
	if len(ls) != len(v.places) {
		return false
	}
	for _, l := range ls {
		if l == nil || l.state == stateLoading || l.refreshing {
			return false
		}
	}
	return true
}

func moduleMarksAt(t *testing.T, m Model, version string) []string {
	t.Helper()
	d := m.mods().grid.Data()
	r := indexOf(d.Rows, version)
	if r < 0 {
		t.Fatalf("no version %s in the modules table (versions %v)", version, d.Rows)
	}
	var out []string
	for _, cell := range d.Marks[r] {
		for _, mk := range cell {
			out = append(out, mk.Glyph())
		}
	}
	return out
}

// gotoVersion moves the modules table's cursor to version.
func (h *harness) gotoVersion(version string) {
	h.t.Helper()
	for range 50 {
		c, ok := h.m.mods().grid.Cursor()
		if !ok {
			h.t.Fatalf("the modules table has no cursor")
		}
		if c.Row == version {
			return
		}
		d := h.m.mods().grid.Data()
		if indexOf(d.Rows, c.Row) < indexOf(d.Rows, version) {
			h.press("down")
		} else {
			h.press("up")
		}
	}
	h.t.Fatalf("cannot reach %s in the modules table", version)
}

// detailsText is the Details pane's text with wrapped lines joined, so a
// long location can be looked for whole.
func detailsText(m Model) string {
	return strings.ReplaceAll(ansi.Strip(m.details.View()), "\n    ", "")
}
