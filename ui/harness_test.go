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
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/demo"
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
	deadline := time.After(15 * time.Second)
	for !cond(h.m) {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s\nstatus: %q", what, h.screen(), h.m.status.text)
		}
	}
}

// drain processes whatever messages arrive within d.
func (h *harness) drain(d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			return
		}
	}
}

// press sends key presses, by the names Bubble Tea gives them.
func (h *harness) press(keys ...string) {
	for _, k := range keys {
		h.send(keyPress(k))
	}
}

func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	if len(r) != 1 {
		panic("keyPress: unknown key " + k)
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// typeText types a string, one key per rune.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) screen() string { return ansi.Strip(h.m.View().Content) }

// loaded reports that every mirror's catalogue and every listing of the
// shown provider are in.
func loaded(m Model) bool {
	if !m.hasCurrent {
		return false
	}
	for _, mi := range m.mirrors {
		if !mi.listed {
			return false
		}
	}
	for _, l := range m.cache[m.current] {
		if l == nil || l.state == stateLoading {
			return false
		}
	}
	return len(m.cache[m.current]) == len(m.mirrors)
}

func idle(m Model) bool { return loaded(m) && !m.busy() && len(m.dirty) == 0 }

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
		c, ok := h.m.matrix.Cursor()
		if ok && c.Version == version && c.Platform == platform {
			return
		}
		switch {
		case !ok:
			h.t.Fatalf("matrix has no cursor")
		case c.Version != version:
			d := h.m.matrix.Data()
			if indexOf(d.Versions, c.Version) < indexOf(d.Versions, version) {
				h.press("down")
			} else {
				h.press("up")
			}
		case indexOf(h.m.matrix.Data().Platforms, c.Platform) < indexOf(h.m.matrix.Data().Platforms, platform):
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

func stateOf(m Model, i int) sync.JobState {
	t := m.jobs.Tracker()
	return t.Jobs[t.Order[i]].State
}

func resize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
