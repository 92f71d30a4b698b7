package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
)

// untilHolding processes messages until cond holds of the model and the
// messages kept back, those hold picks; it returns them, for the test to
// deliver when it chooses.
func (h *harness) untilHolding(what string, hold func(tea.Msg) bool, cond func(Model, []tea.Msg) bool) []tea.Msg {
	h.t.Helper()
	var held []tea.Msg
	deadline := time.After(time.Minute) // a bound for a loaded machine, not a speed
	for !cond(h.m, held) {
		select {
		case msg := <-h.msgs:
			if hold(msg) {
				held = append(held, msg)
				continue
			}
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.screen())
		}
	}
	return held
}

// lateFirstRow is two directories: [1] holds acme/alpha, the list's first
// row once it is listed; [2] acme/mid and acme/zeta. The harness delivers
// [2]'s catalogue first and [1]'s when the test says, as the demo's
// release directory's listing can come before the others.
func lateFirstRow(t *testing.T) (*harness, func()) {
	t.Helper()
	var ms []Mirror
	for i, ps := range [][]string{{"registry.terraform.io/acme/alpha"}, {"registry.terraform.io/acme/mid", "registry.terraform.io/acme/zeta"}} {
		dir := t.TempDir()
		backendtest.WritePacked(t, dir, backendtest.Seeds(t, ps, []string{"1.0.0"}, []string{"linux_amd64"}))
		r, err := fs.Open([]string{"./first", "./second"}[i], dir, fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, Mirror{Reader: r, Kind: "fs"})
	}
	h := newHarness(t, Config{Mirrors: ms}, 120, 36)
	first := func(msg tea.Msg) bool {
		c, ok := msg.(catalogueMsg)
		return ok && c.mirror == 0
	}
	held := h.untilHolding("[2]'s catalogue, [1]'s kept back", first, func(m Model, held []tea.Msg) bool {
		v := m.prov()
		return len(held) == 1 && v.mirrors[1].listed && v.hasCurrent && v.list.Len() == 2
	})
	return h, func() {
		for _, msg := range held {
			h.send(msg)
		}
		h.until("every place listed", loaded)
	}
}

// Until the user moves the list's cursor or opens a provider, the cursor
// stays on the first row as catalogues arrive, and the matrix shows that
// row's provider: `enter` opens the first provider, as README says.
func TestListCursorStaysOnFirstRowAsProvidersArrive(t *testing.T) {
	h, deliver := lateFirstRow(t)
	if p, _ := h.m.prov().list.Selected(); p.String() != "registry.terraform.io/acme/mid" {
		t.Fatalf("before [1] is listed the cursor is on %s, want acme/mid (the first row)", p)
	}
	deliver()
	v := h.m.prov()
	p, _ := v.list.Selected()
	if p.String() != "registry.terraform.io/acme/alpha" {
		t.Errorf("the cursor is on %s, want acme/alpha (the first row)", p)
	}
	if v.current != p {
		t.Errorf("the matrix shows %s, the cursor is on %s", v.current, p)
	}
	h.press("enter")
	if h.m.focus != paneMatrix || h.m.prov().current.String() != "registry.terraform.io/acme/alpha" {
		t.Errorf("enter opened %s (focus %v), want acme/alpha's matrix", h.m.prov().current, h.m.focus)
	}
}

// Once the user moved the cursor, or opened the provider under it, it
// stays on that provider as providers arrive above it.
func TestListCursorStaysOnTheUsersProvider(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
		want string
	}{
		{"moved", []string{"down"}, "registry.terraform.io/acme/zeta"},
		{"opened", []string{"enter"}, "registry.terraform.io/acme/mid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, deliver := lateFirstRow(t)
			h.press(c.keys...)
			deliver()
			v := h.m.prov()
			if p, _ := v.list.Selected(); p.String() != c.want || v.current != p {
				t.Errorf("the cursor is on %s and the matrix shows %s, want %s for both", p, v.current, c.want)
			}
		})
	}
}
