package ui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/ui/modtable"
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
	l.leftW = max(22, min(44, w*28/100))
	l.rightW = w - l.leftW
	l.jobsH = max(6, min(16, bodyH*3/10))
	l.matrixH = bodyH - l.jobsH
	switch m.detailsPref {
	case 1:
		l.details = true
	case 0:
		l.details = w >= 100 && h >= 30
	}
	if l.details {
		l.provH = max(5, bodyH*2/5)
		l.detailsH = bodyH - l.provH
	} else {
		l.provH = bodyH
	}
	m.lay = l
	m.providers.SetSize(l.leftW-2, l.provH-2)
	m.details.SetSize(l.leftW-2, l.detailsH-2)
	m.matrix.SetSize(l.rightW-2, l.matrixH-2)
	m.jobs.SetSize(l.rightW-2, l.jobsH-2)
	m.mod.list.SetSize(l.leftW-2, l.provH-2)
	m.mod.table.SetSize(l.rightW-2, l.matrixH-2)
	m.help.SetWidth(w - 1)
}

func (m Model) render() string {
	if m.w == 0 {
		return ""
	}
	if m.lay.tooTiny {
		return fmt.Sprintf("tfmirror needs at least %dx%d (this terminal is %dx%d)", minW, minH, m.w, m.h)
	}
	if m.showHelp {
		body := m.styles.Box("Help", m.fullHelpLines(), m.w, m.h-3, true)
		return m.headerView() + "\n" + body + "\n" + m.statusView() + "\n" + m.styles.Dim.Render(" ? or esc closes help")
	}
	var left string
	if m.view == viewModules {
		left = m.styles.Box(m.mod.list.Title(), strings.Split(m.mod.list.View(), "\n"), m.lay.leftW, m.lay.provH, m.focus == paneProviders)
	} else {
		left = m.styles.Box(m.providers.Title(), m.providerLines(), m.lay.leftW, m.lay.provH, m.focus == paneProviders)
	}
	if m.lay.details {
		left += "\n" + m.styles.Box("Details", strings.Split(m.details.View(), "\n"), m.lay.leftW, m.lay.detailsH, false)
	}
	right := m.matrixBox() + "\n" +
		m.styles.Box(m.jobs.Title(), strings.Split(m.jobs.View(), "\n"), m.lay.rightW, m.lay.jobsH, m.focus == paneJobs)
	body := lipgloss.JoinHorizontal(lipgloss.Top, left, right)
	return m.headerView() + "\n" + body + "\n" + m.statusView() + "\n" + m.helpView()
}

// headerPlace is one place as the header names it.
type headerPlace struct {
	num        int
	name, kind string
	compared   bool
}

// headerPlaces is the places of the view shown: the mirrors, or the module
// places.
func (m Model) headerPlaces() (string, []headerPlace) {
	var out []headerPlace
	if m.view == viewModules {
		for i, p := range m.mod.places {
			out = append(out, headerPlace{p.num, p.Lister.String(), p.Kind, m.mod.compared[i]})
		}
		return " ─ module places: ", out
	}
	for i, mi := range m.mirrors {
		out = append(out, headerPlace{mi.num, mi.Reader.String(), mi.Kind, m.compared[i]})
	}
	return " ─ mirrors: ", out
}

