package grid

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/filterline"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// Column is one column: its heading, and the heading's narrow form (on
// two lines where the second is set) for when the full ones do not fit.
type Column struct {
	Head   string
	Narrow [2]string
}

// Data is what the grid shows.
type Data struct {
	Rows []string // versions, newest first
	Cols []Column
	// Marks[row][col] holds one mark per compared place, in place order.
	Marks [][][]theme.Mark
	// PerCell is the number of marks in every cell.
	PerCell int
}

// Cell names one cell by its row and column headings; Col is empty where
// whole rows are selected.
type Cell struct {
	Row, Col string
}

// LegendItem is a mark and what it means in the view, in full and short.
type LegendItem struct {
	Mark        theme.Mark
	Long, Short string
}

// Options make a grid.
type Options struct {
	Keys KeyMap
	// Rows selects whole rows: there is no column cursor.
	Rows   bool
	Legend []LegendItem
}

// Model is the grid.
type Model struct {
	opts   Options
	styles *theme.Styles
	data   Data

	rows   []int // indices into data.Rows that pass the filter
	cur    list.Cursor
	col    int // cursor column
	left   int // first column on screen
	sel    map[Cell]bool
	filter filterline.Model
	// filterNote says why a filter that looks like a constraint selects
	// nothing yet (it is still being typed).
	filterNote string
	// versions are data.Rows parsed, once a constraint needs them.
	versions []backends.Version
	// gaps hides the rows in which no compared place lacks anything.
	gaps  bool
	moved bool // the user has moved the cursor since Reset

	w, h int
	lay  layout
}

type layout struct {
	verW   int   // width of the version column
	colW   []int // width of each column
	narrow bool  // headings in their narrow form
	lines  int   // heading lines
	// legend is the legend's lines: one, or two where even its short form
	// does not fit on one.
	legend []string
}

// New returns an empty grid.
func New(styles *theme.Styles, opts Options) Model {
	return Model{opts: opts, styles: styles, sel: map[Cell]bool{}, filter: filterline.New(styles, "version"), lay: layout{lines: 1}}
}

// Keys returns the grid's key bindings.
func (m Model) Keys() KeyMap { return m.opts.Keys }

// HelpKeys returns the keys in effect, for help.
func (m Model) HelpKeys() help.KeyMap {
	if m.filter.Typing() {
		return m.opts.Keys.Typing
	}
	return m.opts.Keys
}

// Typing reports whether the filter is being edited, so the root sends every
// key here.
func (m Model) Typing() bool { return m.filter.Typing() }

// Width is the width of the area the grid draws in.
func (m Model) Width() int { return m.w }

// SetSize sets the area the grid draws in.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.filter.SetWidth(max(1, w/2))
	m.relayout()
	m.clamp()
}

// SetData replaces what is shown, keeping the cursor on the same cell and
// what is still selected, so a listing that arrives or changes does not
// move the user.
func (m *Model) SetData(d Data) {
	at, ok := m.Cursor()
	m.data, m.versions = d, nil
	m.refilter()
	switch {
	case !m.moved:
		// Listings arrive one place at a time; until the user moves, the
		// cursor stays on the newest version whichever arrived first.
		m.cur, m.col = list.Cursor{}, 0
	case ok:
		m.moveTo(at)
	}
	for c := range m.sel {
		if !slices.Contains(d.Rows, c.Row) || c.Col != "" && m.colIndex(c.Col) < 0 {
			delete(m.sel, c) // a cell no compared place lists any more
		}
	}
	m.relayout()
	m.clamp()
}

// Reset empties the selection and the filter and puts the cursor on the
// newest version, for a newly chosen item.
func (m *Model) Reset() {
	m.sel = map[Cell]bool{}
	m.filter.Clear()
	m.cur, m.col, m.left = list.Cursor{}, 0, 0
	m.moved = false
	m.refilter()
}

// Data returns what is shown.
func (m Model) Data() Data { return m.data }

// Cursor returns the cell under the cursor.
func (m Model) Cursor() (Cell, bool) {
	if m.cur.Pos < 0 || m.cur.Pos >= len(m.rows) {
		return Cell{}, false
	}
	c := Cell{Row: m.data.Rows[m.rows[m.cur.Pos]]}
	if m.opts.Rows {
		return c, true
	}
	if m.col < 0 || m.col >= len(m.data.Cols) {
		return Cell{}, false
	}
	c.Col = m.data.Cols[m.col].Head
	return c, true
}

