package matrix

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/theme"
)

var platforms = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}

// data makes n versions, newest first, with marks that vary by cell.
func data(n, perCell int) Data {
	d := Data{Platforms: platforms, PerCell: perCell}
	for i := range n {
		d.Versions = append(d.Versions, fmt.Sprintf("%d.%d.0", (n-i)/100, (n-i)%100))
		row := make([][]theme.Mark, len(platforms))
		for c := range platforms {
			for k := range perCell {
				row[c] = append(row[c], theme.Mark((i+c+k)%4+1))
			}
		}
		d.Marks = append(d.Marks, row)
	}
	return d
}

func newModel(w, h int, d Data) Model {
	s := theme.New()
	m := New(&s)
	m.SetSize(w, h)
	m.SetData(d)
	return m
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

func press(m Model, keys ...string) Model {
	for _, k := range keys {
		m, _ = m.Update(keyMsg(k))
	}
	return m
}

func TestNavigationAndSelection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   []string
		cursor Cell
		sel    []Cell
	}{
		{"start", nil, Cell{"0.10.0", "darwin_amd64"}, nil},
		{"down right", []string{"down", "right"}, Cell{"0.9.0", "darwin_arm64"}, nil},
		{"clamped at the edges", []string{"up", "left", "left"}, Cell{"0.10.0", "darwin_amd64"}, nil},
		{"bottom", []string{"G", "right", "right", "right", "right", "right"}, Cell{"0.1.0", "windows_amd64"}, nil},
		{"space toggles", []string{"space", "down", "space", "space"}, Cell{"0.9.0", "darwin_amd64"},
			[]Cell{{"0.10.0", "darwin_amd64"}}},
		{"row", []string{"down", "r"}, Cell{"0.9.0", "darwin_amd64"},
			[]Cell{{"0.9.0", "darwin_amd64"}, {"0.9.0", "darwin_arm64"}, {"0.9.0", "linux_amd64"}, {"0.9.0", "linux_arm64"}, {"0.9.0", "windows_amd64"}}},
		{"row twice unselects", []string{"r", "r"}, Cell{"0.10.0", "darwin_amd64"}, nil},
		{"row completes a partial row", []string{"space", "r"}, Cell{"0.10.0", "darwin_amd64"},
			[]Cell{{"0.10.0", "darwin_amd64"}, {"0.10.0", "darwin_arm64"}, {"0.10.0", "linux_amd64"}, {"0.10.0", "linux_arm64"}, {"0.10.0", "windows_amd64"}}},
		{"column of the filtered rows", []string{"/", "1", "enter", "right", "right", "c"}, Cell{"0.10.0", "linux_amd64"},
			[]Cell{{"0.10.0", "linux_amd64"}, {"0.1.0", "linux_amd64"}}},
		{"esc clears the selection", []string{"r", "esc"}, Cell{"0.10.0", "darwin_amd64"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := press(newModel(80, 20, data(10, 2)), tc.keys...)
			if c, _ := m.Cursor(); c != tc.cursor {
				t.Errorf("cursor %v, want %v", c, tc.cursor)
			}
			if got := m.Selection(); !slices.Equal(got, tc.sel) {
				t.Errorf("selection %v, want %v", got, tc.sel)
			}
		})
	}
}

func TestTargetsFallBackToCursor(t *testing.T) {
	m := newModel(80, 20, data(3, 1))
	if got := m.Targets(); !slices.Equal(got, []Cell{{"0.3.0", "darwin_amd64"}}) {
		t.Errorf("targets without selection = %v", got)
	}
	m = press(m, "down", "space", "right", "space")
	if got := m.Targets(); len(got) != 2 {
		t.Errorf("targets with selection = %v", got)
	}
}

func TestSetDataKeepsCursorAndSelectionOnceMoved(t *testing.T) {
	m := press(newModel(80, 20, data(10, 2)), "down", "down", "right", "space")
	at, _ := m.Cursor()
	// A listing arrives with a newer version on top.
	d := data(11, 2)
	m.SetData(d)
	if c, _ := m.Cursor(); c != at {
		t.Errorf("cursor moved to %v, want it kept on %v", c, at)
	}
	if got := m.Selection(); !slices.Equal(got, []Cell{at}) {
		t.Errorf("selection %v lost", got)
	}
	// Before the user moves, the cursor stays on the newest version.
	fresh := newModel(80, 20, data(3, 2))
	fresh.SetData(data(5, 2))
	if c, _ := fresh.Cursor(); c.Version != "0.5.0" {
		t.Errorf("unmoved cursor on %v, want the newest version", c)
	}
	fresh.Reset()
	if len(fresh.Selection()) != 0 || fresh.Filter() != "" {
		t.Errorf("Reset keeps state")
	}
}

