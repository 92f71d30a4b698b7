package ui

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// at finds text on the screen as drawn (each rune one cell, as every glyph
// the UI draws is), from column from on (before column to, where to > 0):
// its column and line.
func at(t *testing.T, screen, text string, from int, to ...int) (x, y int) {
	t.Helper()
	for y, line := range strings.Split(screen, "\n") {
		r := []rune(line)
		if len(to) > 0 && to[0] < len(r) {
			r = r[:to[0]]
		}
		if from >= len(r) {
			continue
		}
		if i := strings.Index(string(r[from:]), text); i >= 0 {
			return from + len([]rune(string(r[from:])[:i])), y
		}
	}
	t.Fatalf("%q is not on the screen (from column %d):\n%s", text, from, screen)
	return 0, 0
}

func click(x, y int) tea.MouseClickMsg {
	return tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}
}

func wheel(x, y int, b tea.MouseButton) tea.MouseWheelMsg {
	return tea.MouseWheelMsg{X: x, Y: y, Button: b}
}

// TestModelMouse drives the panes with real Bubble Tea mouse messages: a
// click on a provider shows it, on a cell moves the matrix's cursor there
// and focuses the matrix, a second click on it selects it; the wheel moves
// the cursor of the pane under the pointer; a click in the jobs pane
// focuses it on the job clicked. The view asks the terminal for clicks,
// the wheel and motion (hover).
func TestModelMouse(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	if got := h.m.View().MouseMode; got != tea.MouseModeAllMotion {
		t.Errorf("the view's mouse mode is %v; want all motion (clicks, the wheel and hover)", got)
	}

	// acme/dns, the second provider: a click shows it.
	x, y := at(t, h.screen(), "acme/dns", 0, h.m.lay.leftW)
	h.send(click(x, y))
	if h.m.focus != paneProviders {
		t.Errorf("focus %v after a click in the list; want the list", h.m.focus)
	}
	h.until("acme/dns to load", func(m Model) bool { return loaded(m) && m.prov().current.Type == "dns" })

	// A cell: the cursor goes there, the matrix has the focus; a second
	// click selects it.
	leftW := h.m.lay.leftW
	cx, _ := at(t, h.screen(), "linux_amd64", leftW)
	_, ry := at(t, h.screen(), " 3.1.0", leftW)
	h.send(click(cx+1, ry))
	if h.m.focus != paneMatrix {
		t.Fatalf("focus %v after a click in the matrix; want the matrix", h.m.focus)
	}
	if c, ok := h.m.prov().grid.Cursor(); !ok || c.Row != "3.1.0" || c.Col != "linux_amd64" {
		t.Fatalf("cursor at %+v after the click; want 3.1.0 linux_amd64", c)
	}
	if n := len(h.m.prov().grid.Selection()); n != 0 {
		t.Errorf("one click selected %d cell(s); it only moves the cursor", n)
	}
	h.send(click(cx+1, ry))
	if got := h.m.prov().grid.Selection(); len(got) != 1 || got[0].Row != "3.1.0" || got[0].Col != "linux_amd64" {
		t.Errorf("a second click selected %v; want 3.1.0 linux_amd64", got)
	}
	if !strings.Contains(h.screen(), "1 selected") {
		t.Errorf("the matrix does not say 1 selected:\n%s", h.screen())
	}

	// The wheel over the matrix moves its cursor; over the list, the
	// list's, which shows the provider it lands on.
	h.send(wheel(cx, ry, tea.MouseWheelDown))
	if c, _ := h.m.prov().grid.Cursor(); c.Row != "3.0.1" {
		t.Errorf("cursor at %s after the wheel turned down; want the next version, 3.0.1", c.Row)
	}
	h.send(wheel(cx, ry, tea.MouseWheelUp))
	if c, _ := h.m.prov().grid.Cursor(); c.Row != "3.1.0" {
		t.Errorf("cursor at %s after the wheel turned back up; want 3.1.0", c.Row)
	}
	lx, ly := at(t, h.screen(), "acme/dns", 0, leftW)
	h.send(wheel(lx, ly, tea.MouseWheelDown))
	h.until("the provider below acme/dns to load", func(m Model) bool { return loaded(m) && m.prov().current.Type != "dns" })

	// The jobs pane: queue two cells, then click the second job.
	h.send(click(lx, ly)) // back to acme/dns
	h.until("acme/dns again", func(m Model) bool { return loaded(m) && m.prov().current.Type == "dns" })
	h.press("enter", "a", "enter")
	h.until("the destination's plan", func(m Model) bool { return m.dialog != nil })
	h.press("enter")
	if h.m.dialog != nil && h.m.dialog.Confirming() {
		h.press("enter")
	}
	h.until("the jobs to end", func(m Model) bool {
		return len(m.jobs.Tracker().Order) >= 2 && !m.jobs.Tracker().Unfinished()
	})
	_, jy := at(t, h.screen(), "Jobs", leftW)
	h.send(click(leftW+4, jy+2))
	if h.m.focus != paneJobs {
		t.Fatalf("focus %v after a click in the jobs pane; want the jobs", h.m.focus)
	}
	if j, ok := h.m.jobs.Selected(); !ok || j.Info.ID != h.m.jobs.Tracker().Order[1] {
		t.Errorf("the jobs' cursor is not on the second job, clicked")
	}
}

