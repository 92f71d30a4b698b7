package ui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/events"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// layout is where each pane goes, worked out on resize and on `d`.
type layout struct {
	leftW, rightW    int
	provH, detailsH  int
	matrixH, jobsH   int
	details, tooTiny bool
}

// Minimum terminal size the UI draws in.
const minW, minH = 60, 16

func (m *Model) relayout() {
	w, h := m.w, m.h
	l := layout{tooTiny: w < minW || h < minH}
	bodyH := h - 3 // header, status, help
	switch m.detailsPref {
	case 1:
		l.details = true
	case 0:
		l.details = w >= 100 && h >= 30
	}
	l.leftW = max(22, min(44, w*28/100))
	if l.details {
		// Room for a place's name and size, a hash and its source, on a
		// terminal where the list alone would be narrow.
		l.leftW = max(l.leftW, min(32, w*38/100))
	}
	l.rightW = w - l.leftW
	l.jobsH = max(6, min(16, bodyH*3/10))
	if m.showEvents {
		l.jobsH = max(l.jobsH, bodyH/2) // errors in full take room
	}
	l.matrixH = bodyH - l.jobsH
	if l.details {
		l.provH = max(5, bodyH*2/5)
		l.detailsH = bodyH - l.provH
	} else {
		l.provH = bodyH
	}
	m.lay = l
	if !l.details && m.focus == paneDetails {
		m.setFocus(paneMatrix)
	}
	for _, v := range m.views {
		if v != nil {
			v.setSize(l)
		}
	}
	m.details.SetSize(l.leftW-2, l.detailsH-2)
	m.jobs.SetSize(l.rightW-2, l.jobsH-2)
	m.events.SetSize(l.rightW-2, l.jobsH-2)
	m.help.SetWidth(w - 1)
}

func (m Model) render() string {
	if m.w == 0 {
		return ""
	}
	if m.lay.tooTiny {
		// Wrapped and cut to the terminal, as much as fits of it.
		msg := fmt.Sprintf("tfmirror needs at least %dx%d (this terminal is %dx%d)", minW, minH, m.w, m.h)
		lines := strings.Split(ansi.Hardwrap(ansi.Wrap(msg, m.w, ""), m.w, true), "\n")
		return strings.Join(lines[:min(len(lines), max(m.h, 1))], "\n")
	}
	if m.showHelp {
		return m.helpScreen()
	}
	title, lines := m.view().listBox()
	left := m.styles.Box(title, lines, m.lay.leftW, m.lay.provH, m.focus == paneProviders)
	if m.lay.details {
		left += "\n" + m.styles.Box("Details", strings.Split(m.details.View(), "\n"), m.lay.leftW, m.lay.detailsH, m.focus == paneDetails)
	}
	focused := m.focus == paneMatrix
	switch {
	case m.preview != nil:
		title, lines = m.preview.view(m.styles, m.lay.rightW, m.lay.matrixH)
		focused = true
	case m.dialog != nil:
		title, lines = m.dialog.View(m.styles, m.lay.rightW)
		focused = true
	default:
		title, lines = m.view().gridBox()
	}
	right := m.styles.Box(title, lines, m.lay.rightW, m.lay.matrixH, focused) + "\n" + m.bottomBox()
	body := lipgloss.JoinHorizontal(lipgloss.Top, left, right)
	return m.headerView() + "\n" + body + "\n" + m.statusView() + "\n" + m.helpView()
}

// bottomBox is the pane under the grid: the jobs, or the events in full.
func (m Model) bottomBox() string {
	if m.showEvents {
		return m.styles.Box(m.events.Title(), strings.Split(m.events.View(), "\n"), m.lay.rightW, m.lay.jobsH, m.focus == paneJobs)
	}
	title := m.jobs.Title()
	if n := m.sh.log.Count(events.Failure); n > 0 {
		title += " ─ e: " + m.sh.log.Summary()
	}
	return m.styles.Box(title, strings.Split(m.jobs.View(), "\n"), m.lay.rightW, m.lay.jobsH, m.focus == paneJobs)
}