func TestFilter(t *testing.T) {
	m := press(newModel(80, 20, data(120, 1)), "/", "1", ".", "1")
	if !m.Typing() {
		t.Fatal("/ should start typing a filter")
	}
	var shown []string
	for _, r := range m.rows {
		shown = append(shown, m.data.Versions[r])
	}
	for _, v := range shown {
		if !strings.Contains(v, "1.1") {
			t.Errorf("filter 1.1 shows %s", v)
		}
	}
	if len(shown) != 11 { // 1.1.0, 1.10.0 .. 1.19.0
		t.Errorf("filter 1.1 shows %d versions: %v", len(shown), shown)
	}
	if view := ansi.Strip(m.View()); !strings.Contains(view, "11 of 120 versions") {
		t.Errorf("the footer should count the matches:\n%s", view)
	}
	m = press(m, "q") // typed, not a command
	if m.Filter() != "1.1q" || len(m.rows) != 0 {
		t.Errorf("filter %q with %d rows", m.Filter(), len(m.rows))
	}
	if view := m.View(); view == "" {
		t.Errorf("an empty filter result still renders")
	}
	m = press(m, "backspace", "enter")
	if m.Typing() || m.Filter() != "1.1" {
		t.Errorf("enter keeps the filter and stops typing: typing %v, filter %q", m.Typing(), m.Filter())
	}
	m = press(m, "esc") // nothing selected: clears the filter
	if m.Filter() != "" || len(m.rows) != 120 {
		t.Errorf("esc should clear the filter, %q %d", m.Filter(), len(m.rows))
	}
}

// TestRendersOnlyVisibleRows is what keeps a 1000-version provider fast:
// the view holds one line per visible row, whatever the data.
func TestRendersOnlyVisibleRows(t *testing.T) {
	for _, tc := range []struct{ w, h, n int }{{60, 12, 3}, {60, 12, 1000}, {120, 40, 1000}, {30, 8, 1000}} {
		m := newModel(tc.w, tc.h, data(tc.n, 3))
		m = press(m, "pgdown", "pgdown", "down")
		lines := strings.Split(m.View(), "\n")
		if len(lines) != tc.h {
			t.Errorf("%dx%d, %d versions: %d lines", tc.w, tc.h, tc.n, len(lines))
		}
		c, _ := m.Cursor()
		if !strings.Contains(ansi.Strip(m.View()), "▸"+c.Version) {
			t.Errorf("%dx%d, %d versions: the cursor row %s is not on screen", tc.w, tc.h, tc.n, c.Version)
		}
		for i, l := range lines {
			if n := ansi.StringWidth(l); n > tc.w {
				t.Errorf("%dx%d: line %d is %d wide", tc.w, tc.h, i, n)
			}
		}
	}
}

func TestNarrowScrollsColumns(t *testing.T) {
	m := newModel(30, 10, data(5, 4))
	m = press(m, "right", "right", "right", "right")
	c, _ := m.Cursor()
	if c.Platform != "windows_amd64" {
		t.Fatalf("cursor on %s", c.Platform)
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "windows") || !strings.Contains(view, "‹") {
		t.Errorf("the cursor's column should scroll into view, with a marker for those off screen:\n%s", view)
	}
}

func TestBadData(t *testing.T) {
	for name, d := range map[string]Data{
		"empty":             {},
		"no platforms":      {Versions: []string{"1.0.0"}, Marks: [][][]theme.Mark{{}}},
		"ragged marks":      {Versions: []string{"1.0.0", "0.9.0"}, Platforms: platforms, Marks: [][][]theme.Mark{{{theme.MarkOK}}}, PerCell: 1},
		"zero-sized marks":  {Versions: []string{"1.0.0"}, Platforms: platforms[:1], Marks: [][][]theme.Mark{{{}}}},
		"long version name": {Versions: []string{strings.Repeat("9", 80) + ".0.0"}, Platforms: platforms, Marks: [][][]theme.Mark{make([][]theme.Mark, 5)}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, sz := range [][2]int{{80, 20}, {10, 3}, {0, 0}} {
				m := newModel(sz[0], sz[1], d)
				m = press(m, "down", "right", "space", "r", "c", "G", "pgdown", "/", "x", "enter")
				_ = m.View()
				_ = m.Targets()
			}
		})
	}
}

func BenchmarkView1000Versions(b *testing.B) {
	m := newModel(120, 40, data(1000, 3))
	for b.Loop() {
		m = press(m, "down")
		_ = m.View()
	}
}

func BenchmarkSetData1000Versions(b *testing.B) {
	m := newModel(120, 40, data(1000, 3))
	d := data(1000, 3)
	for b.Loop() {
		m.SetData(d)
	}
}
