// Package modlist is the UI's list of modules, the left pane of the Modules
// view: the modules named with --module, each with its newest version once
// a place has listed it.
package modlist

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// KeyMap is the list's keys.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open                                    key.Binding
}

// DefaultKeyMap returns the list's keys, the providers list's less the
// filter: a command line names a handful of modules, not hundreds.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Open:     key.NewBinding(key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "open versions")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Open} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Open}}
}

// Item is one module in the list.
type Item struct {
	Module modules.Module
	// Label is NAMESPACE/NAME/SYSTEM, or the whole address where two hosts
	// share it.
	Label string
	// Note is the newest version, once known.
	Note string
}

// Model is the list.
type Model struct {
	keys   KeyMap
	styles *theme.Styles
	items  []Item
	cur    int
	top    int
	w, h   int
}

// New returns an empty list.
func New(styles *theme.Styles) Model { return Model{keys: DefaultKeyMap(), styles: styles} }

// Keys returns the list's key bindings.
func (m Model) Keys() KeyMap { return m.keys }

// SetSize sets the area the list draws in.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.clamp()
}

// SetModules replaces the list (already in the order to show), keeping the
// cursor on the same module and the notes already known.
func (m *Model) SetModules(ms []modules.Module) {
	at, ok := m.Selected()
	notes := map[modules.Module]string{}
	for _, it := range m.items {
		notes[it.Module] = it.Note
	}
	short := map[string]int{}
	for _, mod := range ms {
		short[mod.Short()]++
	}
	m.items = make([]Item, len(ms))
	for i, mod := range ms {
		label := mod.Short()
		if short[label] > 1 {
			label = mod.String()
		}
		m.items[i] = Item{Module: mod, Label: label, Note: notes[mod]}
		if ok && mod == at {
			m.cur = i
		}
	}
	m.clamp()
}

// SetNote sets the note shown beside mod.
func (m *Model) SetNote(mod modules.Module, note string) {
	for i := range m.items {
		if m.items[i].Module == mod {
			m.items[i].Note = note
			return
		}
	}
}

// Len is the number of modules in the list.
func (m Model) Len() int { return len(m.items) }

// Selected returns the module under the cursor.
func (m Model) Selected() (modules.Module, bool) {
	if m.cur < 0 || m.cur >= len(m.items) {
		return modules.Module{}, false
	}
	return m.items[m.cur].Module, true
}

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	page := max(1, m.h)
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
		m.cur = len(m.items) - 1
	}
	m.clamp()
	return m, nil
}

func (m *Model) clamp() {
	m.cur = max(0, min(m.cur, len(m.items)-1))
	vis := max(1, m.h)
	m.top = max(0, min(m.top, len(m.items)-vis))
	if m.cur < m.top {
		m.top = m.cur
	}
	if m.cur >= m.top+vis {
		m.top = m.cur - vis + 1
	}
}

// Title is the pane's title.
func (m Model) Title() string {
	if len(m.items) == 0 {
		return "Modules"
	}
	return "Modules " + strconv.Itoa(len(m.items))
}

// View renders the modules on screen, with notes where the pane is wide
// enough.
func (m Model) View() string {
	s := m.styles
	if len(m.items) == 0 {
		return s.Dim.Render(" no modules: name them with --module")
	}
	lines := make([]string, 0, m.h)
	for i := m.top; i < len(m.items) && i < m.top+max(0, m.h); i++ {
		it := m.items[i]
		note := ""
		if it.Note != "" && m.w >= 28 {
			note = it.Note
		}
		room := m.w - 1
		if note != "" {
			room -= len(note) + 1
		}
		line := theme.Fit(it.Label, room)
		if note != "" {
			line += " " + s.Dim.Render(note)
		}
		if i == m.cur {
			lines = append(lines, s.Accent.Render("▸")+s.Bold.Render(line))
		} else {
			lines = append(lines, " "+line)
		}
	}
	return strings.Join(lines, "\n")
}
