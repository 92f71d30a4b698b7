// Package matrix is the platform matrix at the centre of the UI: one
// provider's versions as rows, its platforms as columns, and in each cell one
// mark per compared mirror. It keeps a cursor, a selection of cells and a
// version filter, and renders only the rows that are on screen, so a
// provider with thousands of versions scrolls as fast as one with three.
package matrix

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/filterline"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// Cell names one package of the shown provider: a version and a platform.
type Cell struct {
	Version  string
	Platform string
}

// Data is what the matrix shows.
type Data struct {
	Versions  []string // rows, newest first
	Platforms []string // columns
	// Marks[row][col] holds one mark per compared mirror, in mirror order.
	Marks [][][]theme.Mark
	// PerCell is the number of marks in every cell.
	PerCell int
}

// KeyMap is the matrix's keys. Queue and Verify act on the selection but are
// carried out by the root model, which owns the mirrors; they are here so
// help lists them with the matrix.
type KeyMap struct {
	Up, Down, Left, Right   key.Binding
	PageUp, PageDown        key.Binding
	Top, Bottom             key.Binding
	Toggle, Row, Column     key.Binding
	Clear, Filter           key.Binding
	Queue, Verify           key.Binding
	FilterDone, FilterClear key.Binding
}

// DefaultKeyMap returns the matrix's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:        key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "column")),
		Right:       key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "column")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "newest")),
		Bottom:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "oldest")),
		Toggle:      key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "select")),
		Row:         key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "row")),
		Column:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "column")),
		Clear:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear selection")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter versions")),
		Queue:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "queue to…")),
		Verify:      key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "verify")),
		FilterDone:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		FilterClear: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Toggle, k.Row, k.Column, k.Queue, k.Verify, k.Filter}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Toggle, k.Row, k.Column, k.Clear, k.Queue, k.Verify, k.Filter},
	}
}

// filterKeys is the help while the filter is being typed.
type filterKeys struct{ k KeyMap }

func (f filterKeys) ShortHelp() []key.Binding  { return []key.Binding{f.k.FilterDone, f.k.FilterClear} }
func (f filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// Model is the matrix.
type Model struct {
	keys   KeyMap
	styles *theme.Styles
	data   Data

	rows   []int // indices into data.Versions that pass the filter
	cur    int   // cursor row, an index into rows
	col    int   // cursor column
	top    int   // first row on screen
	left   int   // first column on screen
	sel    map[Cell]bool
	filter filterline.Model
	moved  bool // the user has moved the cursor since Reset

	w, h int
	lay  layout
}

type layout struct {
	verW    int   // width of the version column
	colW    []int // width of each column
	twoLine bool  // headings split into OS and architecture lines
}

// New returns an empty matrix.
func New(styles *theme.Styles) Model {
	return Model{keys: DefaultKeyMap(), styles: styles, sel: map[Cell]bool{}, filter: filterline.New(styles, "version")}
}

// KeyMap returns the keys in effect, for help.
func (m Model) KeyMap() interface {
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
} {
	if m.filter.Typing() {
		return filterKeys{m.keys}
	}
	return m.keys
}

// Keys returns the matrix's key bindings.
func (m Model) Keys() KeyMap { return m.keys }

// Typing reports whether the filter is being edited, so the root sends every
// key here.
func (m Model) Typing() bool { return m.filter.Typing() }

// SetSize sets the area the matrix draws in.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.filter.SetWidth(max(1, w/2))
	m.relayout()
	m.clamp()
}

// SetData replaces what is shown, keeping the cursor on the same cell and
// the selection, so a listing that arrives or changes does not move the
// user.
func (m *Model) SetData(d Data) {
	at, ok := m.Cursor()
	m.data = d
	m.refilter()
	switch {
	case !m.moved:
		// Listings arrive one mirror at a time; until the user moves, the
		// cursor stays on the newest version whichever arrived first.
		m.cur, m.col, m.top = 0, 0, 0
	case ok:
		m.moveTo(at)
	}
	m.relayout()
	m.clamp()
}

// Reset empties the selection and the filter and puts the cursor on the
// newest version, for a newly chosen provider.
func (m *Model) Reset() {
	m.sel = map[Cell]bool{}
	m.filter.Clear()
	m.cur, m.col, m.top, m.left = 0, 0, 0, 0
	m.moved = false
	m.refilter()
}

// Data returns what is shown.
func (m Model) Data() Data { return m.data }

// Cursor returns the cell under the cursor.
func (m Model) Cursor() (Cell, bool) {
	if m.cur < 0 || m.cur >= len(m.rows) || m.col < 0 || m.col >= len(m.data.Platforms) {
		return Cell{}, false
	}
	return Cell{Version: m.data.Versions[m.rows[m.cur]], Platform: m.data.Platforms[m.col]}, true
}