// TestModelSelectAllCells: a selects every cell of the matrix (every
// version shown, every platform), a again unselects them.
func TestModelSelectAllCells(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 80, 24)
	h.until("load", loaded)
	h.press("enter", "a")
	rows, cols, _ := matrixData(h.m)
	sel := h.m.prov().grid.Selection()
	if len(sel) != len(rows)*len(cols) || len(sel) == 0 {
		t.Fatalf("a selected %d cells; want every one of %d x %d", len(sel), len(rows), len(cols))
	}
	if !strings.Contains(h.screen(), "a all cells") && !strings.Contains(strings.Join(h.m.fullHelpLines(), "\n"), "all cells") {
		t.Errorf("help does not list a")
	}
	h.press("a")
	if n := len(h.m.prov().grid.Selection()); n != 0 {
		t.Errorf("a again left %d cells selected", n)
	}
}

// TestModelReloadAfterAnOutsideSync: an archive lands in the second mirror
// behind the UI's back; its cell stays missing until ctrl+r lists the
// places again, and then shows present.
func TestModelReloadAfterAnOutsideSync(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", idle)
	if got := marksAt(t, h.m, "2.1.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, miss}) {
		t.Fatalf("2.1.0 linux_amd64 marks %v before; want missing in the second", got)
	}
	body, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "2.1.0", "linux_amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archivePath(w.Secondary, "acme/cloud", "2.1.0", "linux_amd64"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	h.press("down", "up") // another provider and back: what is listed is kept
	h.until("acme/cloud again", func(m Model) bool { return idle(m) && m.prov().current.Type == "cloud" })
	if got := marksAt(t, h.m, "2.1.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, miss}) {
		t.Fatalf("marks %v without ctrl+r; the listing was kept, want still missing", got)
	}
	h.press("ctrl+r")
	if !strings.Contains(h.m.status().text, "listing every place again") {
		t.Errorf("status %q after ctrl+r", h.m.status().text)
	}
	h.until("the places listed again", func(m Model) bool {
		return idle(m) && !m.relisting && len(marksAt(t, m, "2.1.0", "linux_amd64")) == 2 && marksAt(t, m, "2.1.0", "linux_amd64")[1] != miss
	})
	if got := marksAt(t, h.m, "2.1.0", "linux_amd64"); got[1] == miss || got[1] == theme.MarkLoading {
		t.Errorf("marks %v after ctrl+r; want present in the second", got)
	}
	if !strings.Contains(h.m.status().text, "listed every place again") {
		t.Errorf("status %q once listed", h.m.status().text)
	}
}

// TestModelRetryRetriesEveryFailedJob: R on the jobs pane retries what its
// help says, every failed or canceled job, not only the one under the
// cursor.
func TestModelRetryRetriesEveryFailedJob(t *testing.T) {
	w := newWorld(t)
	release := make(chan struct{})
	net := serveNet(t, w.Primary, func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".zip") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	defer close(release)
	cfg := Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}, {Reader: w.secondary, Kind: "fs"}}}
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("space", "right", "space", "enter", "enter")
	h.until("two jobs to start", func(m Model) bool { return len(m.jobs.Tracker().Order) == 2 })
	h.press("tab", "x", "down", "x")
	h.until("both cancelled", func(m Model) bool {
		return stateOf(m, 0) == engine.Canceled && stateOf(m, 1) == engine.Canceled
	})
	h.until("the queue idle", func(m Model) bool { return !m.queueActive })
	h.press("R")
	if !strings.Contains(h.m.status().text, "retrying 2") {
		t.Errorf("status %q; want it to say 2 jobs are retried", h.m.status().text)
	}
	h.until("both retried", func(m Model) bool {
		return stateOf(m, 0) != engine.Canceled && stateOf(m, 1) != engine.Canceled
	})
}

// TestEndToEndMouse clicks through a program in a virtual terminal with
// real mouse messages: a provider, then the version column of the matrix's
// first row, where the cursor is, twice (the first focuses the matrix, the
// second selects the row), then enter asks where to queue it.
func TestEndToEndMouse(t *testing.T) {
	w := newWorld(t)
	tm, waitFor, press := newProgram(t, w.config())
	waitFor("acme/dns", "windows_amd64", listed)
	// At 120x36 the list starts on the screen's third line: acme/dns, the
	// second provider, is on the fourth.
	tm.Send(click(3, 3))
	waitFor("acme/dns ─ compare 1 ↔ 2", listed)
	// The matrix's box starts at column 33 (28 % of 120); its first row is
	// under the box's top border and the headings.
	tm.Send(click(33+3, 3)) // focuses the matrix, its cursor there already
	tm.Send(click(33+3, 3)) // selects
	waitFor("selected")
	press("enter")
	waitFor("to which mirror?")
	press("esc", "q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(Model)
	sel := final.prov().grid.Selection()
	if final.prov().current.Type != "dns" || len(sel) == 0 {
		t.Fatalf("after the clicks: provider %s, selection %v; want acme/dns with its newest row", final.prov().current, sel)
	}
	for _, c := range sel {
		if c.Row != "3.2.0" {
			t.Errorf("selected %v; want the row of 3.2.0 alone", c)
		}
	}
}
