// Package modtable is the centre of the UI's Modules view: one module's
// versions as rows and one column per compared place (module registry, OCI
// mirror, directory), each cell a mark: present, missing, digest differs,
// or an error. A module package has no platforms, so what is selected is
// whole versions.
package modtable

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/theme"
)

// Data is what the table shows.
type Data struct {
	Versions []string // rows, newest first
	// Places are the column headings, one per compared place ("[4] oci").
	Places []string
	// Short are the same headings where room is tight ("[4]").
	Short []string
	// Marks[row][col] is what place col holds of version row.
	Marks [][]theme.Mark
}

// KeyMap is the table's keys. Queue is carried out by the root model, which
// owns the places; it is here so help lists it with the table.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Toggle, All, Clear, Queue               key.Binding
}

// DefaultKeyMap returns the table's keys: those of the provider matrix
// where they mean the same, space and r both selecting a version (a
// version is a whole row here).
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "newest")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "oldest")),
		Toggle:   key.NewBinding(key.WithKeys("space", "r"), key.WithHelp("space/r", "select version")),
		All:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all versions")),
		Clear:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear selection")),
		Queue:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "queue to…")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Toggle, k.All, k.Queue} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Toggle, k.All, k.Clear, k.Queue},
	}
}

type legendItem struct {
	mark        theme.Mark
	long, short string
}

// legend is the marks the table uses, with what each means for a module.
func legend() [4]legendItem {
	return [...]legendItem{
		{theme.MarkOK, "present", "ok"},
		{theme.MarkMissing, "missing", "missing"},
		{theme.MarkDiffers, "digest differs", "differs"},
		{theme.MarkError, "error", "error"},
	}
}

// MarkLabel names a mark as the modules view means it.
func MarkLabel(mk theme.Mark) string {
	for _, l := range legend() {
		if l.mark == mk {
			return l.long
		}
	}
	return mk.Label()
}

// LegendMarks returns the marks the table shows, in legend order.
func LegendMarks() []theme.Mark {
	out := make([]theme.Mark, 0, len(legend())+1)
	for _, l := range legend() {
		out = append(out, l.mark)
	}
	return append(out, theme.MarkLoading)
}

// Model is the table.
type Model struct {
	keys   KeyMap
	styles *theme.Styles
	data   Data
	cur    int // cursor row
	top    int // first row on screen
	sel    map[string]bool
	moved  bool // the user has moved the cursor since Reset
	w, h   int
}

// New returns an empty table.
func New(styles *theme.Styles) Model {
	return Model{keys: DefaultKeyMap(), styles: styles, sel: map[string]bool{}}
}

// Keys returns the table's key bindings.
func (m Model) Keys() KeyMap { return m.keys }

// SetSize sets the area the table draws in.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.clamp()
}

// SetData replaces what is shown, keeping the cursor on the same version
// and the selection, so a listing that arrives does not move the user.
func (m *Model) SetData(d Data) {
	at, ok := m.Cursor()
	m.data = d
	switch {
	case !m.moved:
		// Listings arrive one place at a time; until the user moves, the
		// cursor stays on the newest version whichever arrived first.
		m.cur, m.top = 0, 0
	case ok:
		for i, v := range d.Versions {
			if v == at {
				m.cur = i
			}
		}
	}
	for v := range m.sel {
		if !contains(d.Versions, v) {
			delete(m.sel, v) // a version no compared place lists any more
		}
	}
	m.clamp()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Reset empties the selection and puts the cursor on the newest version,
// for a newly chosen module.
func (m *Model) Reset() {
	m.sel = map[string]bool{}
	m.cur, m.top = 0, 0
	m.moved = false
}

// Data returns what is shown.
func (m Model) Data() Data { return m.data }

// Cursor returns the version under the cursor.
func (m Model) Cursor() (string, bool) {
	if m.cur < 0 || m.cur >= len(m.data.Versions) {
		return "", false
	}
	return m.data.Versions[m.cur], true
}

// Selection returns the selected versions, newest first.
func (m Model) Selection() []string {
	var out []string
	for _, v := range m.data.Versions {
		if m.sel[v] {
			out = append(out, v)
		}
	}
	return out
}

// Targets returns what an action applies to: the selection, or the version
// under the cursor when nothing is selected.
func (m Model) Targets() []string {
	if s := m.Selection(); len(s) > 0 {
		return s
	}
	if v, ok := m.Cursor(); ok {
		return []string{v}
	}
	return nil
}

// ClearSelection unselects every version.
func (m *Model) ClearSelection() { m.sel = map[string]bool{} }

// VisibleRows returns how many version rows fit on screen.
func (m Model) VisibleRows() int { return max(1, m.h-2) }

// Update handles the table's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
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
	case key.Matches(k, m.keys.PageUp):
		m.cur -= page
		m.top -= page
	case key.Matches(k, m.keys.PageDown):
		m.cur += page
		m.top += page
	case key.Matches(k, m.keys.Top):
		m.cur = 0
	case key.Matches(k, m.keys.Bottom):
		m.cur = len(m.data.Versions) - 1
	case key.Matches(k, m.keys.Toggle):
		if v, ok := m.Cursor(); ok {
			if m.sel[v] {
				delete(m.sel, v)
			} else {
				m.sel[v] = true
			}
		}
	case key.Matches(k, m.keys.All):
		m.toggleAll()
	case key.Matches(k, m.keys.Clear):
		m.sel = map[string]bool{}
	}
	m.clamp()
	return m, nil
}

