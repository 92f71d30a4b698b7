package ui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/events"
	"github.com/tfmirror/tfmirror/ui/jobs"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// Mirror is one place the UI shows.
type Mirror struct {
	Reader backends.Reader
	// Kind labels it in the header: fs, net, oci, registry.
	Kind string
	// Number is how the header numbers it; 0 numbers mirrors by position,
	// from 1. Give the same number to a Mirror and a ModulePlace opened
	// from one argument.
	Number int
	// Aside: not compared when the UI opens (its number key compares it);
	// otherwise the first four places are.
	Aside bool
	// Scope is which providers the CLI configuration installs from the
	// mirror, when the UI opened it from there; nil: every one. The cells
	// of a provider it leaves out show as not applicable, not missing.
	Scope *Scope
}

// Scope is the include and exclude patterns of a provider_installation
// method.
type Scope struct {
	Include, Exclude []cliconfig.Pattern
	// DefaultHosts are what a pattern written without a hostname can
	// mean: the default registry of each client that reads the file
	// (registry.terraform.io for Terraform, registry.opentofu.org for
	// OpenTofu). Empty: either.
	DefaultHosts []string
}

// Installs reports whether some client reading the configuration would
// install p from the mirror.
func (s *Scope) Installs(p backends.Provider) bool {
	if s == nil {
		return true
	}
	hosts := s.DefaultHosts
	if len(hosts) == 0 {
		hosts = []string{"registry.terraform.io", "registry.opentofu.org"}
	}
	m := cliconfig.Method{Include: s.Include, Exclude: s.Exclude}
	for _, h := range hosts {
		if m.Selects(p, h) {
			return true
		}
	}
	return false
}

// Config is what the UI opens on.
type Config struct {
	Mirrors []Mirror
	// Selection narrows what is shown and names providers for places that
	// cannot list theirs; Selection.Versions narrows modules' versions too.
	Selection sync.Selection
	// Engine runs the UI's jobs, provider transfers and module packages
	// alike; it is required. The caller starts it, one per process; the UI
	// stops it when it quits (see Shutdown).
	Engine *engine.Engine
	// NoAnimation keeps the spinner still, for tests and recordings.
	NoAnimation bool
	// Modules is the Modules view (m).
	Modules ModulesConfig
	// Spec, when set, is the spec the UI was opened on (tfmirror ui
	// --spec): its destinations and sources are among Mirrors.
	Spec *Spec
	// Locks, when set, are the lock files the UI opened on (ui --lock,
	// --from): the Providers view shows what they lock (see Locks).
	Locks *Locks
}

// Spec is a mirror spec resolved against its sources: the Providers view
// shows the versions it wants even where no destination holds them yet,
// and S queues every gap.
type Spec struct {
	// Path names the spec file.
	Path string
	// Wanted is the spec resolved with the readers of Mirrors: each
	// Resolved.Source is one of them.
	Wanted *spec.Wanted
	// Dests are, for each of Wanted.Destinations, its index in Mirrors.
	Dests []int
}

type pane int

const (
	paneProviders pane = iota // the list of the view shown
	paneMatrix                // its grid
	paneJobs                  // the jobs, or the events in their place
	paneDetails               // only while Details are shown, to scroll them
	numPanes
)

type statusKind int

const (
	statusInfo statusKind = iota
	statusWarn
	statusBad
)

type status struct {
	text string
	kind statusKind
}

// Model is the root of the UI: the frame around the view shown, the jobs
// pane, Details, the queue dialog, and the engine.
type Model struct {
	sh     *shell
	cfg    Config
	styles *theme.Styles
	keys   KeyMap
	// helpKeys scroll and close the help screen.
	helpKeys helpScreenKeys
	engine   *engine.Engine

	// views are the Providers and Modules views; the Modules view is nil
	// when no module is named.
	views  [numViews]view
	active viewKind
	// nums numbers places by name, for jobs and Details.
	nums map[string]int

	jobs    jobs.Model
	events  events.Model
	details details.Model
	dialog  *queue.Model
	// preview is C's preview of what it adds to the lock files.
	preview *fillPreview
	help    help.Model
	spinner spinner.Model

	spinning    bool
	focus       pane
	showEvents  bool // the events pane in place of the jobs pane
	detailsPref int  // 0: by terminal size; 1: shown; -1: folded
	showHelp    bool
	// copySubject is what Details showed when y last copied, and
	// copyNextAt the index of what y copies next of it.
	copySubject string
	copyNextAt  int
	helpTop     int // the help screen's first line on screen
	confirmQuit bool
	quitting    bool
	// hover is the full name of what the pointer rests on (a place in
	// the header, a list row), shown in place of the status line.
	hover string
	w, h  int
	lay   layout
	// queueActive is set from the first job queued until the engine says
	// Idle, which comes after the last job's index documents are written.
	queueActive bool
	// relisting: ctrl+r asked for every listing again; the status line
	// says so until they are in.
	relisting bool
	// interrupted is what Ctrl-C interrupted; Run reports it.
	interrupted *interruption
}