// Selection returns the selected cells, newest version first.
func (m Model) Selection() []Cell {
	out := make([]Cell, 0, len(m.sel))
	for _, r := range m.data.Rows {
		for _, c := range m.cellsOf(r, m.allCols()) {
			if m.sel[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// Targets returns what an action applies to: the selection, or the cell
// under the cursor when nothing is selected.
func (m Model) Targets() []Cell {
	if s := m.Selection(); len(s) > 0 {
		return s
	}
	if c, ok := m.Cursor(); ok {
		return []Cell{c}
	}
	return nil
}

// ClearSelection unselects every cell.
func (m *Model) ClearSelection() { m.sel = map[Cell]bool{} }

// Filter returns the version filter.
func (m Model) Filter() string { return m.filter.Value() }

// GapsOnly reports whether the rows nothing is missing in are hidden.
func (m Model) GapsOnly() bool { return m.gaps }

// SetGapsOnly hides (or shows again) the rows nothing is missing in, as o
// does: a view that opens on what is wanted starts with it on.
func (m *Model) SetGapsOnly(on bool) {
	m.gaps = on
	m.refilter()
	m.clamp()
}

// Shown is the number of rows the filter lets through.
func (m Model) Shown() int { return len(m.rows) }

// VisibleRows returns how many version rows fit on screen.
func (m Model) VisibleRows() int { return max(1, m.h-m.lay.lines-m.footerLines()) }

// footerLines is how many lines the footer takes under the rows.
func (m Model) footerLines() int { return max(1, len(m.lay.legend)) }

// Update handles the grid's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if m.filter.Typing() {
		return m, m.filter.Type(msg, m.opts.Keys.Typing, m.reapplyFilter)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	m.moved = true
	cmd := m.updateKey(k)
	m.clamp()
	return m, cmd
}

func (m *Model) updateKey(k tea.KeyPressMsg) tea.Cmd {
	keys, page := m.opts.Keys, m.VisibleRows()
	switch {
	case keys.Move(&m.cur, k, len(m.rows), page):
		// Paging scrolls the screen with the cursor.
		switch {
		case key.Matches(k, keys.PageUp):
			m.cur.Top -= page
		case key.Matches(k, keys.PageDown):
			m.cur.Top += page
		}
	case key.Matches(k, keys.Left):
		m.col--
	case key.Matches(k, keys.Right):
		m.col++
	case key.Matches(k, keys.Toggle):
		if c, ok := m.Cursor(); ok {
			m.toggleAll([]Cell{c})
		}
	case key.Matches(k, keys.Row):
		m.toggleRow()
	case key.Matches(k, keys.Column):
		m.toggleColumn()
	case key.Matches(k, keys.All):
		m.toggleAll(m.cellsOfRows(m.allCols()))
	case key.Matches(k, keys.Clear):
		if len(m.sel) == 0 && m.filter.Value() != "" {
			m.filter.Clear()
			m.reapplyFilter()
		}
		m.sel = map[Cell]bool{}
	case key.Matches(k, keys.Filter):
		return m.filter.Start()
	case key.Matches(k, keys.Gaps):
		m.gaps = !m.gaps
		m.reapplyFilter()
	}
	return nil
}

func (m *Model) reapplyFilter() {
	at, ok := m.Cursor()
	m.refilter()
	m.cur = list.Cursor{}
	if ok {
		m.moveTo(at)
	}
	m.clamp()
}

// allCols is the columns a selected row spans: every one, or none where
// whole rows are selected.
func (m Model) allCols() []string {
	if m.opts.Rows {
		return []string{""}
	}
	out := make([]string, len(m.data.Cols))
	for i, c := range m.data.Cols {
		out[i] = c.Head
	}
	return out
}

func (m Model) cellsOf(row string, cols []string) []Cell {
	out := make([]Cell, len(cols))
	for i, c := range cols {
		out[i] = Cell{row, c}
	}
	return out
}

// cellsOfRows is every cell of cols in the rows the filter shows.
func (m Model) cellsOfRows(cols []string) []Cell {
	out := make([]Cell, 0, len(m.rows)*len(cols))
	for _, r := range m.rows {
		out = append(out, m.cellsOf(m.data.Rows[r], cols)...)
	}
	return out
}

// toggleRow selects every column of the cursor's version, or unselects them
// when all are selected already.
func (m *Model) toggleRow() {
	if m.cur.Pos >= len(m.rows) {
		return
	}
	m.toggleAll(m.cellsOf(m.data.Rows[m.rows[m.cur.Pos]], m.allCols()))
}

// toggleColumn does the same for the cursor's column across the versions
// the filter shows.
func (m *Model) toggleColumn() {
	if m.col >= len(m.data.Cols) {
		return
	}
	m.toggleAll(m.cellsOfRows([]string{m.data.Cols[m.col].Head}))
}

// toggleAll selects cells, or unselects them when all are selected already.
func (m *Model) toggleAll(cells []Cell) {
	all := true
	for _, c := range cells {
		if !m.sel[c] {
			all = false
			break
		}
	}
	for _, c := range cells {
		if all {
			delete(m.sel, c)
		} else {
			m.sel[c] = true
		}
	}
}

func (m *Model) refilter() {
	keep := m.versionFilter()
	m.rows = m.rows[:0]
	for i := range m.data.Rows {
		if keep(i) && (!m.gaps || m.hasGap(i)) {
			m.rows = append(m.rows, i)
		}
	}
}

// versionFilter is the filter as a test of row i: a version constraint
// where the text is one (it starts with an operator, or is "latest"), else
// a piece of the version.
func (m *Model) versionFilter() func(i int) bool {
	f := strings.TrimSpace(m.filter.Value())
	m.filterNote = ""
	all := func(int) bool { return true }
	switch {
	case f == "":
		return all
	case !isConstraint(f):
		return func(i int) bool { return strings.Contains(m.data.Rows[i], f) }
	}
	c, err := backends.ParseVersionConstraint(f)
	if err != nil {
		m.filterNote = "not a version constraint yet"
		return all
	}
	if m.versions == nil {
		m.versions = make([]backends.Version, len(m.data.Rows))
		for i, r := range m.data.Rows {
			m.versions[i], _ = backends.ParseVersion(r)
		}
	}
	var vs []backends.Version
	for _, v := range m.versions {
		if v != nil {
			vs = append(vs, v)
		}
	}
	selected := map[backends.Version]bool{}
	for _, v := range c.Filter(vs) {
		selected[v] = true
	}
	return func(i int) bool { return selected[m.versions[i]] }
}

// isConstraint reports whether a filter is written as a version constraint.
func isConstraint(f string) bool {
	return strings.ContainsAny(f[:1], "<>=!~") || f == "latest" || strings.Contains(f, ",")
}

// hasGap reports whether some compared place lacks row i in some column.
func (m *Model) hasGap(i int) bool {
	if i >= len(m.data.Marks) {
		return false
	}
	for _, cell := range m.data.Marks[i] {
		if slices.Contains(cell, theme.MarkMissing) {
			return true
		}
	}
	return false
}

func (m *Model) colIndex(head string) int {
	return slices.IndexFunc(m.data.Cols, func(c Column) bool { return c.Head == head })
}

func (m *Model) moveTo(c Cell) {
	for i, r := range m.rows {
		if m.data.Rows[r] == c.Row {
			m.cur.Pos = i
			break
		}
	}
	if j := m.colIndex(c.Col); j >= 0 {
		m.col = j
	}
}

// clamp keeps the cursor inside the data and on screen.
func (m *Model) clamp() {
	m.cur.Clamp(len(m.rows), m.VisibleRows())
	m.col = max(0, min(m.col, len(m.data.Cols)-1))
	// Columns: scroll just enough to show the cursor's.
	if m.col < m.left {
		m.left = m.col
	}
	for m.left < m.col && !m.fits(m.left, m.col) {
		m.left++
	}
}

// fits reports whether columns from..to fit beside the version column.
func (m *Model) fits(from, to int) bool {
	w := m.lay.verW + 1 // room for the "more" arrow
	for i := from; i <= to && i < len(m.lay.colW); i++ {
		w += m.lay.colW[i]
	}
	return w <= m.w
}
