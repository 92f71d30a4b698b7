package grid

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/internal/keypress"
	"github.com/tfmirror/tfmirror/ui/theme"
)

var platforms = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}

// platformCols are the matrix's columns: platforms, split into OS and
// architecture where room is tight.
func platformCols(ps []string) []Column {
	out := make([]Column, len(ps))
	for i, p := range ps {
		os, arch, _ := strings.Cut(p, "_")
		out[i] = Column{Head: p, Narrow: [2]string{os, arch}}
	}
	return out
}

// data makes n versions, newest first, with marks that vary by cell.
func data(n, perCell int) Data {
	d := Data{Cols: platformCols(platforms), PerCell: perCell}
	for i := range n {
		d.Rows = append(d.Rows, fmt.Sprintf("%d.%d.0", (n-i)/100, (n-i)%100))
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

var matrixLegend = []LegendItem{
	{theme.MarkStated, theme.MarkStated.Label(), theme.MarkStated.Short()},
	{theme.MarkUnverified, theme.MarkUnverified.Label(), theme.MarkUnverified.Short()},
}

// newModel is a grid as the Providers view makes it: cells selected one by
// one.
func newModel(w, h int, d Data) Model {
	s := theme.New()
	m := New(&s, Options{Keys: CellKeys(), Legend: matrixLegend})
	m.SetSize(w, h)
	m.SetData(d)
	return m
}

func press(m Model, keys ...string) Model {
	for _, k := range keys {
		m, _ = m.Update(keypress.Msg(k))
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
	if c, _ := fresh.Cursor(); c.Row != "0.5.0" {
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
		shown = append(shown, m.data.Rows[r])
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
		if !strings.Contains(ansi.Strip(m.View()), "▸"+c.Row) {
			t.Errorf("%dx%d, %d versions: the cursor row %s is not on screen", tc.w, tc.h, tc.n, c.Row)
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
	if c.Col != "windows_amd64" {
		t.Fatalf("cursor on %s", c.Col)
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "windows") || !strings.Contains(view, "‹") {
		t.Errorf("the cursor's column should scroll into view, with a marker for those off screen:\n%s", view)
	}
}

func TestBadData(t *testing.T) {
	for name, d := range map[string]Data{
		"empty":             {},
		"no platforms":      {Rows: []string{"1.0.0"}, Marks: [][][]theme.Mark{{}}},
		"ragged marks":      {Rows: []string{"1.0.0", "0.9.0"}, Cols: platformCols(platforms), Marks: [][][]theme.Mark{{{theme.MarkStated}}}, PerCell: 1},
		"zero-sized marks":  {Rows: []string{"1.0.0"}, Cols: platformCols(platforms[:1]), Marks: [][][]theme.Mark{{{}}}},
		"long version name": {Rows: []string{strings.Repeat("9", 80) + ".0.0"}, Cols: platformCols(platforms), Marks: [][][]theme.Mark{make([][]theme.Mark, 5)}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, sz := range [][2]int{{80, 20}, {10, 3}, {0, 0}} {
				for _, m := range []Model{newModel(sz[0], sz[1], d), newTable(sz[0], sz[1], d)} {
					m = press(m, "down", "right", "space", "r", "c", "a", "G", "pgdown", "/", "x", "enter")
					_ = m.View()
					_ = m.Targets()
				}
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

// places makes a table of versions against three places, one mark each.
func places(versions ...string) Data {
	d := Data{Rows: versions, PerCell: 1}
	for i, p := range []string{"registry", "fs", "oci"} {
		num := "[" + strconv.Itoa(i+1) + "]"
		d.Cols = append(d.Cols, Column{Head: num + " " + p, Narrow: [2]string{num}})
	}
	for range versions {
		d.Marks = append(d.Marks, [][]theme.Mark{{theme.MarkStated}, {theme.MarkMissing}, {theme.MarkDiffers}})
	}
	return d
}

var moduleLegend = []LegendItem{
	{theme.MarkStated, "present", "present"},
	{theme.MarkMissing, "missing", "missing"},
	{theme.MarkDiffers, "digest differs", "differs"},
	{theme.MarkError, "error", "error"},
}

// newTable is a grid as the Modules view makes it: whole versions selected.
func newTable(w, h int, d Data) Model {
	s := theme.New()
	m := New(&s, Options{Keys: RowKeys(), Rows: true, Legend: moduleLegend})
	m.SetSize(w, h)
	m.SetData(d)
	return m
}

func TestRowSelection(t *testing.T) {
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
			m := press(newTable(60, 10, places("3.0.0", "2.0.0", "1.0.0", "0.1.0")), tc.keys...)
			if got := rowsOf(m.Targets()); !slices.Equal(got, tc.want) {
				t.Errorf("targets %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRowsSetDataKeepsTheUser(t *testing.T) {
	m := newTable(60, 10, places("2.0.0", "1.0.0"))
	// Until the user moves, a listing that brings a newer version moves the
	// cursor to it.
	m.SetData(places("3.0.0", "2.0.0", "1.0.0"))
	if v, _ := m.Cursor(); v.Row != "3.0.0" {
		t.Errorf("cursor %s, want the newest", v)
	}
	m = press(m, "down", "space")
	m.SetData(places("4.0.0", "3.0.0", "2.0.0", "1.0.0"))
	if v, _ := m.Cursor(); v.Row != "2.0.0" {
		t.Errorf("cursor moved to %s; it should stay on 2.0.0", v)
	}
	if got := rowsOf(m.Selection()); !slices.Equal(got, []string{"2.0.0"}) {
		t.Errorf("selection %v", got)
	}
	// A version no place lists any more leaves the selection.
	m.SetData(places("4.0.0", "3.0.0", "1.0.0"))
	if got := m.Selection(); len(got) != 0 {
		t.Errorf("selection %v kept a vanished version", got)
	}
	m.Reset()
	if v, _ := m.Cursor(); v.Row != "4.0.0" || len(m.Selection()) != 0 {
		t.Errorf("after Reset: cursor %s, selection %v", v, m.Selection())
	}
}

func TestRowsView(t *testing.T) {
	for _, tc := range []struct {
		name      string
		w, h      int
		want, not []string
	}{
		{"wide", 60, 8, []string{" version  [1] registry  [2] fs  [3] oci", "▸3.0.0     ◇             ○       ≠", "◇ present  ○ missing  ≠ digest differs"}, []string{"error"}},
		{"narrow: short headings, the legend short on two lines", 24, 8, []string{"[1]", "◇ present ○ missing \n≠ differs"}, []string{"registry", "error"}},
		{"short: scrolls", 60, 4, []string{"▸3.0.0"}, []string{"1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTable(tc.w, tc.h, places("3.0.0", "2.0.0", "1.0.0"))
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
	m := press(newTable(60, 8, places("3.0.0", "2.0.0")), "down", "space")
	if v := ansi.Strip(m.View()); !strings.Contains(v, "1 selected") || !strings.Contains(v, "▸2.0.0    +◇") {
		t.Errorf("a selected version is marked:\n%s", v)
	}
	if v := newTable(60, 8, Data{}).View(); v != "" {
		t.Errorf("an empty table draws %q", v)
	}
}

func rowsOf(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Row)
	}
	return out
}

// TestLegendListsEveryMarkShown: the legend explains the marks the grid
// draws, those the view left out of its legend too (a loading or failed
// place), and no others.
func TestLegendListsEveryMarkShown(t *testing.T) {
	d := places("2.0.0", "1.0.0")
	d.Marks[0][1] = []theme.Mark{theme.MarkLoading}
	d.Marks[1][1] = []theme.Mark{theme.MarkStated}
	d.Marks[1][2] = []theme.Mark{theme.MarkError}
	v := ansi.Strip(newModel(120, 8, d).View())
	for _, want := range []string{"◇ stated, not recomputed", "≠ hashes differ", "· loading", "! cannot list"} {
		if !strings.Contains(v, want) {
			t.Errorf("legend lacks %q:\n%s", want, v)
		}
	}
	for _, not := range []string{"◐", "○ missing"} { // the view's, but not on screen
		if strings.Contains(v, not) {
			t.Errorf("legend explains %q, which no cell shows:\n%s", not, v)
		}
	}
}

func shownRows(m Model) []string {
	var out []string
	for _, r := range m.rows {
		out = append(out, m.data.Rows[r])
	}
	return out
}

// TestFilterByConstraint: "/" takes a version constraint as well as a
// piece of a version.
func TestFilterByConstraint(t *testing.T) {
	d := places("5.2.0", "5.1.1", "5.0.0", "4.9.0", "2.0.0", "1.5.0-beta1", "1.0.0")
	for _, tc := range []struct {
		filter string
		want   []string
		footer string
	}{
		{">= 2.0", []string{"5.2.0", "5.1.1", "5.0.0", "4.9.0", "2.0.0"}, "5 of 7 versions"},
		{"~> 5.0", []string{"5.2.0", "5.1.1", "5.0.0"}, "3 of 7 versions"},
		{"~> 5.1.0", []string{"5.1.1"}, "1 of 7 versions"},
		{">= 1.0, < 5.0", []string{"4.9.0", "2.0.0", "1.0.0"}, "3 of 7 versions"},
		{"= 2.0.0", []string{"2.0.0"}, "1 of 7 versions"},
		{"!= 5.2.0", []string{"5.1.1", "5.0.0", "4.9.0", "2.0.0", "1.5.0-beta1", "1.0.0"}, "6 of 7 versions"}, // go-version: != lets prereleases through
		{"latest", []string{"5.2.0"}, "1 of 7 versions"},
		{"5.1", []string{"5.1.1"}, "1 of 7 versions"}, // no operator: a piece of a version
		{"beta", []string{"1.5.0-beta1"}, "1 of 7 versions"},
		{">= 2.", []string{"5.2.0", "5.1.1", "5.0.0", "4.9.0", "2.0.0", "1.5.0-beta1", "1.0.0"}, "not a version constraint yet"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			m := newModel(70, 12, d)
			m = press(m, "/")
			for _, r := range tc.filter {
				m, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
			if got := shownRows(m); !slices.Equal(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
			if v := ansi.Strip(m.View()); !strings.Contains(v, tc.footer) {
				t.Errorf("footer lacks %q:\n%s", tc.footer, v)
			}
		})
	}
}

// TestGapsOnly: o hides the versions no compared place lacks, whatever
// other marks they have, keeps the cursor where it can, and stays on for
// the next item.
func TestGapsOnly(t *testing.T) {
	d := places("3.0.0", "2.0.0", "1.0.0", "0.1.0")
	d.Marks[1] = [][]theme.Mark{{theme.MarkStated}, {theme.MarkStated}, {theme.MarkDiffers}}       // 2.0.0: nothing missing
	d.Marks[3] = [][]theme.Mark{{theme.MarkStated}, {theme.MarkNotApplicable}, {theme.MarkStated}} // 0.1.0: not applicable is no gap
	m := press(newTable(70, 12, d), "down", "down")                                                // the cursor on 1.0.0
	m = press(m, "o")
	if got := shownRows(m); !slices.Equal(got, []string{"3.0.0", "1.0.0"}) {
		t.Errorf("gaps only: rows %v, want the versions something lacks", got)
	}
	if c, _ := m.Cursor(); c.Row != "1.0.0" {
		t.Errorf("cursor moved to %s", c.Row)
	}
	if !m.GapsOnly() || !strings.Contains(ansi.Strip(m.View()), "gaps only") {
		t.Errorf("the grid should say it shows gaps only:\n%s", ansi.Strip(m.View()))
	}
	m.Reset()
	m.SetData(d)
	if got := shownRows(m); !slices.Equal(got, []string{"3.0.0", "1.0.0"}) || !m.GapsOnly() {
		t.Errorf("gaps only should stay on for the next item: %v", got)
	}
	full := places("2.0.0")
	full.Marks[0] = [][]theme.Mark{{theme.MarkStated}, {theme.MarkStated}, {theme.MarkStated}}
	m.SetData(full)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "nothing missing") {
		t.Errorf("with every row hidden the grid says why:\n%s", v)
	}
	m = press(m, "o")
	if got := shownRows(m); !slices.Equal(got, []string{"2.0.0"}) || m.GapsOnly() {
		t.Errorf("o again shows every version: %v", got)
	}
	// The matrix too, cell by cell.
	md := data(6, 2)
	md.Marks[0][0] = []theme.Mark{theme.MarkStated, theme.MarkMissing}
	mm := press(newModel(80, 12, md), "o")
	for _, r := range mm.rows {
		gap := false
		for _, cell := range md.Marks[r] {
			gap = gap || slices.Contains(cell, theme.MarkMissing)
		}
		if !gap {
			t.Errorf("matrix row %s shown, yet nothing is missing in it", md.Rows[r])
		}
	}
}

// TestClick finds the cell drawn under a click, as View draws the grid:
// headings, the version column, columns scrolled sideways; a click where
// the cursor is selects only where the grid had the focus.
func TestClick(t *testing.T) {
	m := newModel(100, 12, data(5, 2))
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	head := []rune(lines[0])
	colX := func(p string) int {
		i := strings.Index(string(head), p)
		if i < 0 {
			t.Fatalf("no heading %s in %q", p, lines[0])
		}
		return len([]rune(string(head)[:i]))
	}
	// The heading of linux_amd64: the cursor's column moves there.
	if !m.Click(colX("linux_amd64"), 0, true) {
		t.Fatal("a click on a heading is not a column")
	}
	if c, _ := m.Cursor(); c.Col != "linux_amd64" || c.Row != "0.5.0" {
		t.Errorf("cursor %+v after a click on linux_amd64's heading", c)
	}
	// The third row under darwin_arm64: the cursor goes there, nothing is
	// selected; again (focused), it is selected; unfocused, it is not.
	m.Click(colX("darwin_arm64")+1, 3, true)
	if c, _ := m.Cursor(); c.Col != "darwin_arm64" || c.Row != "0.3.0" || len(m.Selection()) != 0 {
		t.Errorf("cursor %+v, selection %v after one click on 0.3.0 darwin_arm64", c, m.Selection())
	}
	m.Click(colX("darwin_arm64")+1, 3, false)
	if len(m.Selection()) != 0 {
		t.Errorf("a click on an unfocused grid selected %v", m.Selection())
	}
	m.Click(colX("darwin_arm64")+1, 3, true)
	if got := m.Selection(); len(got) != 1 || got[0] != (Cell{"0.3.0", "darwin_arm64"}) {
		t.Errorf("a second click selected %v", got)
	}
	// The version column, where the cursor is: the whole row.
	m.Click(1, 3, true)
	if n := len(m.Selection()); n != len(platforms) {
		t.Errorf("a click on the cursor's version selected %d cells; want its row, %d", n, len(platforms))
	}
	// Past the last column, below the last row: nothing.
	if m.Click(99, 3, true) || m.Click(5, 9, true) {
		t.Errorf("a click on empty space was taken for a cell")
	}

	// Narrow, scrolled to the last column: the click finds it.
	n := newModel(40, 12, data(5, 2))
	n = press(n, "right", "right", "right", "right")
	nl := strings.Split(ansi.Strip(n.View()), "\n")
	r := []rune(nl[2])
	x := len(r) - 1
	for x > 0 && r[x] == ' ' {
		x--
	}
	n.Click(x, 2, true) // the last mark drawn on the first row, under windows
	if c, _ := n.Cursor(); c.Col != "windows_amd64" {
		t.Errorf("a click on the last column drawn put the cursor on %+v:\n%s", c, strings.Join(nl, "\n"))
	}
}

// TestSelectAllCells: a selects every cell of the versions shown, a again
// none.
func TestSelectAllCells(t *testing.T) {
	m := press(newModel(100, 12, data(5, 2)), "a")
	if n := len(m.Selection()); n != 5*len(platforms) {
		t.Errorf("a selected %d cells; want %d", n, 5*len(platforms))
	}
	if m = press(m, "a"); len(m.Selection()) != 0 {
		t.Errorf("a again left %d selected", len(m.Selection()))
	}
}
