package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// KeyMap is the keys that work whichever pane has focus.
type KeyMap struct {
	NextPane, PrevPane key.Binding
	Details            key.Binding
	Compare            key.Binding
	Modules            key.Binding
	Help               key.Binding
	Quit, ForceQuit    key.Binding
}

// DefaultKeyMap returns the global keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NextPane:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Details:   key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "details")),
		Compare:   key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "compare mirror")),
		Modules:   key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "modules")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextPane, k.Modules, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.NextPane, k.PrevPane, k.Details, k.Compare, k.Modules}, {k.Help, k.Quit, k.ForceQuit}}
}

// mergedKeys is the help shown at the bottom: the focused pane's keys, then
// the global ones.
type mergedKeys struct {
	pane   help.KeyMap
	global help.KeyMap
}

func (m mergedKeys) ShortHelp() []key.Binding {
	return append(append([]key.Binding(nil), m.pane.ShortHelp()...), m.global.ShortHelp()...)
}

func (m mergedKeys) FullHelp() [][]key.Binding {
	return append(append([][]key.Binding(nil), m.pane.FullHelp()...), m.global.FullHelp()...)
}

// dialogKeys is the help inside the queue dialog.
type dialogKeys struct {
	Up, Down, Confirm, Force, Cancel key.Binding
	force                            bool // whether f applies at this step
}

func defaultDialogKeys() dialogKeys {
	return dialogKeys{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Confirm: key.NewBinding(key.WithKeys("enter", "y"), key.WithHelp("enter/y", "confirm")),
		Force:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "force: replace differing")),
		Cancel:  key.NewBinding(key.WithKeys("esc", "n", "q"), key.WithHelp("esc", "cancel")),
	}
}

func (k dialogKeys) ShortHelp() []key.Binding {
	if k.force {
		return []key.Binding{k.Confirm, k.Force, k.Cancel}
	}
	return []key.Binding{k.Up, k.Down, k.Confirm, k.Cancel}
}

func (k dialogKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// globalKeys is the global keys as help shows them: m names the view it
// switches to, and is left out where there is no Modules view (it still
// answers, with a hint).
func (m Model) globalKeys() KeyMap {
	k := m.keys
	switch {
	case !m.mod.enabled():
		k.Modules.SetEnabled(false)
	case m.view == viewModules:
		k.Modules.SetHelp("m", "providers")
	}
	return k
}
