package events

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// Kind is how bad an event is.
type Kind int

const (
	Warning Kind = iota
	Failure
)

// Entry is one event; an event that happens again is counted, not repeated.
type Entry struct {
	Kind  Kind
	Text  string
	Count int
}

// maxEntries bounds the log: a place that fails on every refresh must not
// grow it without end.
const maxEntries = 500

// Log is the session's events, oldest first. It is shared: whatever reports
// a problem adds to it, and the pane shows it.
type Log struct {
	entries []Entry
	// counts by Kind, of distinct events.
	counts [2]int
}

// Add records an event. A failure with the text of an earlier one moves it
// to the end and counts it again: it happened again. A warning said again
// is the same fact (a place reports its warnings each time it is asked),
// and stays as it was.
func (l *Log) Add(k Kind, text string) {
	text = strings.TrimSpace(backends.Printable(text))
	if text == "" {
		return
	}
	for i, e := range l.entries {
		if e.Kind == k && e.Text == text {
			if k == Warning {
				return
			}
			e.Count++
			l.entries = append(append(l.entries[:i:i], l.entries[i+1:]...), e)
			return
		}
	}
	l.entries = append(l.entries, Entry{Kind: k, Text: text, Count: 1})
	l.counts[k]++
	if len(l.entries) > maxEntries {
		l.counts[l.entries[0].Kind]--
		l.entries = l.entries[1:]
	}
}

// Entries returns the events, oldest first.
func (l *Log) Entries() []Entry { return l.entries }

// Count is the number of distinct events of kind k.
func (l *Log) Count(k Kind) int { return l.counts[k] }

// Summary counts the events for a title: "2 errors · 1 warning".
func (l *Log) Summary() string {
	var parts []string
	if n := l.counts[Failure]; n > 0 {
		parts = append(parts, plural(n, "error"))
	}
	if n := l.counts[Warning]; n > 0 {
		parts = append(parts, plural(n, "warning"))
	}
	return strings.Join(parts, " · ")
}

func plural(n int, word string) string {
	if n != 1 {
		word += "s"
	}
	return strconv.Itoa(n) + " " + word
}

// KeyMap is the pane's keys: it scrolls.
type KeyMap struct{ list.Nav }

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.Bindings()} }

// Model is the pane: the log wrapped to its width, newest first (k9s's
// events), so the start of the latest failure is what shows.
type Model struct {
	log    *Log
	styles *theme.Styles
	keys   KeyMap
	top    int // the first line on screen
	w, h   int
}

// New returns a pane over log.
func New(styles *theme.Styles, log *Log) Model {
	return Model{log: log, styles: styles, keys: KeyMap{list.DefaultNav("newest", "oldest")}}
}

// Keys returns the pane's keys.
func (m Model) Keys() help.KeyMap { return m.keys }

// SetSize sets the area the pane draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Title names the pane with its counts.
func (m Model) Title() string {
	if s := m.log.Summary(); s != "" {
		return "Events " + s
	}
	return "Events"
}

// Update scrolls.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	last := max(0, len(m.lines())-m.h)
	c := list.Cursor{Pos: min(m.top, last)}
	switch {
	case key.Matches(k, m.keys.Bottom):
		c.Pos = last
	case !m.keys.Move(&c, k, last+1, max(1, m.h-1)):
		return m, nil
	}
	m.top = max(0, min(c.Pos, last))
	return m, nil
}

// lines is every event wrapped to the pane's width, newest first, a glyph
// before each and, for an event seen more than once, how many times.
func (m Model) lines() []string {
	s := m.styles
	w := max(8, m.w-2)
	var out []string
	for i := len(m.log.entries) - 1; i >= 0; i-- {
		e := m.log.entries[i]
		glyph, style := s.Warn.Render("!"), s.Warn
		if e.Kind == Failure {
			glyph, style = s.Bad.Render("✗"), s.Bad
		}
		text := e.Text
		if e.Count > 1 {
			text += " (×" + strconv.Itoa(e.Count) + ")"
		}
		for k, l := range strings.Split(ansi.Wrap(text, w, " /"), "\n") {
			if k == 0 {
				out = append(out, glyph+" "+style.Render(l))
			} else {
				out = append(out, "  "+style.Render(l))
			}
		}
	}
	return out
}

// View renders the lines on screen, with an arrow where more are above or
// below.
func (m Model) View() string {
	lines := m.lines()
	if len(lines) == 0 {
		return m.styles.Dim.Render(" No errors or warnings so far.")
	}
	top := max(0, min(m.top, len(lines)-m.h))
	end := min(len(lines), top+m.h)
	shown := append([]string(nil), lines[top:end]...)
	if top > 0 && len(shown) > 0 {
		shown[0] = theme.Fit(shown[0], max(0, m.w-1)) + m.styles.Dim.Render("↑")
	}
	if end < len(lines) && len(shown) > 0 {
		shown[len(shown)-1] = theme.Fit(shown[len(shown)-1], max(0, m.w-1)) + m.styles.Dim.Render("↓")
	}
	return strings.Join(shown, "\n")
}