// toggleAll selects every version, or none when all are selected already.
func (m *Model) toggleAll() {
	if len(m.sel) == len(m.data.Versions) {
		m.sel = map[string]bool{}
		return
	}
	for _, v := range m.data.Versions {
		m.sel[v] = true
	}
}

func (m *Model) clamp() {
	m.cur = max(0, min(m.cur, len(m.data.Versions)-1))
	vis := m.VisibleRows()
	m.top = max(0, min(m.top, len(m.data.Versions)-vis))
	if m.cur < m.top {
		m.top = m.cur
	}
	if m.cur >= m.top+vis {
		m.top = m.cur - vis + 1
	}
}

// columns returns the width of the version column, the headings to use
// and the width of each place's column.
func (m Model) columns() (verW int, heads []string, colW []int) {
	verW = len("version") + 2
	for _, v := range m.data.Versions {
		verW = max(verW, len(v)+2)
	}
	verW = min(verW, 24)
	widths := func(hs []string) ([]int, int) {
		ws := make([]int, len(hs))
		total := verW
		for i, h := range hs {
			ws[i] = max(theme.Width(h), 2) + 2
			total += ws[i]
		}
		return ws, total
	}
	heads = m.data.Places
	colW, total := widths(heads)
	if total > m.w && len(m.data.Short) == len(m.data.Places) {
		heads = m.data.Short
		colW, _ = widths(heads)
	}
	return verW, heads, colW
}

// View renders the table into its area, drawing only the rows on screen.
func (m Model) View() string {
	if m.w <= 0 || m.h <= 0 || len(m.data.Versions) == 0 {
		return ""
	}
	s := m.styles
	verW, heads, colW := m.columns()
	var b strings.Builder
	b.WriteString(s.Header.Render(theme.Fit(" version", verW)))
	for i, h := range heads {
		b.WriteString(s.Header.Render(theme.Fit(" "+h, colW[i])))
	}
	lines := make([]string, 0, m.h)
	lines = append(lines, b.String())
	vis := m.VisibleRows()
	for i := m.top; i < len(m.data.Versions) && i < m.top+vis; i++ {
		lines = append(lines, m.rowView(i, verW, colW))
	}
	for len(lines) < m.h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer())
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.w, "")
	}
	return strings.Join(lines, "\n")
}

func (m Model) rowView(i, verW int, colW []int) string {
	s := m.styles
	v := m.data.Versions[i]
	sel := m.sel[v]
	var b strings.Builder
	switch {
	case i == m.cur:
		b.WriteString(s.Accent.Render(theme.Fit("▸"+v, verW)))
	case sel:
		b.WriteString(s.Selected.Render("+") + theme.Fit(v, verW-1))
	default:
		b.WriteString(theme.Fit(" "+v, verW))
	}
	glyphs := &s.Glyphs
	switch {
	case i == m.cur:
		glyphs = &s.CursorGlyphs
	case sel:
		glyphs = &s.SelGlyphs
	}
	for c := range colW {
		mk := theme.MarkLoading
		if i < len(m.data.Marks) && c < len(m.data.Marks[i]) {
			mk = m.data.Marks[i][c]
		}
		b.WriteByte(' ')
		if sel {
			b.WriteString(s.Selected.Render("+"))
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(glyphs[mk])
		b.WriteString(strings.Repeat(" ", max(0, colW[c]-3)))
	}
	return b.String()
}

// footer is the count of selected versions and the legend.
func (m Model) footer() string {
	s := m.styles
	n := ""
	if k := len(m.sel); k > 0 {
		n = s.Selected.Render(strconv.Itoa(k)+" selected") + "  "
	}
	long, short := "", ""
	for _, l := range legend() {
		long += s.Glyphs[l.mark] + " " + s.Dim.Render(l.long) + "  "
		short += s.Glyphs[l.mark] + " " + s.Dim.Render(l.short) + " "
	}
	if theme.Width(n+long) <= m.w {
		return n + long
	}
	return n + short
}
