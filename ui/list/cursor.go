package list

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Cursor is a position among rows, and the first row on screen.
type Cursor struct {
	Pos, Top int
}

// Clamp keeps the cursor among n rows and on a screen of h rows.
func (c *Cursor) Clamp(n, h int) {
	c.Pos = max(0, min(c.Pos, n-1))
	vis := max(1, h)
	c.Top = max(0, min(c.Top, n-vis))
	if c.Pos < c.Top {
		c.Top = c.Pos
	}
	if c.Pos >= c.Top+vis {
		c.Top = c.Pos - vis + 1
	}
}

// Nav is the keys that move a cursor.
type Nav struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

// DefaultNav returns the arrow, page, home and end keys (and vi's); first
// and last name the ends in help ("first", "newest").
func DefaultNav(first, last string) Nav {
	return Nav{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", first)),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", last)),
	}
}

// Bindings lists the keys in help order.
func (n Nav) Bindings() []key.Binding {
	return []key.Binding{n.Up, n.Down, n.PageUp, n.PageDown, n.Top, n.Bottom}
}

// Move moves c for k among rows, by page rows for the page keys; it reports
// whether k is one of the keys. The caller clamps.
func (n Nav) Move(c *Cursor, k tea.KeyPressMsg, rows, page int) bool {
	switch {
	case key.Matches(k, n.Up):
		c.Pos--
	case key.Matches(k, n.Down):
		c.Pos++
	case key.Matches(k, n.PageUp):
		c.Pos -= page
	case key.Matches(k, n.PageDown):
		c.Pos += page
	case key.Matches(k, n.Top):
		c.Pos = 0
	case key.Matches(k, n.Bottom):
		c.Pos = rows - 1
	default:
		return false
	}
	return true
}
