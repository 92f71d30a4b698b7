package filterline

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/ui/theme"
)

// KeyMap is the keys that end typing: Done keeps the filter, Clear empties
// it. While the user types, it is the pane's help.
type KeyMap struct {
	Done, Clear key.Binding
}

// DefaultKeyMap returns enter and esc.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Done:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		Clear: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Done, k.Clear} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// Model is a filter line.
type Model struct {
	input  textinput.Model
	typing bool
}

// New returns an empty filter line whose placeholder says what it filters.
func New(styles *theme.Styles, placeholder string) Model {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = placeholder
	in.SetStyles(styles.TextInput)
	return Model{input: in}
}

// Value is the filter text.
func (f Model) Value() string { return f.input.Value() }

// Typing reports whether keys go to the filter line.
func (f Model) Typing() bool { return f.typing }

// Shown reports whether the line takes room: while typing, or while a
// filter is in force.
func (f Model) Shown() bool { return f.typing || f.input.Value() != "" }

// SetWidth sets the width of the input.
func (f *Model) SetWidth(w int) { f.input.SetWidth(w) }

// Start sends keys to the filter line.
func (f *Model) Start() tea.Cmd {
	f.typing = true
	return f.input.Focus()
}

// Clear ends typing and empties the filter.
func (f *Model) Clear() {
	f.typing = false
	f.input.Blur()
	f.input.SetValue("")
}

// Update handles a message while typing: keys.Done ends typing and keeps
// the filter, keys.Clear ends it and empties the filter. changed reports
// whether the filter text changed, so the pane filters its rows again.
func (f Model) Update(msg tea.Msg, keys KeyMap) (_ Model, changed bool, _ tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, keys.Done):
			f.typing = false
			f.input.Blur()
			return f, false, nil
		case key.Matches(k, keys.Clear):
			changed = f.input.Value() != ""
			f.Clear()
			return f, changed, nil
		}
	}
	before := f.input.Value()
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	return f, f.input.Value() != before, cmd
}

// Type hands a message to the line while the user types in it, and calls
// changed when the filter text changes, so the pane filters its rows again.
func (f *Model) Type(msg tea.Msg, keys KeyMap, changed func()) tea.Cmd {
	var c bool
	var cmd tea.Cmd
	*f, c, cmd = f.Update(msg, keys)
	if c {
		changed()
	}
	return cmd
}

// View draws the line: the input while typing, else the filter in force as
// "/text" in the given style (empty when there is none).
func (f Model) View(idle lipgloss.Style) string {
	if f.typing {
		return f.input.View()
	}
	if f.input.Value() == "" {
		return ""
	}
	return idle.Render("/" + f.input.Value())
}
