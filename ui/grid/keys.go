package grid

import (
	"charm.land/bubbles/v2/key"

	"github.com/tfmirror/tfmirror/ui/filterline"
	"github.com/tfmirror/tfmirror/ui/list"
)

// KeyMap is the grid's keys; a view turns off those it has no use for.
// Queue and Verify act on the selection but are carried out by the view,
// which owns the places; they are here so help lists them with the grid.
type KeyMap struct {
	list.Nav
	Left, Right              key.Binding
	Toggle, Row, Column, All key.Binding
	Clear, Filter, Gaps      key.Binding
	Queue, Verify            key.Binding
	Typing                   filterline.KeyMap
}

// CellKeys returns the keys of a grid whose cells are selected one by one,
// by row or by column: the platform matrix.
func CellKeys() KeyMap {
	k := KeyMap{
		Nav:    list.DefaultNav("newest", "oldest"),
		Left:   key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "column")),
		Right:  key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "column")),
		Toggle: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "select")),
		Row:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "row")),
		Column: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "column")),
		All:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all cells")),
		Clear:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear selection")),
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter (>= 2.0)")),
		Gaps:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "gaps only")),
		Queue:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "queue to…")),
		Verify: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "verify")),
		Typing: filterline.DefaultKeyMap(),
	}
	return k
}

// RowKeys returns the keys of a grid whose rows are selected whole: those
// of the matrix where they mean the same, space and r both selecting a
// version, a for all of them.
func RowKeys() KeyMap {
	k := CellKeys()
	k.Toggle = key.NewBinding(key.WithKeys("space", "r"), key.WithHelp("space/r", "select version"))
	k.All.SetHelp("a", "all versions")
	for _, b := range []*key.Binding{&k.Left, &k.Right, &k.Row, &k.Column, &k.Verify} {
		b.SetEnabled(false)
	}
	return k
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	// The actions first: where the bar is short, the last go.
	return []key.Binding{k.Toggle, k.Queue, k.Verify, k.Row, k.Column, k.Gaps, k.All, k.Filter}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Toggle, k.Row, k.Column, k.All, k.Clear, k.Queue, k.Verify, k.Gaps, k.Filter},
	}
}