// headerView names the places of the view shown with their numbers; the
// compared ones stand out.
func (m Model) headerView() string {
	s := m.styles
	places := m.view().header()
	head := " " + s.Accent.Render("tfmirror") + s.Dim.Render(m.view().words().places)
	room := m.w - theme.Width(head) - 1
	names := make([]string, len(places))
	kinds, nums := 0, 0
	for i, p := range places {
		names[i] = p.name
		nums += len(fmt.Sprintf("[%d]   ", p.num))
		kinds += len(" (" + p.kind + ")")
	}
	sep := "  "
	switch {
	case room-nums+theme.Width(head) < 10*len(places)+2:
		// Tighter: the names need the room more than the program's
		// name and the second space between them ("[2] …/primary" reads
		// as a name, "[2] …ry" does not).
		head, sep, nums = " ", " ", nums-len(places)
		room = m.w - 2
	case room-nums < 14*len(places):
		// Tight: the names need the room more than the word "mirrors".
		head = " " + s.Accent.Render("tfmirror") + s.Dim.Render(" ─ ")
		room = m.w - theme.Width(head) - 1
	}
	room -= nums
	// Kinds go first when names would be cut short.
	withKinds := room-kinds >= 12*len(places)
	if withKinds {
		room -= kinds
	}
	widths := share(names, room)
	for i := range widths {
		widths[i] = max(3, widths[i])
	}
	short := theme.ShortPlaces(names, widths)
	parts := make([]string, 0, len(places))
	for i, p := range places {
		num := fmt.Sprintf("[%d]", p.num)
		kind := ""
		if withKinds {
			kind = " (" + p.kind + ")"
		}
		name := short[i]
		if p.compared {
			parts = append(parts, s.Compared.Render(num)+" "+name+s.Dim.Render(kind))
		} else {
			parts = append(parts, s.Dim.Render(num+" "+name+kind))
		}
	}
	return theme.Fit(head+strings.Join(parts, sep), m.w)
}

// headerPlaceAt is the place whose name the header draws at column x.
func (m Model) headerPlaceAt(x int) (place, bool) {
	line := ansi.Strip(m.headerView())
	places := m.view().header()
	best, at := -1, -1
	for i, p := range places {
		tag := fmt.Sprintf("[%d] ", p.num)
		if k := strings.Index(line, tag); k >= 0 && theme.Width(line[:k]) <= x && k > at {
			best, at = i, k
		}
	}
	if best < 0 {
		return place{}, false
	}
	return places[best], true
}

// share divides room among names: short names get what they need, and
// what they leave goes to the long ones, equally.
func share(names []string, room int) []int {
	out := make([]int, len(names))
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return theme.Width(names[order[a]]) < theme.Width(names[order[b]]) })
	for k, i := range order {
		fair := room / (len(order) - k)
		out[i] = min(theme.Width(names[i]), fair)
		room -= out[i]
	}
	return out
}

func (m Model) statusView() string {
	s := m.styles
	if m.hover != "" {
		return theme.Fit(" "+s.Dim.Render(m.hover), m.w)
	}
	t := m.sh.status.text
	switch m.sh.status.kind {
	case statusBad:
		// Never colour alone: a failure reads as one without it too.
		if !strings.HasPrefix(t, "✗") {
			t = "✗ " + t
		}
		t = s.Bad.Render(t)
	case statusWarn:
		t = s.Warn.Render(t)
	}
	return theme.Fit(" "+t, m.w)
}

// helpView is the key bar: the focused pane's keys, then the global ones.
// Where they do not all fit, the pane's last keys go first, then the
// global keys (the job's own, L, C or S, last) but help and quit, which
// always stay.
func (m Model) helpView() string {
	if m.dialog != nil || m.preview != nil {
		return " " + m.help.ShortHelpView(m.paneKeys().ShortHelp())
	}
	if m.confirmQuit {
		return theme.Truncate(" "+m.help.ShortHelpView([]key.Binding{quitYes, quitNo}), m.w)
	}
	g := m.globalKeys()
	if m.sh.log.Count(events.Failure)+m.sh.log.Count(events.Warning) == 0 && !m.showEvents {
		g.Events.SetEnabled(false) // nothing to read there yet; help lists it
	}
	pane := enabled(m.paneKeys().ShortHelp())
	global := enabled(g.ShortHelp())
	h := m.help
	h.SetWidth(0) // measured here, not cut with an ellipsis
	for n := len(pane); ; n-- {
		bar := " " + h.ShortHelpView(append(append([]key.Binding(nil), pane[:max(0, n)]...), global...))
		if theme.Width(bar) <= m.w || n <= 0 && len(global) <= 2 {
			// Cut to the screen all the same: a wrapped last line would
			// break the layout.
			return theme.Truncate(bar, m.w)
		}
		if n <= 0 {
			global = dropGlobal(global, g.Modules, g.Events, g.NextPane)
		}
	}
}

// The answers to the quit question, as the key bar shows them.
var (
	quitYes = key.NewBinding(key.WithKeys("y", "enter"), key.WithHelp("y/enter", "quit, cancelling the jobs"))
	quitNo  = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("any other key", "stay"))
)

// dropGlobal leaves out of the key bar the first of bs that is one of
// first, in that order (keys every screen has), else bs' first: the keys
// of the job the view is for (L, C, S) stay longest.
func dropGlobal(bs []key.Binding, first ...key.Binding) []key.Binding {
	for _, f := range first {
		for i, b := range bs {
			if b.Help().Key == f.Help().Key {
				return append(bs[:i:i], bs[i+1:]...)
			}
		}
	}
	return bs[1:]
}

