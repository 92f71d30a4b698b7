package list

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/ui/internal/keypress"
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

func mods(t *testing.T, addrs ...string) []modules.Module {
	t.Helper()
	var out []modules.Module
	for _, a := range addrs {
		m, err := modules.ParseModule(a, "")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func press[K comparable](m Model[K], keys ...string) Model[K] {
	for _, k := range keys {
		m, _ = m.Update(keypress.Msg(k))
	}
	return m
}

// newProviders is the providers list as the Providers view makes it.
func newProviders(w, h int, ps []backends.Provider) Model[backends.Provider] {
	s := theme.New()
	m := New(&s, Options[backends.Provider]{Name: "Providers", Keys: DefaultKeyMap("open matrix"),
		Short: backends.Provider.ShortString, Full: backends.Provider.String, NoMatch: " no provider matches"})
	m.SetSize(w, h)
	m.SetItems(ps)
	return m
}

// newModules is the modules list as the Modules view makes it: no filter.
func newModules(w, h int) Model[modules.Module] {
	s := theme.New()
	keys := DefaultKeyMap("open versions")
	keys.Filter.SetEnabled(false)
	m := New(&s, Options[modules.Module]{Name: "Modules", Keys: keys, Short: modules.Module.Short, Full: modules.Module.String,
		Empty: " no modules: name them with --module"})
	m.SetSize(w, h)
	return m
}

func TestLabels(t *testing.T) {
	m := newProviders(40, 10, provs(t, "registry.terraform.io/hashicorp/aws", "registry.opentofu.org/hashicorp/aws", "registry.terraform.io/acme/dns"))
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
			m := press(newProviders(40, 10, ps), tc.keys...)
			got, _ := m.Selected()
			if got.String() != tc.want || m.Shown() != tc.shown || m.Typing() != tc.typing {
				t.Errorf("selected %s, %d shown, typing %v; want %s, %d, %v", got, m.Shown(), m.Typing(), tc.want, tc.shown, tc.typing)
			}
		})
	}
}

func TestKeepsCursorAndNotesAcrossUpdates(t *testing.T) {
	m := newProviders(40, 10, provs(t, "h.io/a/b", "h.io/a/d"))
	m = press(m, "down")
	m.SetNote(provs(t, "h.io/a/d")[0], "1.2.3")
	m.SetItems(provs(t, "h.io/a/a", "h.io/a/b", "h.io/a/c", "h.io/a/d"))
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
	m := newProviders(30, 12, provs(t, addrs...))
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
		m := newProviders(sz[0], sz[1], nil)
		m = press(m, "down", "up", "G", "/", "x", "enter", "pgdown")
		if _, ok := m.Selected(); ok {
			t.Errorf("an empty list has a selection")
		}
		_ = m.View()
	}
}

// TestModules is the list of the Modules view: no filter, and a word on how
// to fill it while empty.
func TestModules(t *testing.T) {
	m := newModules(40, 5)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "--module") {
		t.Errorf("an empty list should say how to fill it: %q", v)
	}
	ms := mods(t, "a.example/acme/net/aws", "b.example/acme/net/aws", "a.example/acme/dns/gcp")
	m.SetItems(ms)
	m.SetNote(ms[1], "2.0.0")
	v := ansi.Strip(m.View())
	// Two hosts share acme/net/aws: both are named in full.
	for _, want := range []string{"▸a.example/acme/net/aws", " b.example/acme/net/aws", "2.0.0", " acme/dns/gcp"} {
		if !strings.Contains(v, want) {
			t.Errorf("list lacks %q:\n%s", want, v)
		}
	}
	m = press(m, "down", "down", "down", "/") // past the end; no filter to start
	if got, _ := m.Selected(); got != ms[2] || m.Typing() {
		t.Errorf("selected %s, typing %v; want the last, not typing", got, m.Typing())
	}
	// Replacing the list keeps the cursor on the same module and its note.
	m.SetItems([]modules.Module{ms[2], ms[1]})
	if got, _ := m.Selected(); got != ms[2] || m.Title() != "Modules 2" {
		t.Errorf("after SetItems: selected %s, title %q", got, m.Title())
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "acme/net/aws") || !strings.Contains(v, "2.0.0") {
		t.Errorf("the note was lost:\n%s", v)
	}
}

// TestCursorClamp: the cursor stays among the rows and on screen, whatever
// moves it.
func TestCursorClamp(t *testing.T) {
	for _, tc := range []struct {
		c        Cursor
		n, h     int
		pos, top int
	}{
		{Cursor{Pos: -3}, 10, 4, 0, 0},
		{Cursor{Pos: 12}, 10, 4, 9, 6},
		{Cursor{Pos: 5, Top: 0}, 10, 4, 5, 2},
		{Cursor{Pos: 1, Top: 5}, 10, 4, 1, 1},
		{Cursor{Pos: 3, Top: 8}, 10, 4, 3, 3},
		{Cursor{Pos: 2}, 0, 4, 0, 0},
		{Cursor{Pos: 2}, 5, 0, 2, 2},
	} {
		c := tc.c
		c.Clamp(tc.n, tc.h)
		if c.Pos != tc.pos || c.Top != tc.top {
			t.Errorf("%+v among %d rows, %d on screen: %+v, want pos %d top %d", tc.c, tc.n, tc.h, c, tc.pos, tc.top)
		}
	}
}

// TestLongLabelsCutApart: labels written in full because two hosts share a
// short name are cut where they differ, not at their end, in a narrow pane.
func TestLongLabelsCutApart(t *testing.T) {
	m := newProviders(22, 10, provs(t, "registry.corp.example.com/acme/cloud", "registry.corp.example.org/acme/cloud"))
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if len(lines) != 2 || lines[0] == lines[1] {
		t.Fatalf("the two labels read the same: %q", lines)
	}
	for i, want := range []string{"com/acme", "org/acme"} {
		if !strings.Contains(lines[i], want) || ansi.StringWidth(lines[i]) > 22 {
			t.Errorf("row %q should keep %q, within 22 cells", lines[i], want)
		}
	}
}

// Until the user moves it, the cursor rests on the first item Start
// accepts as items arrive (a spec's first wanted provider), wherever other
// items land above it; once moved, it stays on the user's item.
func TestStartRestsTheCursorUntilMoved(t *testing.T) {
	s := theme.New()
	want := provs(t, "h.io/a/dns")[0]
	m := New(&s, Options[backends.Provider]{Name: "Providers", Keys: DefaultKeyMap("open matrix"),
		Short: backends.Provider.ShortString, Full: backends.Provider.String,
		Start: func(p backends.Provider) bool { return p == want }})
	m.SetSize(40, 10)
	m.SetItems(provs(t, "h.io/a/queue"))
	if p, _ := m.Selected(); p.Type != "queue" {
		t.Errorf("nothing wanted listed yet: cursor on %s, want the first row", p)
	}
	m.SetItems(provs(t, "h.io/a/cloud", "h.io/a/dns", "h.io/a/queue"))
	if p, _ := m.Selected(); p != want {
		t.Errorf("cursor on %s, want %s", p, want)
	}
	m = press(m, "down")
	m.SetItems(provs(t, "h.io/a/aaa", "h.io/a/cloud", "h.io/a/dns", "h.io/a/queue"))
	if p, _ := m.Selected(); p.Type != "queue" {
		t.Errorf("after the user moved: cursor on %s, want queue", p)
	}
}
