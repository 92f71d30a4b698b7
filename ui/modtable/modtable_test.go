package modtable

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/theme"
)

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	return tea.KeyPressMsg{Code: rune(k[0]), Text: k}
}

func press(m Model, keys ...string) Model {
	for _, k := range keys {
		m, _ = m.Update(keyMsg(k))
	}
	return m
}

func data(versions ...string) Data {
	d := Data{Versions: versions, Places: []string{"[1] registry", "[2] fs", "[3] oci"}, Short: []string{"[1]", "[2]", "[3]"}}
	for range versions {
		d.Marks = append(d.Marks, []theme.Mark{theme.MarkOK, theme.MarkMissing, theme.MarkDiffers})
	}
	return d
}

func newTable(w, h int, d Data) Model {
	s := theme.New()
	m := New(&s)
	m.SetSize(w, h)
	m.SetData(d)
	return m
}

func TestSelection(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
		want []string // Targets
	}{
		{"nothing selected: the cursor's version", nil, []string{"3.0.0"}},
		{"space selects", []string{"space", "down", "down"}, []string{"3.0.0"}},
		{"r selects too", []string{"down", "r", "down", "r"}, []string{"2.0.0", "1.0.0"}},
		{"space again unselects", []string{"space", "space", "down"}, []string{"2.0.0"}},
		{"a selects all, newest first", []string{"a"}, []string{"3.0.0", "2.0.0", "1.0.0", "0.1.0"}},
		{"a twice selects none", []string{"a", "a"}, []string{"3.0.0"}},
		{"esc clears", []string{"space", "down", "space", "esc"}, []string{"2.0.0"}},
		{"the cursor stops at the ends", []string{"up", "up", "pgdown", "down", "space"}, []string{"0.1.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := press(newTable(60, 10, data("3.0.0", "2.0.0", "1.0.0", "0.1.0")), tc.keys...)
			if got := m.Targets(); !slices.Equal(got, tc.want) {
				t.Errorf("targets %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSetDataKeepsTheUser(t *testing.T) {
	m := newTable(60, 10, data("2.0.0", "1.0.0"))
	// Until the user moves, a listing that brings a newer version moves the
	// cursor to it.
	m.SetData(data("3.0.0", "2.0.0", "1.0.0"))
	if v, _ := m.Cursor(); v != "3.0.0" {
		t.Errorf("cursor %s, want the newest", v)
	}
	m = press(m, "down", "space")
	m.SetData(data("4.0.0", "3.0.0", "2.0.0", "1.0.0"))
	if v, _ := m.Cursor(); v != "2.0.0" {
		t.Errorf("cursor moved to %s; it should stay on 2.0.0", v)
	}
	if got := m.Selection(); !slices.Equal(got, []string{"2.0.0"}) {
		t.Errorf("selection %v", got)
	}
	// A version no place lists any more leaves the selection.
	m.SetData(data("4.0.0", "3.0.0", "1.0.0"))
	if got := m.Selection(); len(got) != 0 {
		t.Errorf("selection %v kept a vanished version", got)
	}
	m.Reset()
	if v, _ := m.Cursor(); v != "4.0.0" || len(m.Selection()) != 0 {
		t.Errorf("after Reset: cursor %s, selection %v", v, m.Selection())
	}
}

func TestView(t *testing.T) {
	for _, tc := range []struct {
		name      string
		w, h      int
		want, not []string
	}{
		{"wide", 60, 8, []string{" version  [1] registry  [2] fs  [3] oci", "▸3.0.0     ●             ○       ✗", "● present  ○ missing  ✗ digest differs  ! error"}, nil},
		{"narrow: short headings and legend", 24, 8, []string{"[1]", "● ok ○ missing"}, []string{"registry"}},
		{"short: scrolls", 60, 4, []string{"▸3.0.0"}, []string{"1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTable(tc.w, tc.h, data("3.0.0", "2.0.0", "1.0.0"))
			v := ansi.Strip(m.View())
			lines := strings.Split(v, "\n")
			if len(lines) != tc.h {
				t.Errorf("%d lines, want %d:\n%s", len(lines), tc.h, v)
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > tc.w {
					t.Errorf("line %d: %d cells, want at most %d: %q", i, w, tc.w, l)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("view lacks %q:\n%s", w, v)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(v, w) {
					t.Errorf("view has %q:\n%s", w, v)
				}
			}
		})
	}
	m := press(newTable(60, 8, data("3.0.0", "2.0.0")), "down", "space")
	if v := ansi.Strip(m.View()); !strings.Contains(v, "1 selected") || !strings.Contains(v, "▸2.0.0    +●") {
		t.Errorf("a selected version is marked:\n%s", v)
	}
	if v := newTable(60, 8, Data{}).View(); v != "" {
		t.Errorf("an empty table draws %q", v)
	}
}
