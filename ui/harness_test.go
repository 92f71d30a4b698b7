package ui

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/demo"
	"github.com/tfmirror/tfmirror/ui/internal/keypress"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// harness runs a Model the way Bubble Tea does: commands run in goroutines
// and their messages come back through a channel into Update, so tests see
// real listings, real hashing and the real engine, with no terminal.
type harness struct {
	t    *testing.T
	m    Model
	msgs chan tea.Msg
	quit bool
}

func newHarness(t *testing.T, cfg Config, w, h int) *harness {
	t.Helper()
	cfg.NoAnimation = true
	if cfg.Engine == nil {
		cfg.Engine = engine.NewEngine(t.Context(), engine.Options{})
	}
	m := New(t.Context(), cfg)
	t.Cleanup(m.Shutdown)
	hs := &harness{t: t, m: m, msgs: make(chan tea.Msg, 4096)}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.exec(m.Init())
	return hs
}

func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.msgs <- cmd() }()
}

func (h *harness) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.exec(c)
		}
		return
	case tea.QuitMsg:
		h.quit = true
		return
	}
	next, cmd := h.m.Update(msg)
	h.m = next.(Model)
	h.exec(cmd)
}

// until processes messages until cond holds.
func (h *harness) until(what string, cond func(m Model) bool) {
	h.t.Helper()
	deadline := time.After(time.Minute) // a bound for a loaded machine, not a speed
	for !cond(h.m) {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s\nstatus: %q", what, h.screen(), h.m.sh.status.text)
		}
	}
}

// press sends key presses, by the names Bubble Tea gives them.
func (h *harness) press(keys ...string) {
	for _, k := range keys {
		h.send(keyPress(k))
	}
}

func keyPress(k string) tea.KeyPressMsg { return keypress.Msg(k) }

// typeText types a string, one key per rune.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) screen() string { return ansi.Strip(h.m.View().Content) }

// prov and mods are the views, for tests to look into.
func (m Model) prov() *providersView {
	return m.views[viewProviders].(interface{ providers() *providersView }).providers()
}
func (m Model) lockv() *lockView   { return m.views[viewProviders].(*lockView) }
func (m Model) mods() *modulesView { return m.views[viewModules].(*modulesView) }

// status is the status line's text and kind.
func (m Model) status() status { return m.sh.status }

// loaded reports that every mirror's catalogue and every listing of the
// shown provider are in.
func loaded(m Model) bool {
	v := m.prov()
	if !v.hasCurrent {
		return false
	}
	for _, mi := range v.mirrors {
		if !mi.listed {
			return false
		}
	}
	for _, l := range v.cache[v.current] {
		if l == nil || l.state == stateLoading {
			return false
		}
	}
	return len(v.cache[v.current]) == len(v.mirrors)
}

func idle(m Model) bool { return loaded(m) && !m.busy() && len(m.prov().dirty) == 0 }

// matrixData is the Providers view's matrix: versions, platforms, marks.
func matrixData(m Model) (versions, platforms []string, marks [][][]theme.Mark) {
	d := m.prov().grid.Data()
	for _, c := range d.Cols {
		platforms = append(platforms, c.Head)
	}
	return d.Rows, platforms, d.Marks
}

// world is the demo world, opened with short, stable names so views do not
// depend on the temp dir.
type world struct {
	*demo.World
	primary, secondary *fs.Mirror
}

func newWorld(t *testing.T) world {
	t.Helper()
	w, err := demo.Build(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := fs.Open("./primary", w.Primary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := fs.Open("./secondary", w.Secondary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return world{World: w, primary: p, secondary: s}
}

func (w world) config() Config {
	return Config{Mirrors: []Mirror{{Reader: w.primary, Kind: "fs"}, {Reader: w.secondary, Kind: "fs"}}}
}

// serveNet serves dir as a network mirror over a real TLS test server,
// passing each request through slow first (nil: none).
func serveNet(t *testing.T, dir string, slow func(r *http.Request)) backends.Reader {
	t.Helper()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := netmirror.NewHandler(m, nil, hashing.Options{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow != nil {
			slow(r)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	r, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// archivePath is where a filesystem mirror keeps a package's zip.
func archivePath(dir, provider, version, platform string) string {
	typ := provider[strings.Index(provider, "/")+1:]
	return filepath.Join(dir, demo.Host, provider, "terraform-provider-"+typ+"_"+version+"_"+platform+".zip")
}

// gotoCell moves the matrix cursor to a version and platform.
func (h *harness) gotoCell(version, platform string) {
	h.t.Helper()
	for range 50 {
		c, ok := h.m.prov().grid.Cursor()
		if ok && c.Row == version && c.Col == platform {
			return
		}
		versions, platforms, _ := matrixData(h.m)
		switch {
		case !ok:
			h.t.Fatalf("matrix has no cursor")
		case c.Row != version:
			if indexOf(versions, c.Row) < indexOf(versions, version) {
				h.press("down")
			} else {
				h.press("up")
			}
		case indexOf(platforms, c.Col) < indexOf(platforms, platform):
			h.press("right")
		default:
			h.press("left")
		}
	}
	h.t.Fatalf("cannot reach %s %s in the matrix", version, platform)
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// jobsDone reports that n jobs have ended and the queue is idle.
func jobsEnded(n int) func(Model) bool {
	return func(m Model) bool {
		t := m.jobs.Tracker()
		return len(t.Order) == n && !t.Unfinished()
	}
}

func stateOf(m Model, i int) engine.JobState {
	t := m.jobs.Tracker()
	return t.Jobs[t.Order[i]].State
}

func resize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// busyListingNewest reports whether mirrors are still asked for their
// providers' newest versions.
func (v *providersView) busyListingNewest() bool { return v.newestPending > 0 }
