// Package providers is the UI's list of providers: the union of what the
// mirrors hold and what the user named, filtered as the user types.
package providers

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/filterline"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// KeyMap is the list's keys.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Filter, Open, FilterDone, FilterClear   key.Binding
}

// DefaultKeyMap returns the list's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Open:        key.NewBinding(key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "open matrix")),
		FilterDone:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		FilterClear: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Filter, k.Open} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Filter, k.Open}}
}

type filterKeys struct{ k KeyMap }

func (f filterKeys) ShortHelp() []key.Binding  { return []key.Binding{f.k.FilterDone, f.k.FilterClear} }
func (f filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// Item is one provider in the list.
type Item struct {
	Provider backends.Provider
	// Label is how the list names it: NAMESPACE/TYPE, or the full address
	// where two hosts share the short name.
	Label string
	// Note is shown beside the label where there is room (the newest
	// version, once known).
	Note string
}

// Model is the list.
type Model struct {
	keys   KeyMap
	styles *theme.Styles
	items  []Item
	shown  []int // indices into items that pass the filter
	cur    int   // index into shown
	top    int
	filter filterline.Model
	w, h   int
}

// New returns an empty list.
func New(styles *theme.Styles) Model {
	return Model{keys: DefaultKeyMap(), styles: styles, filter: filterline.New(styles, "filter")}
}

// Keys returns the list's key bindings.
func (m Model) Keys() KeyMap { return m.keys }

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

// Typing reports whether the filter is being edited.
func (m Model) Typing() bool { return m.filter.Typing() }

// SetSize sets the area the list draws in.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.filter.SetWidth(max(1, w-3))
	m.clamp()
}

// SetProviders replaces the list, keeping the cursor on the same provider
// and the notes already known.
func (m *Model) SetProviders(ps []backends.Provider) {
	at, ok := m.Selected()
	notes := map[backends.Provider]string{}
	for _, it := range m.items {
		notes[it.Provider] = it.Note
	}
	short := map[string]int{}
	for _, p := range ps {
		short[p.ShortString()]++
	}
	m.items = make([]Item, len(ps))
	for i, p := range ps {
		label := p.ShortString()
		if short[label] > 1 {
			label = p.String()
		}
		m.items[i] = Item{Provider: p, Label: label, Note: notes[p]}
	}
	m.refilter()
	if ok {
		m.moveTo(at)
	}
	m.clamp()
}

// SetNote sets the note shown beside p.
func (m *Model) SetNote(p backends.Provider, note string) {
	for i := range m.items {
		if m.items[i].Provider == p {
			m.items[i].Note = note
			return
		}
	}
}

// Len is the number of providers in the list, before filtering.
func (m Model) Len() int { return len(m.items) }

// Selected returns the provider under the cursor.
func (m Model) Selected() (backends.Provider, bool) {
	if m.cur < 0 || m.cur >= len(m.shown) {
		return backends.Provider{}, false
	}
	return m.items[m.shown[m.cur]].Provider, true
}

// Update handles the list's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if m.filter.Typing() {
		return m.updateFilter(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	page := max(1, m.rowsOnScreen())
	switch {
	case key.Matches(k, m.keys.Up):
		m.cur--
	case key.Matches(k, m.keys.Down):
		m.cur++
	case key.Matches(k, m.keys.PageUp):
		m.cur -= page
	case key.Matches(k, m.keys.PageDown):
		m.cur += page
	case key.Matches(k, m.keys.Top):
		m.cur = 0
	case key.Matches(k, m.keys.Bottom):
		m.cur = len(m.shown) - 1
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
	at, ok := m.Selected()
	m.refilter()
	m.cur, m.top = 0, 0
	if ok {
		m.moveTo(at)
	}
	m.clamp()
}

func (m *Model) refilter() {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	m.shown = m.shown[:0]
	for i, it := range m.items {
		if f == "" || strings.Contains(it.Provider.String(), f) {
			m.shown = append(m.shown, i)
		}
	}
}

func (m *Model) moveTo(p backends.Provider) {
	for i, j := range m.shown {
		if m.items[j].Provider == p {
			m.cur = i
			return
		}
	}
}

func (m Model) filterShown() bool { return m.filter.Shown() }

func (m Model) rowsOnScreen() int {
	if m.filterShown() {
		return m.h - 1
	}
	return m.h
}

func (m *Model) clamp() {
	m.cur = max(0, min(m.cur, len(m.shown)-1))
	vis := max(1, m.rowsOnScreen())
	m.top = max(0, min(m.top, len(m.shown)-vis))
	if m.cur < m.top {
		m.top = m.cur
	}
	if m.cur >= m.top+vis {
		m.top = m.cur - vis + 1
	}
}

// Title is the pane's title: the filter in use and how many match.
func (m Model) Title() string {
	t := "Providers"
	if f := m.filter.Value(); f != "" {
		t += " /" + f
	}
	if len(m.items) > 0 {
		if len(m.shown) != len(m.items) {
			t += " " + strconv.Itoa(len(m.shown)) + "/" + strconv.Itoa(len(m.items))
		} else {
			t += " " + strconv.Itoa(len(m.items))
		}
	}
	return t
}

// View renders the providers on screen, with notes where the pane is wide
// enough.
func (m Model) View() string {
	s := m.styles
	lines := make([]string, 0, m.h)
	if m.filterShown() {
		lines = append(lines, m.filter.View(s.Dim))
	}
	vis := max(0, m.rowsOnScreen())
	for i := m.top; i < len(m.shown) && i < m.top+vis; i++ {
		it := m.items[m.shown[i]]
		label := it.Label
		note := ""
		if it.Note != "" && m.w >= 28 {
			note = it.Note
		}
		room := m.w - 1
		if note != "" {
			room -= len(note) + 1
		}
		line := theme.Fit(label, room)
		if note != "" {
			line += " " + s.Dim.Render(note)
		}
		if i == m.cur {
			lines = append(lines, s.Accent.Render("▸")+s.Bold.Render(line))
		} else {
			lines = append(lines, " "+line)
		}
	}
	if len(m.shown) == 0 && len(m.items) > 0 {
		lines = append(lines, s.Dim.Render(" no provider matches"))
	}
	return strings.Join(lines, "\n")
}
