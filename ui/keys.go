package ui

import (
	"fmt"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/queue"
)

// KeyMap is the keys that work whichever pane has focus.
type KeyMap struct {
	NextPane, PrevPane key.Binding
	Details            key.Binding
	Events             key.Binding
	Compare            key.Binding
	Modules            key.Binding
	SpecGaps           key.Binding
	Reload             key.Binding
	LockGaps           key.Binding
	LockFill           key.Binding
	Copy               key.Binding
	Help               key.Binding
	Quit, ForceQuit    key.Binding
}

// DefaultKeyMap returns the global keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NextPane:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Details:   key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "details")),
		Events:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		Compare:   key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "compare mirror")),
		Modules:   key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "modules")),
		SpecGaps:  key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "queue the spec's gaps")),
		Reload:    key.NewBinding(key.WithKeys("ctrl+r", "f5"), key.WithHelp("ctrl+r", "list places again")),
		LockGaps:  key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "queue lock gaps")),
		LockFill:  key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "complete locks")),
		Copy:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy hash")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.SpecGaps, k.LockGaps, k.LockFill, k.NextPane, k.Modules, k.Events, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.NextPane, k.PrevPane, k.Details, k.Compare, k.Modules}, {k.SpecGaps, k.LockGaps, k.LockFill, k.Copy, k.Events, k.Reload, k.Help, k.Quit, k.ForceQuit}}
}

// helpScreenKeys is the keys of the help screen: it scrolls where it is
// taller than the terminal (60x16 is), and closes.
type helpScreenKeys struct {
	list.Nav
	Close key.Binding
	// bar is what the key bar says of them, short enough for 60 columns.
	bar []key.Binding
}

func defaultHelpScreenKeys() helpScreenKeys {
	shown := func(k, what string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, what)) }
	return helpScreenKeys{
		Nav:   list.DefaultNav("top", "end"),
		Close: key.NewBinding(key.WithKeys("?", "esc", "q"), key.WithHelp("?/esc", "close")),
		bar:   []key.Binding{shown("↑/↓", "scroll"), shown("pgup/pgdn", "page"), shown("g/G", "top/end")},
	}
}

// ShortHelp implements help.KeyMap.
func (k helpScreenKeys) ShortHelp() []key.Binding {
	return append(k.bar[:len(k.bar):len(k.bar)], k.Close)
}

// FullHelp implements help.KeyMap.
func (k helpScreenKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// globalKeys is the global keys as help shows them: m names the view it
// switches to, and is left out where there is no Modules view (it still
// answers, with a hint).
func (m Model) globalKeys() KeyMap {
	k := m.keys
	switch {
	case m.views[viewModules] == nil:
		k.Modules.SetEnabled(false)
	case m.active == viewModules:
		k.Modules.SetHelp("m", "providers")
	}
	if m.showEvents {
		k.Events.SetHelp("e", "jobs")
	}
	return k
}

// paneKeys is the focused pane's help, or the dialog's.
func (m Model) paneKeys() help.KeyMap {
	switch {
	case m.preview != nil:
		return m.preview.keys
	case m.dialog != nil:
		return m.dialog.HelpKeys()
	case m.focus == paneDetails:
		return m.details.Keys()
	case m.focus == paneJobs && m.showEvents:
		return m.events.Keys()
	case m.focus == paneJobs:
		return m.jobs.Keys()
	}
	return m.view().helpKeys(m.focus)
}

// updateKey handles a key: first whatever holds the keyboard (a question,
// the dialog, help, a filter being typed), then the global keys, then the
// focused pane.
func (m *Model) updateKey(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.ForceQuit):
		m.interrupt()
		return m.quit()
	case m.confirmQuit && !m.jobs.Tracker().Unfinished():
		// The jobs ended while the question was asked: it is moot, and
		// this key is not an answer to it.
		m.confirmQuit = false
		return m.updateKey(k)
	case m.confirmQuit:
		m.confirmQuit = false
		if k.String() == "y" || k.String() == "enter" {
			// Confirmed: the jobs are cancelled and said, as Ctrl-C says
			// them, and the exit code is 130.
			m.interrupt()
			return m.quit()
		}
		m.setStatus(statusInfo, "")
		return nil
	case m.preview != nil:
		return m.updatePreview(k)
	case m.dialog != nil:
		return m.updateDialog(k)
	case m.showHelp:
		m.updateHelpScreen(k)
		return nil
	case m.focus != paneJobs && m.view().typing(m.focus):
		return m.view().key(m.focus, k)
	}
	if cmd, ok := m.updateGlobal(k); ok {
		return cmd
	}
	return m.updatePane(k)
}

