package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The mouse: a click focuses the pane under it and acts there (the list
// shows the provider clicked, the grid moves its cursor to the cell
// clicked and, once it has the focus, a click on the cursor's cell
// selects it, the jobs pane puts its cursor
// on the job); the wheel moves the cursor of the pane under the pointer,
// or scrolls Details, the events and help. View turns the terminal's mouse
// reporting on (all motion: the pointer resting on a place in the header
// or a row of the list shows its full name on the status line).

// wheelStep is how many rows one notch of the wheel moves.
const wheelStep = 1

// paneAt is the pane drawn at (x, y) of the screen, and (x, y) inside its
// box, its border left out (-1 or the box's width on the border itself).
func (m Model) paneAt(x, y int) (p pane, ix, iy int, ok bool) {
	l := m.lay
	y-- // the header
	if m.w == 0 || l.tooTiny || y < 0 || x < 0 || x >= m.w {
		return 0, 0, 0, false
	}
	switch {
	case x < l.leftW && y < l.provH:
		return paneProviders, x - 1, y - 1, true
	case x < l.leftW && l.details && y < l.provH+l.detailsH:
		return paneDetails, x - 1, y - l.provH - 1, true
	case x >= l.leftW && y < l.matrixH:
		return paneMatrix, x - l.leftW - 1, y - 1, true
	case x >= l.leftW && y < l.matrixH+l.jobsH:
		return paneJobs, x - l.leftW - 1, y - l.matrixH - 1, true
	}
	return 0, 0, 0, false
}

// updateMouse handles a click or a turn of the wheel. Whatever holds the
// keyboard (the queue dialog, a question, a filter being typed) holds the
// mouse too: it is left alone until that is done.
func (m *Model) updateMouse(msg tea.MouseMsg) tea.Cmd {
	ms := msg.Mouse()
	if m.dialog != nil || m.confirmQuit || m.quitting {
		return nil
	}
	if m.preview != nil {
		// C's preview scrolls with the wheel, as help does.
		if _, wheel := msg.(tea.MouseWheelMsg); wheel {
			m.updatePreview(wheelKey(ms.Button))
		}
		return nil
	}
	if m.showHelp {
		if _, wheel := msg.(tea.MouseWheelMsg); wheel {
			m.updateHelpScreen(wheelKey(ms.Button))
		}
		return nil
	}
	if m.focus != paneJobs && m.view().typing(m.focus) {
		return nil
	}
	if _, click := msg.(tea.MouseClickMsg); click && ms.Y == 0 && ms.Button == tea.MouseLeft {
		// The header: the place clicked, named in full.
		if p, ok := m.headerPlaceAt(ms.X); ok {
			m.setStatus(statusInfo, fmt.Sprintf("[%d] %s", p.num, placeLabel(p)))
		}
		return nil
	}
	p, x, y, ok := m.paneAt(ms.X, ms.Y)
	if !ok {
		return nil
	}
	switch msg.(type) {
	case tea.MouseClickMsg:
		if ms.Button != tea.MouseLeft {
			return nil
		}
		return m.click(p, x, y)
	case tea.MouseWheelMsg:
		return m.wheel(p, ms.Button)
	}
	return nil
}

// click focuses pane p and acts on (x, y) inside it.
func (m *Model) click(p pane, x, y int) tea.Cmd {
	if p == paneDetails && !m.details.Scrolls() {
		return nil // nothing to do in Details that fit their pane
	}
	focused := m.focus == p
	m.setFocus(p)
	switch p {
	case paneProviders, paneMatrix:
		// A first click on a pane focuses it and moves its cursor; a
		// click on its cursor's cell once it has the focus selects.
		return m.view().click(p, x, y, focused)
	case paneJobs:
		if !m.showEvents {
			m.jobs.Click(y)
		}
	}
	return nil
}

// wheel moves the cursor of pane p, or scrolls it, a notch up or down.
func (m *Model) wheel(p pane, b tea.MouseButton) tea.Cmd {
	n := wheelStep
	switch b {
	case tea.MouseWheelUp:
		n = -n
	case tea.MouseWheelDown:
	default:
		return nil // sideways
	}
	switch {
	case p == paneProviders || p == paneMatrix:
		return m.view().scroll(p, n)
	case p == paneDetails:
		m.details, _ = m.details.Update(wheelKey(b))
	case p == paneJobs && m.showEvents:
		m.events, _ = m.events.Update(wheelKey(b))
	case p == paneJobs:
		m.jobs.Scroll(n)
	}
	return nil
}

// wheelKey is the arrow key a notch of the wheel stands for, for the panes
// that scroll by keys.
func wheelKey(b tea.MouseButton) tea.KeyPressMsg {
	if b == tea.MouseWheelUp {
		return tea.KeyPressMsg{Code: tea.KeyUp}
	}
	return tea.KeyPressMsg{Code: tea.KeyDown}
}

// hoverName is the full name of what the pointer at ms rests on, where the
// screen shortens it: a place in the header ("[3] /srv/mirrors/secondary
// (fs)"), a provider or module of the list; "" elsewhere, and while
// something else holds the keyboard.
func (m Model) hoverName(ms tea.Mouse) string {
	if m.dialog != nil || m.preview != nil || m.showHelp || m.confirmQuit || m.quitting {
		return ""
	}
	if ms.Y == 0 {
		p, ok := m.headerPlaceAt(ms.X)
		if !ok || strings.Contains(ansi.Strip(m.headerView()), "] "+p.name+" ") {
			return "" // named in full already
		}
		return fmt.Sprintf("[%d] %s", p.num, placeLabel(p))
	}
	if p, _, y, ok := m.paneAt(ms.X, ms.Y); ok && p == paneProviders {
		if h, ok := m.view().(interface{ hoverName(y int) string }); ok {
			return h.hoverName(y)
		}
	}
	return ""
}
