package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends/fs"
)

func motion(x, y int) tea.MouseMotionMsg { return tea.MouseMotionMsg{X: x, Y: y} }

// The pointer resting on a place the header shortens, or on a row of the
// providers list, shows its full name in place of the status line (the
// view asks the terminal for every motion); moving off it, or a key, gives
// the status line back.
func TestHoverShowsFullNames(t *testing.T) {
	w := newWorld(t)
	var mirrors []Mirror
	for i, n := range longNames[:3] {
		dir := []string{w.Primary, w.Secondary, w.Primary}[i]
		r, err := fs.Open(n.name, dir, fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mirrors = append(mirrors, Mirror{Reader: r, Kind: n.kind})
	}
	h := newHarness(t, Config{Mirrors: mirrors}, 80, 24)
	h.until("load", idle)
	if got := h.m.View().MouseMode; got != tea.MouseModeAllMotion {
		t.Errorf("the view's mouse mode is %v; want all motion (hover)", got)
	}
	status := func() string { return strings.Split(h.screen(), "\n")[22] } // above the key bar
	before := status()

	header := strings.Split(h.screen(), "\n")[0]
	x := strings.Index(header, "[3] ")
	if x < 0 || strings.Contains(header, longNames[2].name) {
		t.Fatalf("the header does not shorten [3]: %q", header)
	}
	h.send(motion(len([]rune(header[:x]))+5, 0))
	if st := status(); !strings.Contains(st, "[3] "+longNames[2].name[:40]) {
		t.Errorf("hovering [3] in the header: status line %q, want its full name", st)
	}

	lx, ly := at(t, h.screen(), "acme/dns", 0, h.m.lay.leftW)
	h.send(motion(lx+2, ly))
	if st := status(); !strings.Contains(st, "registry.terraform.io/acme/dns") {
		t.Errorf("hovering acme/dns in the list: status line %q, want its full address", st)
	}
	if cur, _ := h.m.prov().list.Selected(); cur.Type == "dns" {
		t.Errorf("hovering moved the list's cursor to %s", cur)
	}

	h.send(motion(h.m.lay.leftW+10, 5)) // the matrix: nothing to name
	if st := status(); st != before {
		t.Errorf("off the names, the status line is %q, want %q back", st, before)
	}
	h.send(motion(lx+2, ly))
	h.press("down")
	if st := status(); strings.Contains(st, "registry.terraform.io/acme/dns") {
		t.Errorf("after a key the status line still shows the hover: %q", st)
	}
}
