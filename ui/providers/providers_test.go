package providers

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func provs(t *testing.T, addrs ...string) []backends.Provider {
	t.Helper()
	var out []backends.Provider
	for _, a := range addrs {
		p, err := backends.ParseProvider(a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	backends.SortProviders(out)
	return out
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

func press(m Model, keys ...string) Model {
	for _, k := range keys {
		m, _ = m.Update(keyMsg(k))
	}
	return m
}

func newList(w, h int, ps []backends.Provider) Model {
	s := theme.New()
	m := New(&s)
	m.SetSize(w, h)
	m.SetProviders(ps)
	return m
}

func TestLabels(t *testing.T) {
	m := newList(40, 10, provs(t, "registry.terraform.io/hashicorp/aws", "registry.opentofu.org/hashicorp/aws", "registry.terraform.io/acme/dns"))
	view := ansi.Strip(m.View())
	for _, want := range []string{"acme/dns", "registry.opentofu.org/hashicorp/aws", "registry.terraform.io/hashicorp/aws"} {
		if !strings.Contains(view, want) {
			t.Errorf("list lacks %q (a short name two hosts share is written in full):\n%s", want, view)
		}
	}
}

func TestFilterAndCursor(t *testing.T) {
	ps := provs(t, "h.io/a/alpha", "h.io/a/beta", "h.io/b/gamma", "h.io/b/alphabet")
	for _, tc := range []struct {
		keys   []string
		want   string
		shown  int
		typing bool
	}{
		{nil, "h.io/a/alpha", 4, false},
		{[]string{"down", "down"}, "h.io/b/alphabet", 4, false},
		{[]string{"down", "down", "down", "down", "down"}, "h.io/b/gamma", 4, false},
		{[]string{"/", "g", "a"}, "h.io/b/gamma", 1, true},
		{[]string{"/", "b", "/"}, "h.io/b/alphabet", 2, true},      // "b/": namespace b
		{[]string{"down", "/", "a", "l"}, "h.io/a/alpha", 2, true}, // beta no longer matches: the first match
		{[]string{"/", "a", "l", "enter", "down"}, "h.io/b/alphabet", 2, false},
		{[]string{"/", "z", "esc"}, "h.io/a/alpha", 4, false},
	} {
		t.Run(strings.Join(tc.keys, " "), func(t *testing.T) {
			m := press(newList(40, 10, ps), tc.keys...)
			got, _ := m.Selected()
			if got.String() != tc.want || len(m.shown) != tc.shown || m.Typing() != tc.typing {
				t.Errorf("selected %s, %d shown, typing %v; want %s, %d, %v", got, len(m.shown), m.Typing(), tc.want, tc.shown, tc.typing)
			}
		})
	}
}

func TestKeepsCursorAndNotesAcrossUpdates(t *testing.T) {
	m := newList(40, 10, provs(t, "h.io/a/b", "h.io/a/d"))
	m = press(m, "down")
	m.SetNote(provs(t, "h.io/a/d")[0], "1.2.3")
	m.SetProviders(provs(t, "h.io/a/a", "h.io/a/b", "h.io/a/c", "h.io/a/d"))
	if p, _ := m.Selected(); p.Type != "d" {
		t.Errorf("cursor moved to %s", p)
	}
	if !strings.Contains(m.View(), "1.2.3") {
		t.Errorf("the note was lost:\n%s", m.View())
	}
}

func TestManyProvidersScroll(t *testing.T) {
	var addrs []string
	for i := range 500 {
		addrs = append(addrs, fmt.Sprintf("h.io/ns/p%03d", i))
	}
	m := newList(30, 12, provs(t, addrs...))
	m = press(m, "pgdown", "pgdown", "down")
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 12 {
		t.Errorf("%d lines for a 12-line pane", len(lines))
	}
	p, _ := m.Selected()
	if !strings.Contains(ansi.Strip(m.View()), "▸ns/"+p.Type) {
		t.Errorf("the cursor %s is off screen:\n%s", p, m.View())
	}
	if m.Title() != "Providers 500" {
		t.Errorf("title %q", m.Title())
	}
}

func TestEmptyAndTinyLists(t *testing.T) {
	for _, sz := range [][2]int{{0, 0}, {3, 1}, {40, 10}} {
		m := newList(sz[0], sz[1], nil)
		m = press(m, "down", "up", "G", "/", "x", "enter", "pgdown")
		if _, ok := m.Selected(); ok {
			t.Errorf("an empty list has a selection")
		}
		_ = m.View()
	}
}