// headerView names the places with their numbers; the compared ones stand
// out.
func (m Model) headerView() string {
	s := m.styles
	label, places := m.headerPlaces()
	head := " " + s.Accent.Render("tfmirror") + s.Dim.Render(label)
	room := m.w - theme.Width(head) - 1
	names := make([]string, len(places))
	kinds := 0
	for i, mi := range places {
		names[i] = mi.name
		room -= len(fmt.Sprintf("[%d]   ", mi.num))
		kinds += len(" (" + mi.kind + ")")
	}
	// Kinds go first when names would be cut short.
	withKinds := room-kinds >= 12*len(places)
	if withKinds {
		room -= kinds
	}
	widths := share(names, room)
	parts := make([]string, 0, len(places))
	for i, mi := range places {
		num := fmt.Sprintf("[%d]", mi.num)
		kind := ""
		if withKinds {
			kind = " (" + mi.kind + ")"
		}
		name := theme.ShortPlace(names[i], max(8, widths[i]))
		if mi.compared {
			parts = append(parts, s.Compared.Render(num)+" "+name+s.Dim.Render(kind))
		} else {
			parts = append(parts, s.Dim.Render(num+" "+name+kind))
		}
	}
	return theme.Fit(head+strings.Join(parts, "  "), m.w)
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

func (m Model) providerLines() []string {
	s := m.styles
	if m.providers.Len() > 0 {
		return strings.Split(m.providers.View(), "\n")
	}
	var lines []string
	pending := false
	for _, mi := range m.mirrors {
		if !mi.listed {
			pending = true
		}
	}
	if pending {
		return []string{" " + m.spinner.View() + " listing…"}
	}
	lines = append(lines, s.Dim.Render(" no providers"))
	return lines
}

func (m Model) matrixBox() string {
	focused := m.focus == paneMatrix
	if m.dialog != nil {
		title, lines := m.dialogLines()
		return m.styles.Box(title, lines, m.lay.rightW, m.lay.matrixH, true)
	}
	if m.mod.dialog != nil {
		title, lines := m.moduleDialogLines()
		return m.styles.Box(title, lines, m.lay.rightW, m.lay.matrixH, true)
	}
	if m.view == viewModules {
		return m.styles.Box(m.moduleTableTitle(), m.moduleTableLines(), m.lay.rightW, m.lay.matrixH, focused)
	}
	return m.styles.Box(m.matrixTitle(), m.matrixLines(), m.lay.rightW, m.lay.matrixH, focused)
}

func (m Model) matrixTitle() string {
	if !m.hasCurrent {
		return "Matrix"
	}
	t := m.current.String()
	cmp := m.comparedList()
	switch {
	case len(cmp) == 1:
		t += fmt.Sprintf(" ─ mirror %d", m.mirrors[cmp[0]].num)
	case len(cmp) > 1:
		nums := make([]string, len(cmp))
		for k, i := range cmp {
			nums[k] = fmt.Sprint(m.mirrors[i].num)
		}
		t += " ─ compare " + strings.Join(nums, " ↔ ")
	}
	if n := len(m.matrix.Data().Versions); n > 0 {
		t += fmt.Sprintf(" ─ %d versions", n)
	}
	return t
}

func (m Model) matrixLines() []string {
	s := m.styles
	if !m.hasCurrent {
		return m.emptyLines()
	}
	if len(m.matrix.Data().Versions) > 0 {
		lines := strings.Split(m.matrix.View(), "\n")
		if m.loadingCurrent() {
			lines[len(lines)-1] = m.spinner.View() + " listing… " + lines[len(lines)-1]
		}
		return lines
	}
	if m.loadingCurrent() {
		return []string{" " + m.spinner.View() + " listing versions and archives…"}
	}
	var lines []string
	for _, i := range m.comparedList() {
		if l := m.listingOf(m.current, i); l != nil && l.state == stateFailed {
			lines = append(lines, s.Bad.Render(fmt.Sprintf(" ✗ [%d] %v", m.mirrors[i].num, l.err)))
		}
	}
	return append(lines, s.Dim.Render(" The compared mirrors hold no version of this provider"+m.filterNote()+"."))
}

func (m Model) filterNote() string {
	if !m.cfg.Selection.Versions.IsZero() {
		return " matching --version " + m.cfg.Selection.Versions.String()
	}
	return ""
}

func (m Model) loadingCurrent() bool {
	for _, i := range m.comparedList() {
		if l := m.listingOf(m.current, i); l == nil || l.state == stateLoading {
			return true
		}
	}
	return false
}

// emptyLines explains an empty screen: still listing, or nothing to list
// and what to do about it.
func (m Model) emptyLines() []string {
	s := m.styles
	var lines []string
	if len(m.mirrors) == 0 {
		return []string{s.Dim.Render(" None of the places given holds providers; m shows the modules.")}
	}
	for _, mi := range m.mirrors {
		switch {
		case !mi.listed:
			lines = append(lines, fmt.Sprintf(" %s listing providers in [%d] %s…", m.spinner.View(), mi.num, mi.Reader))
		case mi.err != nil:
			lines = append(lines, s.Bad.Render(fmt.Sprintf(" ✗ [%d] %v", mi.num, mi.err)))
		case mi.noCatalogue:
			lines = append(lines, s.Warn.Render(fmt.Sprintf(" [%d] %s cannot list its providers:", mi.num, mi.Reader)),
				s.Warn.Render("     name them with --provider HOST/NAMESPACE/TYPE"))
		case len(mi.providers) == 0:
			lines = append(lines, s.Dim.Render(fmt.Sprintf(" [%d] %s holds no providers", mi.num, mi.Reader)))
		}
	}
	return lines
}

func (m Model) statusView() string {
	s := m.styles
	t := m.status.text
	switch m.status.kind {
	case statusBad:
		t = s.Bad.Render(t)
	case statusWarn:
		t = s.Warn.Render(t)
	}
	return theme.Fit(" "+t, m.w)
}

// paneKeys is the focused pane's help, or the dialog's.
func (m Model) paneKeys() help.KeyMap {
	if m.dialog != nil || m.mod.dialog != nil {
		k := m.dkeys
		k.force = m.dialog != nil && m.dialog.confirm || m.mod.dialog != nil && m.mod.dialog.confirm
		return k
	}
	switch {
	case m.view == viewModules && m.focus == paneProviders:
		return m.mod.list.Keys()
	case m.view == viewModules && m.focus == paneMatrix:
		return m.mod.table.Keys()
	}
	switch m.focus {
	case paneProviders:
		return m.providers.KeyMap()
	case paneMatrix:
		return m.matrix.KeyMap()
	}
	return m.jobs.Keys()
}

func (m Model) helpView() string {
	if m.dialog != nil || m.mod.dialog != nil {
		return " " + m.help.ShortHelpView(m.paneKeys().ShortHelp())
	}
	// Cut to the screen: help adds an item past its width when the
	// ellipsis does not fit, and a wrapped last line breaks the layout.
	return theme.Truncate(" "+m.help.ShortHelpView(mergedKeys{m.paneKeys(), m.globalKeys()}.ShortHelp()), m.w)
}

// fullHelpLines is every key of the focused pane, then the global keys
// beside the legend of the marks.
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
	pane := indent(h.FullHelpView(m.paneKeys().FullHelp()))
	global := indent(h.FullHelpView(m.globalKeys().FullHelp()))
	var legend []string
	if m.view == viewModules {
		legend = []string{"   Marks, one per compared place:"}
		for _, mk := range modtable.LegendMarks() {
			legend = append(legend, "     "+m.styles.Glyphs[mk]+" "+modtable.MarkLabel(mk))
		}
	} else {
		legend = []string{"   Marks, one per compared mirror:"}
		for _, mk := range []theme.Mark{theme.MarkOK, theme.MarkUnverified, theme.MarkMissing, theme.MarkDiffers, theme.MarkLoading, theme.MarkError} {
			legend = append(legend, "     "+m.styles.Glyphs[mk]+" "+mk.Label())
		}
	}
	out := append([]string{m.styles.Bold.Render(" " + m.paneName())}, pane...)
	out = append(out, "", m.styles.Bold.Render(" Everywhere"))
	gw := 0
	for _, l := range global {
		gw = max(gw, theme.Width(l))
	}
	for i := range max(len(global), len(legend)) {
		g, l := "", ""
		if i < len(global) {
			g = global[i]
		}
		if i < len(legend) {
			l = legend[i]
		}
		out = append(out, theme.Fit(g, gw)+l)
	}
	return out
}

func (m Model) paneName() string {
	switch {
	case m.dialog != nil || m.mod.dialog != nil:
		return "Queue dialog"
	case m.view == viewModules && m.focus == paneProviders:
		return "Modules"
	case m.view == viewModules && m.focus == paneMatrix:
		return "Module versions"
	case m.focus == paneProviders:
		return "Providers"
	case m.focus == paneMatrix:
		return "Matrix"
	}
	return "Jobs"
}
