package queue

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// Words name what a view queues.
type Words struct {
	Unit  string // what is selected, counted: "package(s)", "version(s)"
	Place string // a destination: "mirror", "place"
	Verb  string // what a job does: "copy", "fetch and pack"
	Jobs  string // the jobs, counted: "job(s)", "module job(s)"
	// Nothing is why nothing is queued when every target is there.
	Nothing string
	// NoDest is why there is nothing to queue to.
	NoDest string
	// From: the places to pick are the sources, not the destinations
	// (the lock view's gaps each have their destination already).
	From bool
}

// toward is the word before the place picked.
func (w Words) toward() string {
	if w.From {
		return "from"
	}
	return "to"
}

// Place is a destination, or a source a plan takes from.
type Place struct {
	Num        int
	Name, Kind string
}

// Label names a place as the header numbers it: "[2] ./mirror"; a place
// the header does not number (Num 0: every destination of a spec) by its
// name.
func (p Place) Label() string {
	if p.Num == 0 {
		return p.Name
	}
	return fmt.Sprintf("[%d] %s", p.Num, p.Name)
}

// Note is one line of what a plan spares or risks.
type Note struct {
	Style lipgloss.Style
	Text  string
}

// Source is how many of a plan's jobs take from one place.
type Source struct {
	Place
	N int
}

// Plan is what queueing the selection to one destination would do.
type Plan struct {
	// Run is queued as it is; Forced is queued instead when the user
	// forces (every task of it forced).
	Run, Forced []engine.Task
	// Need sums the plan up in the pick step ("3 to copy, 1 differ").
	Need string
	// From is where Run's tasks come from, in place order.
	From []Source
	// Notes say what else the plan leaves or replaces, unforced and forced.
	Notes, ForceNotes []Note
	// Work is how much of the selection the destination lacks, or holds
	// otherwise than the place the others are compared with: the picker
	// starts on the destination with the most.
	Work int
	// Nothing says, where Run is empty and Forced is not, what force would
	// do ("1 differs: press f to replace it").
	Nothing string
}

// Request is what a view asks to queue.
type Request struct {
	Words Words
	// N is the number of targets; Subject names their item ("acme/cloud").
	N       int
	Subject string
	Dests   []Place
	// Plan says what queueing to Dests[i] would do.
	Plan func(i int) Plan
}

// Model is the dialog.
type Model struct {
	req     Request
	keys    KeyMap
	cur     list.Cursor // over req.Dests
	confirm bool        // past choosing the destination
	plan    Plan
	force   bool
	// nudged: enter was pressed where only force would do anything.
	nudged bool
}

// New opens the dialog on the destination where there is the most work;
// with one destination it goes straight to confirming.
func New(req Request) Model {
	m := Model{req: req, keys: DefaultKeyMap()}
	best := -1
	for i := range req.Dests {
		if n := req.Plan(i).Work; n > best {
			best, m.cur.Pos = n, i
		}
	}
	if len(req.Dests) == 1 {
		m.confirm, m.plan = true, req.Plan(0)
	}
	return m
}

// Action is what a key did to the dialog.
type Action int

const (
	// Stay: the dialog stays open.
	Stay Action = iota
	// Cancel: close it, queueing nothing.
	Cancel
	// Queue: close it and queue Tasks to Dest.
	Queue
)

// Update handles a key.
func (m Model) Update(k tea.KeyPressMsg) (Model, Action) {
	switch {
	case key.Matches(k, m.keys.Cancel):
		return m, Cancel
	case !m.confirm && key.Matches(k, m.keys.Up):
		m.cur.Pos--
	case !m.confirm && key.Matches(k, m.keys.Down):
		m.cur.Pos++
	case !m.confirm && key.Matches(k, m.keys.Confirm):
		m.confirm, m.plan = true, m.req.Plan(m.cur.Pos)
	case m.confirm && key.Matches(k, m.keys.Force):
		m.force = !m.force
	case m.confirm && key.Matches(k, m.keys.Confirm) && len(m.Tasks()) == 0 && len(m.plan.Forced) > 0:
		// Queueing nothing would close the dialog on a choice the user
		// has not seen: say what f does instead.
		m.nudged = true
	case m.confirm && key.Matches(k, m.keys.Confirm):
		return m, Queue
	}
	m.cur.Clamp(len(m.req.Dests), len(m.req.Dests))
	return m, Stay
}

// Confirming reports whether the destination is chosen.
func (m Model) Confirming() bool { return m.confirm }

// Forced reports whether the user armed force.
func (m Model) Forced() bool { return m.force }

// Cursor is the index of the destination under the cursor.
func (m Model) Cursor() int { return m.cur.Pos }

// Plan is the plan being confirmed.
func (m Model) Plan() Plan { return m.plan }

// Dest is the chosen destination.
func (m Model) Dest() Place { return m.req.Dests[m.cur.Pos] }