// New builds the UI over cfg's places and cfg.Engine, which the caller
// started; the UI stops it when it quits.
func New(ctx context.Context, cfg Config) Model {
	styles := theme.New()
	sh := &shell{ctx: ctx, styles: &styles, versions: cfg.Selection.Versions, log: &events.Log{}}
	m := Model{sh: sh, cfg: cfg, styles: &styles, keys: DefaultKeyMap(), helpKeys: defaultHelpScreenKeys(), engine: cfg.Engine, nums: map[string]int{}}
	m.keys.SpecGaps.SetEnabled(cfg.Spec != nil)
	m.keys.LockGaps.SetEnabled(cfg.Locks != nil)
	m.keys.LockFill.SetEnabled(cfg.Locks != nil)
	m.views[viewProviders] = newView(sh, cfg)
	if mods := newModulesView(sh, cfg.Modules); mods != nil {
		m.views[viewModules] = mods
		if cfg.Modules.ShowFirst {
			m.active = viewModules
		}
	}
	for _, v := range m.views {
		if v == nil {
			continue
		}
		for _, p := range v.header() {
			if _, dup := m.nums[p.name]; !dup {
				m.nums[p.name] = p.num
			}
		}
	}
	m.jobs = jobs.New(m.styles, m.nums)
	m.jobs.Empty = m.view().words().jobsEmpty
	m.events = events.New(m.styles, sh.log)
	m.details = details.New(m.styles)
	m.help = help.New()
	m.help.Styles = styles.Help
	m.spinner = spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(styles.Info))
	m.jobs.Spin, sh.spin = m.spinner.View(), m.spinner.View()
	return m
}

// view is the view shown.
func (m Model) view() view { return m.views[m.active] }

// Shutdown cancels listings and the engine's jobs and waits for the engine
// to stop, so no staging file outlives the UI. Run calls it; tests that
// drive a Model directly call it too.
func (m Model) Shutdown() {
	for _, v := range m.views {
		if v != nil {
			v.shutdown()
		}
	}
	m.engine.Stop()
	// The jobs' last events (cancelled) reach the tracker, for Run to say
	// what an interrupt cancelled.
	for ev := range m.engine.Events() {
		m.jobs.Tracker().Apply(ev)
	}
}

// Init lists the places and starts listening to the engine.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{waitForEvent(m.engine.Events())}
	for _, v := range m.views {
		if v != nil {
			cmds = append(cmds, v.Init())
		}
	}
	return tea.Batch(cmds...)
}

// Update routes each message to its handler, then points Details at what
// is under the cursor and keeps the spinner turning while anything is
// under way.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.relayout()
	case tea.MouseMotionMsg:
		m.hover = m.hoverName(msg.Mouse())
		return m, nil
	case tea.KeyPressMsg:
		m.hover = ""
		cmd = m.updateKey(msg)
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		m.hover = ""
		cmd = m.updateMouse(msg.(tea.MouseMsg))
	case viewMsg:
		cmd = m.views[msg.target()].update(msg)
	case engineEventMsg:
		cmd = m.updateEngine(msg.ev)
	case specGapsMsg:
		m.openSpecGaps(msg)
	case fillMsg:
		cmd = m.updateFill(msg)
	case enqueuedMsg:
		m.sh.setStatus(statusInfo, fmt.Sprintf("queued %d %s to %s", len(msg.ids), msg.jobs, msg.dest))
	case engineClosedMsg:
		return m, tea.Quit
	case spinner.TickMsg:
		return m.updateSpinner(msg)
	}
	if m.relisting && !m.busy() {
		m.relisting = false
		if m.sh.status.kind == statusInfo {
			m.setStatus(statusInfo, "listed every place again")
		}
	}
	m.refreshDetails()
	return m, tea.Batch(cmd, m.startSpinner())
}

// View draws the screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	// Clicks, the wheel and the pointer's motion, for hover (see mouse.go).
	v.MouseMode = tea.MouseModeAllMotion
	v.WindowTitle = "tfmirror"
	return v
}

func (m *Model) setStatus(kind statusKind, text string) { m.sh.setStatus(kind, text) }

// placeLabel names a place as "[n] name".
func (m *Model) placeLabel(name string) string {
	if n, ok := m.nums[name]; ok {
		return fmt.Sprintf("[%d] %s", n, name)
	}
	return name
}

// refreshDetails points Details at the job or the item under the cursor.
func (m *Model) refreshDetails() {
	if m.focus == paneDetails {
		return // being read: it stays on what it shows
	}
	if m.focus == paneJobs && !m.showEvents {
		if j, ok := m.jobs.Selected(); ok {
			m.details.ShowJob(j, m.placeLabel(j.Info.Src), m.placeLabel(j.Info.Dst))
			return
		}
	}
	if d, ok := m.view().(detailer); ok {
		if c, ok := d.cursor(); ok {
			d.showDetails(&m.details, c)
			return
		}
	}
	m.details.Clear()
}

// --- the engine ---------------------------------------------------------------

// updateEngine folds an engine event into the jobs pane, tells both views
// (a landed job changes what a place holds) and keeps the status line.
func (m *Model) updateEngine(ev engine.Event) tea.Cmd {
	cmds := []tea.Cmd{waitForEvent(m.engine.Events())}
	j := m.jobs.Apply(ev)
	for _, v := range m.views {
		if w, ok := v.(jobWatcher); ok {
			cmds = append(cmds, w.jobEvent(j, ev))
		}
	}
	if m.confirmQuit && !m.jobs.Tracker().Unfinished() {
		// Nothing left to cancel: the question is moot, and the next q
		// must quit, not answer it.
		m.confirmQuit = false
		m.setStatus(statusInfo, "the jobs have ended: q quits")
	}
	switch ev := ev.(type) {
	case engine.JobQueued:
		m.queueActive = true
	case engine.JobFailed:
		if j != nil && !ev.Canceled {
			m.sh.problem(statusBad, "✗ "+jobTitle(j)+": "+jobs.Reason(ev.Err), jobTitle(j)+" → "+m.placeLabel(j.Info.Dst)+": "+ev.Err.Error())
		}
	case engine.IndexWritten:
		if ev.Err != nil {
			m.sh.problem(statusBad, "✗ "+ev.Err.Error(), "")
		}
	case engine.Idle:
		m.queueActive = false
		m.idleStatus()
	}
	return tea.Batch(cmds...)
}

// jobTitle names a job's package in the status line.
func jobTitle(j *engine.TrackedJob) string {
	if j.Info.Name != "" {
		return j.Info.Label()
	}
	p := j.Info.Package
	return p.Provider.ShortString() + " " + p.Version.String() + " " + p.Platform.String()
}

// idleStatus sums up the jobs once the engine is idle.
// A failure redone (the same package to the same place landed by a later
// job, as f or R does it) is no longer counted: the line says so.
func (m *Model) idleStatus() {
	tr := m.jobs.Tracker()
	c := tr.Counts()
	redone := redoneFailures(tr)
	failed := c[engine.Failed] - redone
	kind := statusInfo
	if failed > 0 {
		kind = statusBad
	}
	text := fmt.Sprintf("queue idle: %d done, %d failed, %d canceled", c[engine.Done], failed, c[engine.Canceled])
	if redone > 0 {
		text += fmt.Sprintf(" (%d failed, then redone)", redone)
	}
	if !m.quitting {
		m.setStatus(kind, text)
	}
}

// redoneFailures counts the failed jobs whose package a later job landed
// in the same place.
func redoneFailures(tr *engine.Tracker) int {
	type key struct{ label, dst string }
	landed := map[key]int{} // the last position a job of the key landed at
	for i, id := range tr.Order {
		if j := tr.Jobs[id]; j.State == engine.Done {
			landed[key{j.Info.Label(), j.Info.Dst}] = i
		}
	}
	n := 0
	for i, id := range tr.Order {
		j := tr.Jobs[id]
		if last, ok := landed[key{j.Info.Label(), j.Info.Dst}]; ok && j.State == engine.Failed && last > i {
			n++
		}
	}
	return n
}

// cancelJob and retryJob act on the job under the jobs pane's cursor.
func (m *Model) cancelJob() tea.Cmd {
	j, ok := m.jobs.Selected()
	if !ok || (j.State != engine.Queued && j.State != engine.Running) {
		return nil
	}
	id, eng := j.Info.ID, m.engine
	return jobCmd(func() { eng.Cancel(id) })
}

// retryJobs retries every failed and canceled job, as R says, wherever
// the cursor is.
func (m *Model) retryJobs() tea.Cmd {
	tr := m.jobs.Tracker()
	var ids []engine.JobID
	for _, id := range tr.Order {
		if st := tr.Jobs[id].State; st == engine.Failed || st == engine.Canceled {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		m.setStatus(statusInfo, "R retries the failed and canceled jobs: there are none")
		return nil
	}
	m.setStatus(statusInfo, fmt.Sprintf("retrying %d failed or canceled job(s)", len(ids)))
	eng := m.engine
	return jobCmd(func() {
		for _, id := range ids {
			eng.Retry(id)
		}
	})
}

// reload lists every place of both views again (ctrl+r), after a sync
// from elsewhere changed them; the listings run in commands.
func (m *Model) reload() tea.Cmd {
	var cmds []tea.Cmd
	for _, v := range m.views {
		if v != nil {
			cmds = append(cmds, v.reload())
		}
	}
	m.setStatus(statusInfo, "listing every place again…")
	m.relisting = true
	return tea.Batch(cmds...)
}

// enqueue hands what the dialog confirmed to the engine.
func (m *Model) enqueue(d queue.Model) tea.Cmd {
	tasks, words := d.Tasks(), d.Words()
	if len(tasks) == 0 {
		why := words.Nothing
		if n := d.Plan().Nothing; n != "" {
			why = n
		}
		m.setStatus(statusInfo, "nothing to queue: "+why)
		return nil
	}
	m.view().queued()
	label := d.Dest().Label()
	if words.From {
		label = "the mirrors that lack them, from " + label
	}
	m.setStatus(statusInfo, fmt.Sprintf("queueing %d %s to %s…", len(tasks), words.Jobs, label))
	return enqueueCmd(m.sh.ctx, m.engine, tasks, label, words.Jobs)
}

// quit stops at once when the engine is idle; otherwise it stops the
// engine and waits for it to say it has (engineClosedMsg), so staging files
// are cleaned up, and the index documents of what landed written, before
// the program exits. Those are written after the last job ends: a queue
// whose jobs are all done is not idle yet. However long that takes (a
// registry that stopped answering), a second q quits at once.
func (m *Model) quit() tea.Cmd {
	if m.quitting || !m.queueActive && !m.jobs.Tracker().Unfinished() {
		return tea.Quit
	}
	m.quitting = true
	what := "writing the index documents of what landed"
	if m.jobs.Tracker().Unfinished() {
		what = "canceling jobs"
	}
	m.setStatus(statusWarn, what+"… (q again quits now)")
	return jobCmd(m.engine.Stop)
}

// --- spinner ----------------------------------------------------------------

// busy reports whether anything is under way that the spinner should show.
func (m Model) busy() bool {
	if m.quitting || m.queueActive || m.jobs.Tracker().Unfinished() {
		return true
	}
	for _, v := range m.views {
		if v != nil && v.busy() {
			return true
		}
	}
	return false
}

// startSpinner starts the spinner's ticks when something is under way.
func (m *Model) startSpinner() tea.Cmd {
	if m.spinning || m.cfg.NoAnimation || !m.busy() {
		return nil
	}
	m.spinning = true
	return m.spinner.Tick
}

func (m Model) updateSpinner(msg spinner.TickMsg) (tea.Model, tea.Cmd) {
	if m.cfg.NoAnimation {
		return m, nil
	}
	if !m.busy() {
		m.spinning = false // stop ticking until something starts
		return m, nil
	}
	var cmd tea.Cmd
	m.spinner, cmd = m.spinner.Update(msg)
	m.jobs.Spin, m.sh.spin = m.spinner.View(), m.spinner.View()
	return m, cmd
}