// updateGlobal handles the keys that work in every pane; ok reports
// whether k is one.
func (m *Model) updateGlobal(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	switch {
	case key.Matches(k, m.keys.Quit):
		if m.jobs.Tracker().Unfinished() {
			c := m.jobs.Tracker().Counts()
			m.confirmQuit = true
			m.setStatus(statusWarn, fmt.Sprintf("%d job(s) running, %d queued: quit and cancel them? y/n", c[engine.Running], c[engine.Queued]))
			return nil, true
		}
		return m.quit(), true
	case key.Matches(k, m.keys.Help):
		m.showHelp, m.helpTop = true, 0
	case key.Matches(k, m.keys.NextPane):
		m.cycleFocus(1)
	case key.Matches(k, m.keys.PrevPane):
		m.cycleFocus(numPanes - 1)
	case key.Matches(k, m.keys.Details):
		m.detailsPref = 1
		if m.lay.details {
			m.detailsPref = -1
		}
		m.relayout()
	case key.Matches(k, m.keys.Events):
		m.showEvents = !m.showEvents
		m.relayout()
	case key.Matches(k, m.keys.Compare):
		m.view().toggleCompared(int(k.String()[0] - '0'))
	case key.Matches(k, m.keys.Modules):
		m.toggleView()
	case key.Matches(k, m.keys.SpecGaps):
		return m.planSpecGaps(), true
	case key.Matches(k, m.keys.Reload):
		return m.reload(), true
	case key.Matches(k, m.keys.LockGaps):
		m.openLockGaps()
	case key.Matches(k, m.keys.LockFill):
		return m.startLockFill(), true
	case key.Matches(k, m.keys.Copy):
		return m.copyNext(), true
	default:
		return nil, false
	}
	return nil, true
}

// updateHelpScreen closes the help screen, or scrolls it.
func (m *Model) updateHelpScreen(k tea.KeyPressMsg) {
	if key.Matches(k, m.helpKeys.Close) {
		m.showHelp = false
		return
	}
	rows := m.helpRows()
	last := max(0, len(m.fullHelpLines())-rows)
	c := list.Cursor{Pos: m.helpTop}
	if m.helpKeys.Move(&c, k, last+1, max(1, rows-1)) {
		m.helpTop = max(0, min(c.Pos, last))
	}
}

// updatePane hands a key to the focused pane; enter in the list opens the
// grid, and in the grid opens the queue dialog.
func (m *Model) updatePane(k tea.KeyPressMsg) tea.Cmd {
	v := m.view()
	switch {
	case m.focus == paneDetails:
		m.details, _ = m.details.Update(k)
		return nil
	case m.focus == paneJobs && m.showEvents:
		m.events, _ = m.events.Update(k)
		return nil
	case m.focus == paneJobs && key.Matches(k, m.jobs.Keys().Cancel):
		return m.cancelJob()
	case m.focus == paneJobs && key.Matches(k, m.jobs.Keys().Retry):
		return m.retryJobs()
	case m.focus == paneJobs:
		var cmd tea.Cmd
		m.jobs, cmd = m.jobs.Update(k)
		return cmd
	case m.focus == paneProviders && v.opens(k):
		m.setFocus(paneMatrix)
		return nil
	case m.focus == paneMatrix && v.queues(k):
		if req, ok := v.queue(); ok {
			d := queue.New(req)
			m.dialog = &d
		}
		return nil
	}
	return v.key(m.focus, k)
}

// updateDialog hands a key to the queue dialog, and queues what it
// confirms.
func (m *Model) updateDialog(k tea.KeyPressMsg) tea.Cmd {
	d, action := m.dialog.Update(k)
	switch action {
	case queue.Cancel:
		m.dialog = nil
	case queue.Queue:
		m.dialog = nil
		return m.enqueue(d)
	default:
		m.dialog = &d
	}
	return nil
}

func (m *Model) setFocus(p pane) {
	if pv, ok := m.views[viewProviders].(interface{ providers() *providersView }); ok && m.active == viewProviders && m.focus == paneProviders && p != paneProviders {
		pv.providers().list.Hold() // the user went on with the provider under the cursor
	}
	m.focus = p
	m.jobs.Focus(p == paneJobs)
	m.details.Focused = p == paneDetails
}

// cycleFocus moves the focus by step panes, round. Details take the focus
// last, and only while they are shown and taller than their pane: there is
// nothing else to do in them.
func (m *Model) cycleFocus(step pane) {
	p := m.focus
	for range numPanes {
		p = (p + step) % numPanes
		if p != paneDetails || m.lay.details && m.details.Scrolls() {
			break
		}
	}
	m.setFocus(p)
}

// toggleView switches the list and the grid between providers and modules.
func (m *Model) toggleView() {
	if m.views[viewModules] == nil {
		m.setStatus(statusInfo, "no modules: open the UI with --module NAMESPACE/NAME/SYSTEM to compare module places")
		return
	}
	m.active = (m.active + 1) % numViews
	m.jobs.Empty = m.view().words().jobsEmpty
}