// Tasks is what confirming queues.
func (m Model) Tasks() []engine.Task {
	if m.force {
		return m.plan.Forced
	}
	return m.plan.Run
}

// Words is how the view names what it queues.
func (m Model) Words() Words { return m.req.Words }

// HelpKeys is the dialog's keys for help: f only where it applies.
func (m Model) HelpKeys() help.KeyMap {
	k := m.keys
	k.force = m.confirm
	return k
}

// View renders the dialog in a box w cells wide: its title and lines.
func (m Model) View(s *theme.Styles, w int) (string, []string) {
	if !m.confirm {
		return "Queue to…", m.pickLines(s, w)
	}
	return "Confirm", m.confirmLines(s, w)
}

func (m Model) pickLines(s *theme.Styles, w int) []string {
	r := m.req
	lines := append(wrapped(fmt.Sprintf("Queue %d %s of %s %s which %s?", r.N, r.Words.Unit, r.Subject, r.Words.toward(), r.Words.Place), w), "")
	names := make([]string, len(r.Dests))
	rooms := make([]int, len(r.Dests))
	for i, d := range r.Dests {
		names[i] = d.Name
		// The name tells the places apart: it keeps a room of its own,
		// and the plan's words go under it where both do not fit.
		rooms[i] = max(minName, w-2-4-len(r.Plan(i).Need)-len(d.Kind)-10)
	}
	short := theme.ShortPlaces(names, rooms)
	for i, d := range r.Dests {
		need := r.Plan(i).Need
		line := fmt.Sprintf("[%d] %s (%s)", d.Num, short[i], d.Kind)
		lead, style := "   ", s.Dim
		if i == m.cur.Pos {
			lead, style = " "+s.Accent.Render("▸ "), lipgloss.NewStyle()
			line = s.Cursor.Render(line)
		}
		if theme.Width(line)+len(need)+6 > w {
			lines = append(lines, lead+line, "     "+style.Render(need))
			continue
		}
		lines = append(lines, lead+line+" "+style.Render(need))
	}
	return lines
}

// minName is the least room a place's name keeps in the dialog; a
// source's on the confirm line, beside its counts, minSource.
const minName, minSource = 14, 8

// wrapped is a sentence of the dialog, wrapped to its width, each line
// indented by one.
func wrapped(text string, w int) []string {
	lines := strings.Split(ansi.Wrap(text, max(w-3, 20), ""), "\n")
	for i := range lines {
		lines[i] = " " + lines[i]
	}
	return lines
}

func (m Model) confirmLines(s *theme.Styles, w int) []string {
	r, p, dest := m.req, m.plan, m.Dest()
	room := w - 4
	dest.Name = theme.ShortPlace(dest.Name, max(minName, room-30-len(r.Subject)))
	lines := append(wrapped(fmt.Sprintf("%d %s of %s %s %s", r.N, r.Words.Unit, r.Subject, r.Words.toward(), dest.Label()), w), "")
	if len(p.Run) > 0 {
		head := fmt.Sprintf(" %d to %s: ", len(p.Run), r.Words.Verb)
		// What the line leaves for the sources' names, shared alike.
		free := room - len(head) - 2*(len(p.From)-1)
		for _, src := range p.From {
			free -= len(fmt.Sprintf("%d from [%d] ", src.N, src.Num))
		}
		from := ""
		for _, src := range p.From {
			if from != "" {
				from += ", "
			}
			from += fmt.Sprintf("%d from [%d] %s", src.N, src.Num, theme.ShortPlace(src.Name, max(minSource, free/len(p.From))))
		}
		lines = append(lines, " "+s.OK.Render("●")+head+from)
	}
	notes := p.Notes
	if m.force {
		notes = p.ForceNotes
	}
	for _, n := range notes {
		lines = append(lines, " "+n.Style.Render(n.Text))
	}
	if len(m.Tasks()) == 0 && m.plan.Nothing != "" {
		style := s.Warn
		if m.nudged {
			style = s.Bad
		}
		lines = append(lines, "", " "+style.Render("Nothing to "+r.Words.Verb+" unforced: "+m.plan.Nothing))
	}
	return append(lines, "", " "+s.Key.Render("enter")+" queue   "+s.Key.Render("f")+" force   "+s.Key.Render("esc")+" cancel")
}

// KeyMap is the dialog's keys.
type KeyMap struct {
	Up, Down, Confirm, Force, Cancel key.Binding
	force                            bool // whether f applies at this step
}

// DefaultKeyMap returns the dialog's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Confirm: key.NewBinding(key.WithKeys("enter", "y"), key.WithHelp("enter/y", "confirm")),
		Force:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "force: replace differing")),
		Cancel:  key.NewBinding(key.WithKeys("esc", "n", "q"), key.WithHelp("esc", "cancel")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	if k.force {
		return []key.Binding{k.Confirm, k.Force, k.Cancel}
	}
	return []key.Binding{k.Up, k.Down, k.Confirm, k.Cancel}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }
