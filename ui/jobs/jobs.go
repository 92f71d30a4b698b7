package jobs

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/format"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// KeyMap is the pane's keys.
type KeyMap struct {
	list.Nav
	Cancel, Retry key.Binding
}

// DefaultKeyMap returns the pane's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Nav:    list.DefaultNav("first", "last"),
		Cancel: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "cancel job")),
		Retry:  key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry failed/canceled")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Cancel, k.Retry} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Bindings(), {k.Cancel, k.Retry}}
}

// DefaultEmpty is what an empty pane says beside the provider matrix.
const DefaultEmpty = " No jobs: select cells in the matrix (space, r, c), then enter."

// Model is the pane. It folds engine events into a engine.Tracker; the root
// model owns the engine and carries out cancel and retry.
type Model struct {
	keys    KeyMap
	styles  *theme.Styles
	tracker *engine.Tracker
	bar     progress.Model
	// dest maps a destination's name to its number in the header.
	dest    map[string]int
	cur     list.Cursor // over tracker.Order
	focused bool
	// Spin is the running-job glyph, set by the root as its spinner turns.
	Spin string
	// Empty is what the pane says when there are no jobs: how to make
	// some in the view shown.
	Empty string
	w, h  int
}

// New returns an empty pane. dest numbers the destinations as the header
// does.
func New(styles *theme.Styles, dest map[string]int) Model {
	bar := progress.New(progress.WithFillCharacters('█', '░'), progress.WithoutPercentage(),
		progress.WithColors(lipgloss.Color("2")))
	return Model{keys: DefaultKeyMap(), styles: styles, tracker: engine.NewTracker(), bar: bar, dest: dest, Spin: "↻", Empty: DefaultEmpty}
}

// Keys returns the pane's key bindings.
func (m Model) Keys() KeyMap { return m.keys }

// Tracker is the state of every job.
func (m Model) Tracker() *engine.Tracker { return m.tracker }

// Apply folds an engine event into the pane and returns the job it is
// about, if any.
func (m *Model) Apply(ev engine.Event) *engine.TrackedJob {
	j := m.tracker.Apply(ev)
	switch ev.(type) {
	case engine.JobQueued, engine.JobDone, engine.JobFailed:
		if !m.focused {
			m.follow()
		}
	}
	return j
}

// SetSize sets the area the pane draws in.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.clamp()
}

// Focus marks the pane as focused (its cursor shows and stays put).
func (m *Model) Focus(on bool) {
	m.focused = on
	if !on {
		m.follow()
	}
}

// Selected returns the job under the cursor.
func (m Model) Selected() (*engine.TrackedJob, bool) {
	if m.cur.Pos < 0 || m.cur.Pos >= len(m.tracker.Order) {
		return nil, false
	}
	return m.tracker.Jobs[m.tracker.Order[m.cur.Pos]], true
}

// Update moves the cursor. Cancel and retry are the root's: it checks
// Keys().Cancel and Keys().Retry before handing keys here.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		m.keys.Move(&m.cur, k, len(m.tracker.Order), max(1, m.h))
		m.clamp()
	}
	return m, nil
}

// follow puts the cursor on the first unfinished job, or the last job, so
// an unfocused pane shows where the work is.
func (m *Model) follow() {
	m.cur.Pos = len(m.tracker.Order) - 1
	for i, id := range m.tracker.Order {
		if st := m.tracker.Jobs[id].State; st == engine.Queued || st == engine.Running {
			// The work in progress and what waits behind it, with the last
			// job to end just above.
			m.cur = list.Cursor{Pos: i, Top: max(0, i-1)}
			break
		}
	}
	m.clamp()
}

func (m *Model) clamp() { m.cur.Clamp(len(m.tracker.Order), m.h) }

// Title is the pane's title with the counts of jobs by state.
func (m Model) Title() string {
	if len(m.tracker.Order) == 0 {
		return "Jobs"
	}
	c := m.tracker.Counts()
	t := "Jobs " + strconv.Itoa(c[engine.Running]) + " running · " + strconv.Itoa(c[engine.Queued]) + " queued · " +
		strconv.Itoa(c[engine.Done]) + " done"
	if n := c[engine.Failed]; n > 0 {
		t += " · " + strconv.Itoa(n) + " failed"
	}
	if n := c[engine.Canceled]; n > 0 {
		t += " · " + strconv.Itoa(n) + " canceled"
	}
	return t
}

// View renders the jobs on screen, one line each.
func (m Model) View() string {
	s := m.styles
	if len(m.tracker.Order) == 0 {
		return s.Dim.Render(m.Empty)
	}
	nameW := 10
	for i := m.cur.Top; i < len(m.tracker.Order) && i < m.cur.Top+m.h; i++ {
		nameW = max(nameW, len(jobName(m.tracker.Jobs[m.tracker.Order[i]])))
	}
	nameW = min(nameW, max(10, m.w/2))
	barW := 0
	switch {
	case m.w >= 100:
		barW = 16
	case m.w >= 60:
		barW = 8
	}
	bar := m.bar
	bar.SetWidth(barW)
	lines := make([]string, 0, m.h)
	for i := m.cur.Top; i < len(m.tracker.Order) && i < m.cur.Top+m.h; i++ {
		j := m.tracker.Jobs[m.tracker.Order[i]]
		lines = append(lines, m.row(j, i == m.cur.Pos && m.focused, nameW, bar))
	}
	return strings.Join(lines, "\n")
}

func (m Model) row(j *engine.TrackedJob, cursor bool, nameW int, bar progress.Model) string {
	s := m.styles
	name := jobName(j)
	dest := "→ ?"
	if n, ok := m.dest[j.Info.Dst]; ok {
		dest = "→ " + strconv.Itoa(n)
	}
	if j.Info.Name != "" {
		// A module's address is long and its version, at the end, tells
		// the rows apart: cut from the left.
		name = theme.TruncateLeft(name, nameW)
	}
	head := theme.Fit(name, nameW) + " " + dest + " "
	if cursor {
		head = s.Cursor.Render(head)
	}
	pct, known := j.Fraction()
	progress := func(p float64) string {
		out := ""
		if bar.Width() > 0 {
			out = bar.ViewAs(p) + " "
		}
		return out + theme.Fit(strconv.Itoa(int(p*100))+"%", 4) + " "
	}
	var icon, rest string
	switch j.State {
	case engine.Queued:
		icon, rest = s.Dim.Render("·"), s.Dim.Render("queued")
	case engine.Running:
		icon = s.Info.Render(m.Spin)
		switch {
		case j.Phase == engine.PhaseHashing:
			// Every byte is in; the archive is still being hashed.
			rest = progress(1) + s.Info.Render("hashing")
		case known:
			rest = progress(pct)
		default:
			// The source does not state the size: show what has arrived.
			got := format.Bytes(j.Bytes)
			rest = theme.Fit(got, max(bar.Width()+5, len(got))) + " "
		}
		if j.Phase != engine.PhaseHashing {
			rest += format.Bytes(int64(j.Rate)) + "/s"
			if d, ok := j.ETA(); ok && d >= time.Second {
				rest += " " + d.Round(time.Second).String() + " left"
			}
		}
		if j.Attempt > 1 {
			rest += s.Warn.Render(" attempt " + strconv.Itoa(j.Attempt))
		}
		if j.Err != nil {
			rest += s.Warn.Render(" retrying: " + Reason(j.Err))
		}
	case engine.Done:
		icon = s.OK.Render("✓")
		if bar.Width() > 0 {
			rest = progress(1)
		}
		rest += m.Checks(j.Checks, j.Verified)
	case engine.Failed:
		icon = s.Bad.Render("✗")
		rest = s.Bad.Render(Reason(j.Err))
	case engine.Canceled:
		icon, rest = s.Dim.Render("⊘"), s.Dim.Render("canceled")
	}
	return icon + " " + head + rest
}

func jobName(j *engine.TrackedJob) string {
	if j.Info.Name != "" {
		return j.Info.Label() // a module: no provider package to shorten
	}
	pkg := j.Info.Package
	return pkg.Provider.Type + " " + pkg.Version.String() + " " + pkg.Platform.String()
}

// Checks summarises hash checks as "h1 ✓ zh ✓ mirror index", failures in red
// with a cross, and says so when nothing vouched for the archive.
func (m Model) Checks(cs []hashing.Check, verified bool) string {
	s := m.styles
	type group struct {
		source string
		parts  []string
		bad    bool
	}
	var groups []*group
	by := map[string]*group{}
	for _, c := range cs {
		if c.Status == hashing.Unchecked {
			continue
		}
		src := string(c.Source.Kind)
		g := by[src]
		if g == nil {
			g = &group{source: src}
			by[src] = g
			groups = append(groups, g)
		}
		scheme := strings.TrimSuffix(string(c.Scheme), ":")
		if c.Status == hashing.Match {
			g.parts = append(g.parts, scheme+" ✓")
		} else {
			g.parts = append(g.parts, scheme+" ✗")
			g.bad = true
		}
	}
	if len(groups) == 0 || !verified && !anyBad(groups, func(g *group) bool { return g.bad }) {
		return s.Warn.Render("◐ copied; nothing stated to verify it against")
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		t := strings.Join(g.parts, " ") + " " + g.source
		if g.bad {
			t = s.Bad.Render(t)
		} else {
			t = s.OK.Render(t)
		}
		out = append(out, t)
	}
	return strings.Join(out, s.Dim.Render(", "))
}

func anyBad[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}

// Reason is a failure in a few words a user can act on; Details shows the
// whole error.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, backends.ErrConflict):
		return "conflict: destination holds a different archive (queue again with f to force)"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, hashing.ErrHashMismatch):
		var oe *backends.OpError
		if errors.As(err, &oe) {
			return oe.Err.Error()
		}
	}
	var oe *backends.OpError
	if errors.As(err, &oe) {
		side := oe.Side
		if side != "" {
			side += " "
		}
		return oe.Op + " (" + side + oe.Place + "): " + oe.Err.Error()
	}
	return err.Error()
}

// Click puts the cursor on the job drawn on line y of the pane; it reports
// whether there is one there.
func (m *Model) Click(y int) bool {
	if y < 0 || y >= m.h || m.cur.Top+y >= len(m.tracker.Order) {
		return false
	}
	m.cur.Pos = m.cur.Top + y
	m.clamp()
	return true
}

// Scroll moves the cursor by n jobs (negative: up).
func (m *Model) Scroll(n int) {
	m.cur.Pos += n
	m.clamp()
}
