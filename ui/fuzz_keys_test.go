package ui

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// oddName is what a place may bring into the UI: wide and combining
// characters, right-to-left text and overrides, and terminal controls.
const oddName = "ｗｉｄｅ-名前-\u202eevil\u202c-שלום-e\u0301-\x1b[2J\x1b]0;title\a-\r\n\t-\x00-end"

// oddWorld is the demo world with a third mirror of an odd name and a
// fourth, a network mirror whose every answer is an error with controls in
// it, as a hostile or broken place sends.
func oddWorld(t *testing.T) Config {
	w := newWorld(t)
	odd, err := fs.Open("./"+oddName, w.Secondary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, oddName+strings.Repeat(" ﷽", 50), http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	broken, err := netmirror.Open(srv.URL+"/"+strings.Repeat("x", 200)+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.config()
	cfg.Mirrors = append(cfg.Mirrors, Mirror{Reader: odd, Kind: "fs"}, Mirror{Reader: broken, Kind: "net"})
	return cfg
}

// fuzzKeys are the keys the random walks press: every binding but quit,
// the keys of dialogs and inputs, and some text.
var fuzzKeys = []string{
	"up", "down", "left", "right", "pgdown", "enter", "space", "esc", "tab", "backspace",
	"?", "/", "o", "v", "r", "c", "f", "d", "e", "m", "S", "1", "2", "3", "4", "5", "9",
	"a", "x", "~", ">", "=", " ", ".", "0",
}

// randomMsg is a key press, or now and then a window size from 1x1 to
// 300x100.
func randomMsg(rng *rand.Rand) tea.Msg {
	if rng.IntN(8) == 0 {
		sizes := [][2]int{{1, 1}, {2, 1}, {1, 3}, {10, 4}, {40, 10}, {80, 24}, {300, 100}}
		if rng.IntN(2) == 0 {
			s := sizes[rng.IntN(len(sizes))]
			return resize(s[0], s[1])
		}
		return resize(1+rng.IntN(300), 1+rng.IntN(100))
	}
	return keyPress(fuzzKeys[rng.IntN(len(fuzzKeys))])
}

// TestRandomKeysAndSizes walks the UI at random for many steps, drawing
// every frame: nothing panics, no line is wider than the terminal, and no
// control character from a place reaches the screen.
func TestRandomKeysAndSizes(t *testing.T) {
	for seed := range uint64(4) {
		t.Run("", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			h := newHarness(t, oddWorld(t), 80, 24)
			h.until("the listings", func(m Model) bool { return loaded(m) })
			h.walk(t, 1500, 80, 24, false, func() tea.Msg { return randomMsg(rng) })
		})
	}
}

// checkFrame checks one drawn frame against the terminal's size.
func checkFrame(t *testing.T, frame string, w, h, step int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) > h {
		t.Fatalf("step %d: %d lines on a %dx%d terminal:\n%s", step, len(lines), w, h, ansi.Strip(frame))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Fatalf("step %d: a line %d wide on a %dx%d terminal: %q\n%s", step, ansi.StringWidth(l), w, h, ansi.Strip(l), ansi.Strip(frame))
		}
		for _, r := range ansi.Strip(l) {
			if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' {
				t.Fatalf("step %d: control %U on screen: %q", step, r, ansi.Strip(l))
			}
		}
	}
}

// TestRandomKeysThenQuit runs the program in a virtual terminal through a
// random walk of keys and sizes; afterwards esc leaves whatever is open and
// q quits.
func TestRandomKeysThenQuit(t *testing.T) {
	cfg := oddWorld(t)
	cfg.NoAnimation = true
	cfg.Engine = engine.NewEngine(t.Context(), engine.Options{})
	m := New(t.Context(), cfg)
	t.Cleanup(m.Shutdown)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	rng := rand.New(rand.NewPCG(7, 7))
	for range 600 {
		tm.Send(randomMsg(rng))
	}
	tm.Send(resize(80, 24))
	for range 5 {
		tm.Send(keyPress("esc"))
	}
	tm.Send(keyPress("q"))
	tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute))
}

// walk sends steps messages next makes, starting at w x ht: after each,
// whatever it started comes back, as it would, and the frame is checked
// (checkFrame). With stopAtQuit the walk ends when the program quits.
func (h *harness) walk(t *testing.T, steps, w, ht int, stopAtQuit bool, next func() tea.Msg) {
	t.Helper()
	for step := range steps {
		msg := next()
		if s, ok := msg.(tea.WindowSizeMsg); ok {
			w, ht = s.Width, s.Height
		}
		h.send(msg)
	drain:
		for {
			select {
			case m := <-h.msgs:
				h.send(m)
			default:
				break drain
			}
		}
		checkFrame(t, h.m.View().Content, w, ht, step)
		if stopAtQuit && h.quit {
			return
		}
	}
}
