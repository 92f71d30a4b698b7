package ui

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/ui/demo"
)

// TestView renders the UI at the sizes it must work at, through a user's
// session, and compares each screen (ANSI stripped) with its golden file;
// regenerate with go test ./ui -run TestView -update.
func TestView(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		w := newWorld(t)
		h := newHarness(t, w.config(), size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
				golden.RequireEqual(t, []byte(h.screen()))
			})
		}
		h.until("load", idle)
		snap("start")

		h.press("enter")
		h.gotoCell("2.0.0", "linux_amd64")
		snap("matrix_conflict")

		h.press("d")
		snap("details_toggled")
		h.press("d")

		h.gotoCell("2.1.0", "linux_amd64")
		h.press("r", "down", "down", "c")
		snap("selection")

		h.press("enter")
		snap("queue_pick")
		h.press("down", "enter")
		snap("queue_confirm")

		h.press("enter")
		h.until("the jobs to land and the cells to update", func(m Model) bool {
			return jobsEnded(5)(m) && idle(m)
		})
		snap("jobs_done")

		h.press("?")
		snap("help")
		h.press("esc", "tab", "tab") // matrix -> jobs -> providers
		h.press("/")
		h.typeText("le")
		snap("provider_filter")
	}
}

// TestViewHelpScrolls: at the smallest size the UI draws in, the help is
// taller than the screen; it scrolls with the keys its key bar names, and
// every line of it, the last key included, can be brought on screen.
// Regenerate with go test ./ui -run TestViewHelpScrolls -update.
func TestViewHelpScrolls(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), minW, minH)
	h.until("load", idle)
	h.press("enter") // the matrix: the longest help
	h.press("?")
	golden.RequireEqual(t, []byte(h.screen()))
	if !strings.Contains(h.screen(), "↑/↓ scroll") {
		t.Errorf("the key bar does not say how to scroll the help:\n%s", h.screen())
	}
	want := h.m.fullHelpLines()
	seen := map[string]bool{}
	for range len(want) {
		for _, l := range strings.Split(h.screen(), "\n") {
			seen[strings.TrimSpace(strings.Trim(l, "┃"))] = true
		}
		h.press("down")
	}
	for _, l := range want {
		if l := strings.TrimSpace(ansi.Strip(l)); !seen[l] {
			t.Errorf("scrolling down never shows the help's line %q", l)
		}
	}
	h.press("g", "G")
	t.Run("end", func(t *testing.T) { golden.RequireEqual(t, []byte(h.screen())) })
	if !strings.Contains(h.screen(), "ctrl+c quit now") {
		t.Errorf("G does not bring the last key on screen:\n%s", h.screen())
	}
	h.press("esc")
	if h.m.showHelp {
		t.Errorf("esc does not close help")
	}
}

// TestViewErrors shows a mirror that cannot be listed: named in the status
// line and marked in the matrix, the rest of the UI working.
func TestViewErrors(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	if err := os.RemoveAll(w.Secondary); err != nil {
		t.Fatal(err)
	}
	// Wide enough that the status line is not cut, and Details folded (the
	// error there would wrap the temp path).
	h := newHarness(t, cfg, 150, 29)
	h.until("load", idle)
	// The temp dir's name varies in length, and so does the padding after it.
	lines := strings.Split(strings.ReplaceAll(h.screen(), w.Dir, "$TMP"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	screen := strings.Join(lines, "\n")
	golden.RequireEqual(t, []byte(screen))
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// TestViewMarks renders, at 80x24 and 120x40, a matrix that shows every
// mark a cell can hold, its legend, and the events pane with the errors and
// warnings behind them in full: [1] with a tampered archive (✗ once
// verified, its twin in [2] ●), [2] lacking some (○), holding one other
// archive (≠) and a version document it cannot read (◐), [3] a network
// mirror that refuses to list (!), [4] a mirror the CLI configuration does
// not use for the provider (-). Regenerate with -update.
func TestViewMarks(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		w := newWorld(t)
		tamper(t, w, "1.0.0", "linux_amd64")
		doc := filepath.Join(w.Secondary, demo.Host, "acme", "cloud", "1.1.0.json")
		if err := os.WriteFile(doc, []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
		// The network mirror refuses, once the others are listed, so the
		// events come in one order.
		release := make(chan struct{})
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			http.Error(w, "this mirror is for the build farm only", http.StatusForbidden)
		}))
		t.Cleanup(srv.Close)
		net, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		port := ":" + srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
		third, err := fs.Open("./third", t.TempDir(), fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cloud, _ := cliconfig.ParsePattern("acme/cloud")
		cfg := w.config()
		cfg.Mirrors = append(cfg.Mirrors, Mirror{Reader: net, Kind: "net"},
			Mirror{Reader: third, Kind: "fs", Scope: &Scope{Exclude: []cliconfig.Pattern{cloud}, DefaultHosts: []string{demo.Host}}})
		h := newHarness(t, cfg, size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
				// The port varies; it has five digits, so the layout does not.
				golden.RequireEqual(t, []byte(strings.ReplaceAll(h.screen(), port, ":PORT_")))
			})
		}
		h.until("the file mirrors", func(m Model) bool {
			l := m.prov().cache[m.prov().current]
			return l != nil && l[0] != nil && l[0].state == stateLoaded && l[1] != nil && l[1].state == stateLoaded &&
				l[3] != nil && l[3].state == stateLoaded && !m.prov().busyListingNewest()
		})
		close(release)
		h.until("load", idle)
		h.press("enter")
		h.gotoCell("1.0.0", "linux_amd64")
		h.press("v")
		h.until("verification", func(m Model) bool { return len(m.prov().verifying) == 0 })
		snap("matrix")
		h.press("e")
		snap("events")
	}
}

// tamper swaps the primary's archive of a package for another's, behind
// its index, as a tampered mirror would.
func tamper(t *testing.T, w world, version, platform string) {
	t.Helper()
	other, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "1.1.0", platform))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archivePath(w.Primary, "acme/cloud", version, platform), other, 0o644); err != nil {
		t.Fatal(err)
	}
}