// Selection returns the selected cells, newest version first.
func (m Model) Selection() []Cell {
	out := make([]Cell, 0, len(m.sel))
	for _, v := range m.data.Versions {
		for _, p := range m.data.Platforms {
			if c := (Cell{v, p}); m.sel[c] {
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

// VisibleRows returns how many version rows fit on screen.
func (m Model) VisibleRows() int {
	hdr := 1
	if m.lay.twoLine {
		hdr = 2
	}
	return max(1, m.h-hdr-1)
}

// Update handles the matrix's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if m.filter.Typing() {
		return m.updateFilter(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	page := m.VisibleRows()
	m.moved = true
	switch {
	case key.Matches(k, m.keys.Up):
		m.cur--
	case key.Matches(k, m.keys.Down):
		m.cur++
	case key.Matches(k, m.keys.Left):
		m.col--
	case key.Matches(k, m.keys.Right):
		m.col++
	case key.Matches(k, m.keys.PageUp):
		m.cur -= page
		m.top -= page
	case key.Matches(k, m.keys.PageDown):
		m.cur += page
		m.top += page
	case key.Matches(k, m.keys.Top):
		m.cur = 0
	case key.Matches(k, m.keys.Bottom):
		m.cur = len(m.rows) - 1
	case key.Matches(k, m.keys.Toggle):
		if c, ok := m.Cursor(); ok {
			m.toggle(c)
		}
	case key.Matches(k, m.keys.Row):
		m.toggleRow()
	case key.Matches(k, m.keys.Column):
		m.toggleColumn()
	case key.Matches(k, m.keys.Clear):
		if len(m.sel) == 0 && m.filter.Value() != "" {
			m.filter.Clear()
			m.reapplyFilter()
		}
		m.sel = map[Cell]bool{}
	case key.Matches(k, m.keys.Filter):
		return m, m.filter.Start()
	}
	m.clamp()
	return m, nil
}

func (m Model) updateFilter(msg tea.Msg) (Model, tea.Cmd) {
	var changed bool
	var cmd tea.Cmd
	m.filter, changed, cmd = m.filter.Update(msg, m.keys.FilterDone, m.keys.FilterClear)
	if changed {
		m.reapplyFilter()
	}
	return m, cmd
}

func (m *Model) reapplyFilter() {
	at, ok := m.Cursor()
	m.refilter()
	m.cur, m.top = 0, 0
	if ok {
		m.moveTo(at)
	}
	m.clamp()
}

func (m *Model) toggle(c Cell) {
	if m.sel[c] {
		delete(m.sel, c)
	} else {
		m.sel[c] = true
	}
}

// toggleRow selects every platform of the cursor's version, or unselects
// them when all are selected already.
func (m *Model) toggleRow() {
	if m.cur >= len(m.rows) {
		return
	}
	v := m.data.Versions[m.rows[m.cur]]
	cells := make([]Cell, 0, len(m.data.Platforms))
	for _, p := range m.data.Platforms {
		cells = append(cells, Cell{v, p})
	}
	m.toggleAll(cells)
}

// toggleColumn does the same for the cursor's platform across the versions
// the filter shows.
func (m *Model) toggleColumn() {
	if m.col >= len(m.data.Platforms) {
		return
	}
	p := m.data.Platforms[m.col]
	cells := make([]Cell, 0, len(m.rows))
	for _, r := range m.rows {
		cells = append(cells, Cell{m.data.Versions[r], p})
	}
	m.toggleAll(cells)
}

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
	f := strings.TrimSpace(m.filter.Value())
	m.rows = m.rows[:0]
	for i, v := range m.data.Versions {
		if f == "" || strings.Contains(v, f) {
			m.rows = append(m.rows, i)
		}
	}
}

func (m *Model) moveTo(c Cell) {
	for i, r := range m.rows {
		if m.data.Versions[r] == c.Version {
			m.cur = i
			break
		}
	}
	if j := slices.Index(m.data.Platforms, c.Platform); j >= 0 {
		m.col = j
	}
}

// clamp keeps the cursor inside the data and on screen.
func (m *Model) clamp() {
	m.cur = max(0, min(m.cur, len(m.rows)-1))
	m.col = max(0, min(m.col, len(m.data.Platforms)-1))
	vis := m.VisibleRows()
	m.top = max(0, min(m.top, len(m.rows)-vis))
	if m.cur < m.top {
		m.top = m.cur
	}
	if m.cur >= m.top+vis {
		m.top = m.cur - vis + 1
	}
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

func (m *Model) relayout() {
	l := layout{verW: len("version") + 2}
	for _, v := range m.data.Versions {
		l.verW = max(l.verW, len(v)+2)
	}
	l.verW = min(l.verW, 24)
	cell := 1 + max(1, m.data.PerCell) // selection slot + marks
	single := l.verW
	l.colW = make([]int, len(m.data.Platforms))
	for i, p := range m.data.Platforms {
		l.colW[i] = max(len(p), cell) + 2
		single += l.colW[i]
	}
	if single > m.w {
		l.twoLine = true
		for i, p := range m.data.Platforms {
			os, arch, _ := strings.Cut(p, "_")
			l.colW[i] = max(len(os), len(arch), cell) + 1
		}
	}
	m.lay = l
}

// View renders the matrix into its area, row by row, drawing only the rows
// on screen.
func (m Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	s := m.styles
	lines := make([]string, 0, m.h)
	if len(m.data.Versions) == 0 {
		return ""
	}
	// Columns on screen, from m.left.
	last := min(m.left, len(m.data.Platforms)-1)
	for last+1 < len(m.data.Platforms) && m.fits(m.left, last+1) {
		last++
	}
	moreLeft, moreRight := m.left > 0, last < len(m.data.Platforms)-1

	// Headings.
	head := func(part func(p string) string, label string) string {
		var b strings.Builder
		b.WriteString(s.Header.Render(theme.Fit(" "+label, m.lay.verW)))
		for c := m.left; c <= last; c++ {
			t := theme.Fit(" "+part(m.data.Platforms[c]), m.lay.colW[c])
			if c == m.col {
				t = s.Accent.Render(t)
			} else {
				t = s.Header.Render(t)
			}
			b.WriteString(t)
		}
		return b.String()
	}
	arrows := func(line string) string {
		if moreLeft {
			line = s.Dim.Render("‹") + line
		}
		if moreRight {
			line = theme.Fit(line, m.w-1) + s.Dim.Render("›")
		}
		return line
	}
	if m.lay.twoLine {
		osPart := func(p string) string { os, _, _ := strings.Cut(p, "_"); return os }
		archPart := func(p string) string { _, arch, _ := strings.Cut(p, "_"); return arch }
		lines = append(lines, arrows(head(osPart, "version")), arrows(head(archPart, "")))
	} else {
		lines = append(lines, arrows(head(func(p string) string { return p }, "version")))
	}

	vis := m.VisibleRows()
	for i := m.top; i < len(m.rows) && i < m.top+vis; i++ {
		lines = append(lines, m.rowView(i, last))
	}
	for len(lines) < m.h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer())
	// A column wider than the whole area (a very narrow terminal) is cut.
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.w, "")
	}
	return strings.Join(lines, "\n")
}

func (m Model) rowView(i, last int) string {
	s := m.styles
	r := m.rows[i]
	v := m.data.Versions[r]
	var b strings.Builder
	if i == m.cur {
		b.WriteString(s.Accent.Render(theme.Fit("▸"+v, m.lay.verW)))
	} else {
		b.WriteString(theme.Fit(" "+v, m.lay.verW))
	}
	for c := m.left; c <= last; c++ {
		var marks []theme.Mark
		if r < len(m.data.Marks) && c < len(m.data.Marks[r]) {
			marks = m.data.Marks[r][c]
		}
		sel := m.sel[Cell{v, m.data.Platforms[c]}]
		b.WriteByte(' ')
		if sel {
			b.WriteString(s.Selected.Render("+"))
		} else {
			b.WriteByte(' ')
		}
		glyphs := &s.Glyphs
		switch {
		case i == m.cur && c == m.col:
			glyphs = &s.CursorGlyphs
		case sel:
			glyphs = &s.SelGlyphs
		}
		for _, mk := range marks {
			b.WriteString(glyphs[mk])
		}
		if pad := m.lay.colW[c] - 2 - len(marks); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	return b.String()
}

// footer is the legend, or the filter while it is typed or applied.
func (m Model) footer() string {
	s := m.styles
	n := ""
	if k := len(m.sel); k > 0 {
		n = s.Selected.Render(strconv.Itoa(k)+" selected") + "  "
	}
	if m.filter.Shown() {
		return n + m.filter.View(lipgloss.Style{}) + s.Dim.Render("  "+strconv.Itoa(len(m.rows))+" of "+strconv.Itoa(len(m.data.Versions))+" versions")
	}
	marks := []theme.Mark{theme.MarkOK, theme.MarkUnverified, theme.MarkMissing, theme.MarkDiffers}
	long, short := "", ""
	for _, mk := range marks {
		long += s.Glyphs[mk] + " " + s.Dim.Render(mk.Label()) + "  "
		short += s.Glyphs[mk] + " " + s.Dim.Render(mk.Short()) + " "
	}
	if theme.Width(n+long) <= m.w {
		return n + long
	}
	return n + short
}