// enabled drops the bindings that are turned off.
func enabled(bs []key.Binding) []key.Binding {
	out := make([]key.Binding, 0, len(bs))
	for _, b := range bs {
		if b.Enabled() {
			out = append(out, b)
		}
	}
	return out
}

// helpRows is how many lines of help the help screen shows at once.
func (m Model) helpRows() int { return m.h - 5 } // header, box borders, status, key bar

// helpScreen is the help over the whole body. Where it is taller than the
// screen it scrolls: an arrow on the last line says how many lines are
// below, one on the first that some are above, and the key bar names the
// keys that scroll.
func (m Model) helpScreen() string {
	lines, rows := m.fullHelpLines(), m.helpRows()
	bar := m.styles.Dim.Render(" ? or esc closes help")
	if n := len(lines); n > rows && rows >= 2 {
		top := max(0, min(m.helpTop, n-rows))
		lines = append([]string(nil), lines[top:top+rows]...)
		if below := n - top - rows; below > 0 {
			lines[rows-1] = m.styles.Dim.Render(" ↓ " + strconv.Itoa(below+1) + " more")
		}
		if top > 0 {
			lines[0] = theme.Fit(lines[0], m.w-3) + m.styles.Dim.Render("↑")
		}
		bar = theme.Truncate(" "+m.help.ShortHelpView(m.helpKeys.ShortHelp()), m.w)
	}
	body := m.styles.Box("Help", lines, m.w, m.h-3, true)
	return m.headerView() + "\n" + body + "\n" + m.statusView() + "\n" + bar
}

// fullHelpLines is every key of the focused pane beside the legend of
// every mark the view draws (below it where the two do not fit side by
// side), then the global keys.
func (m Model) fullHelpLines() []string {
	h := m.help
	h.ShowAll = true
	indent := func(block string) []string {
		lines := strings.Split(block, "\n")
		for i, l := range lines {
			lines[i] = " " + l
		}
		return lines
	}
	pane := append([]string{m.styles.Bold.Render(" " + m.paneName())}, indent(h.FullHelpView(m.paneKeys().FullHelp()))...)
	words := m.view().words()
	legend := []string{m.styles.Bold.Render("Marks") + ", one per compared " + words.marks + ":"}
	for _, l := range words.legend {
		legend = append(legend, "  "+m.styles.Glyphs[l.Mark]+" "+l.Long)
	}
	if words.listNote != "" {
		legend = append(legend, "", m.styles.Bold.Render(words.list)+", beside each:", "  "+words.listNote)
	}
	out := append(m.placeLines(), "")
	out = append(out, beside(pane, legend, m.w-2)...)
	out = append(out, "", m.styles.Bold.Render(" Everywhere"))
	out = append(out, indent(h.FullHelpView(m.globalKeys().FullHelp()))...)
	out = append(out, m.lockHelpLines()...)
	return append(out, "", m.styles.Bold.Render(" Mouse"),
		"  click   a pane, a "+m.view().words().item+", a cell (again: select)",
		"  wheel   moves the cursor of the pane under it")
}

// placeLines names every place of the view in full, wrapped: what the
// header shortens (a click on a name there shows it on the status line).
func (m Model) placeLines() []string {
	out := []string{m.styles.Bold.Render(" " + strings.ToUpper(m.view().words().marks[:1]) + m.view().words().marks[1:] + "s")}
	for _, p := range m.view().header() {
		line := fmt.Sprintf("[%d] %s", p.num, placeLabel(p))
		for _, l := range strings.Split(ansi.Hardwrap(line, max(10, m.w-6), true), "\n") {
			out = append(out, "  "+l)
		}
	}
	return out
}

// placeLabel is a place's full name with what it is.
func placeLabel(p place) string {
	what := p.kind
	if p.writable {
		what += ", writable"
	}
	if p.compared {
		what += ", compared"
	}
	return p.name + " (" + what + ")"
}

// beside sets right to the right of left where both fit in w cells, and
// below it where they do not.
func beside(left, right []string, w int) []string {
	lw, rw := 0, 0
	for _, l := range left {
		lw = max(lw, theme.Width(l))
	}
	for _, l := range right {
		rw = max(rw, theme.Width(l))
	}
	lw += 3
	if lw+rw > w {
		return append(append(left, ""), right...)
	}
	out := make([]string, max(len(left), len(right)))
	for i := range out {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = theme.Fit(l, lw) + r
	}
	return out
}

func (m Model) paneName() string {
	switch {
	case m.preview != nil:
		return "Lock preview"
	case m.dialog != nil:
		return "Queue dialog"
	case m.focus == paneProviders:
		return m.view().words().list
	case m.focus == paneMatrix:
		return m.view().words().grid
	case m.focus == paneDetails:
		return "Details"
	case m.showEvents:
		return "Events"
	}
	return "Jobs"
}
