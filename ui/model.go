// Package ui is tfmirror's terminal UI: mirrors, their providers, and for
// the chosen provider a platform matrix of what each mirror has, lacks, or
// has with different hashes; cells are queued to the sync engine, verified,
// and updated live as jobs land.
//
// Everything that blocks (listing, hashing, the engine) runs in tea.Cmds and
// comes back as messages; Update only folds them into state, View only
// draws it.
package ui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/jobs"
	"github.com/tfmirror/tfmirror/ui/matrix"
	"github.com/tfmirror/tfmirror/ui/providers"
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
}

// Config is what the UI opens on.
type Config struct {
	Mirrors []Mirror
	// Selection narrows what is shown and names providers for places that
	// cannot list theirs.
	Selection sync.Selection
	Engine    sync.Options
	// NoAnimation keeps the spinner still, for tests and recordings.
	NoAnimation bool
	// Modules is the Modules view (m); Selection.Versions narrows its
	// versions too.
	Modules ModulesConfig
}

type pane int

const (
	paneProviders pane = iota
	paneMatrix
	paneJobs
	numPanes
)

// mirrorInfo is a mirror and what is known of its catalogue.
type mirrorInfo struct {
	Mirror
	num         int // as the header numbers it, from 1
	writer      backends.Writer
	listed      bool // its catalogue arrived, or it has none
	noCatalogue bool
	err         error
	providers   []backends.Provider
}

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

type relistKey struct {
	mirror   int
	provider backends.Provider
}

// verifyBatch counts the results of the last `v`, for the status line.
type verifyBatch struct{ total, done, bad int }

// Model is the root of the UI.
type Model struct {
	ctx    context.Context
	cfg    Config
	styles *theme.Styles
	keys   KeyMap
	dkeys  dialogKeys

	mirrors  []*mirrorInfo
	compared []bool

	providers providers.Model
	matrix    matrix.Model
	jobs      jobs.Model
	details   details.Model
	help      help.Model
	spinner   spinner.Model
	spinning  bool

	focus       pane
	detailsPref int // 0: by terminal size; 1: shown; -1: folded
	showHelp    bool
	dialog      *queueDialog
	confirmQuit bool
	quitting    bool
	status      status
	w, h        int
	lay         layout

	current    backends.Provider
	hasCurrent bool
	cache      map[backends.Provider][]*listing
	verified   map[verifyKey]*verification
	verifying  map[verifyKey]bool
	batch      verifyBatch
	// queueActive is set from the first job queued until the engine says
	// Idle, which comes after the last job's index documents are written.
	queueActive bool
	gen         uint64
	loadToken   uint64
	loadCancel  context.CancelFunc
	dirty       map[relistKey]bool

	engine       *sync.Engine
	engineCancel context.CancelFunc
	slots        chan struct{}

	// view is what the left and centre panes show: providers or modules.
	view viewKind
	mod  moduleState
}

// New builds the UI over cfg's mirrors and starts its sync engine, which
// runs until ctx is cancelled or the UI quits (see Shutdown).
func New(ctx context.Context, cfg Config) Model {
	styles := theme.New()
	engCtx, engCancel := context.WithCancel(ctx)
	m := Model{
		ctx:          ctx,
		cfg:          cfg,
		styles:       &styles,
		keys:         DefaultKeyMap(),
		dkeys:        defaultDialogKeys(),
		cache:        map[backends.Provider][]*listing{},
		verified:     map[verifyKey]*verification{},
		verifying:    map[verifyKey]bool{},
		dirty:        map[relistKey]bool{},
		engine:       sync.NewEngine(engCtx, cfg.Engine),
		engineCancel: engCancel,
		slots:        make(chan struct{}, 4),
		loadCancel:   func() {},
	}
	dest := map[string]int{}
	for i, mr := range cfg.Mirrors {
		mi := &mirrorInfo{Mirror: mr, num: mr.Number}
		if mi.num == 0 {
			mi.num = i + 1
		}
		mi.writer, _ = mr.Reader.(backends.Writer)
		m.mirrors = append(m.mirrors, mi)
		m.compared = append(m.compared, i < 4)
		if _, dup := dest[mr.Reader.String()]; !dup {
			dest[mr.Reader.String()] = mi.num
		}
	}
	m.mod = newModuleState(engCtx, cfg.Modules, cfg.Engine, m.styles)
	for _, p := range m.mod.places {
		if _, dup := dest[p.Lister.String()]; !dup {
			dest[p.Lister.String()] = p.num
		}
	}

	m.providers = providers.New(m.styles)
	m.matrix = matrix.New(m.styles)
	m.jobs = jobs.New(m.styles, dest)
	if m.mod.enabled() && cfg.Modules.ShowFirst {
		m.view = viewModules
		m.jobs.Empty = moduleJobsEmpty
	}
	m.details = details.New(m.styles)
	m.help = help.New()
	m.help.Styles = styles.Help
	m.spinner = spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(styles.Info))
	m.jobs.Spin = m.spinner.View()
	return m
}

// Shutdown cancels the engine's jobs and waits for it to stop, so no
// staging file outlives the UI. Run calls it; tests that drive a Model
// directly call it too.
func (m Model) Shutdown() {
	m.loadCancel()
	m.engineCancel()
	m.engine.Close()
	for range m.engine.Events() {
	}
	m.mod.shutdown()
}

// Init lists every mirror's providers and starts listening to the engine.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{waitForEvent(m.engine.Events())}
	for i, mi := range m.mirrors {
		cmds = append(cmds, listProvidersCmd(m.ctx, i, mi.Reader))
	}
	cmds = append(cmds, m.initModules())
	return tea.Batch(append(cmds, m.startSpinner())...)
}

// Update routes each message to its handler.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.relayout()
		return m, nil
	case tea.KeyPressMsg:
		return m.updateKey(msg)
	case providersListedMsg:
		return m.updateProvidersListed(msg)
	case providerLoadedMsg:
		return m.updateProviderLoaded(msg)
	case loadTickMsg:
		if msg.token != m.loadToken || !m.hasCurrent {
			return m, nil // the cursor moved on
		}
		return m, m.startLoad(m.current)
	case relistTickMsg:
		return m, tea.Batch(m.relistDirty(), m.relistModules())
	case verifiedMsg:
		return m.updateVerified(msg)
	case engineEventMsg:
		return m.updateEngine(msg.ev)
	case engineClosedMsg:
		return m, tea.Quit
	case enqueuedMsg:
		m.setStatus(statusInfo, fmt.Sprintf("queued %d job(s) to %s", len(msg.ids), msg.dest))
		return m, nil
	case moduleMsg:
		return m.updateModules(msg)
	case quitTimeoutMsg:
		return m, tea.Quit
	case spinner.TickMsg:
		return m.updateSpinner(msg)
	}
	return m, nil
}

// View draws the screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "tfmirror"
	return v
}

func (m *Model) setStatus(kind statusKind, text string) { m.status = status{text: text, kind: kind} }

// --- keys -----------------------------------------------------------------

func (m Model) updateKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(k, m.keys.ForceQuit):
		return m.quit()
	case m.confirmQuit:
		m.confirmQuit = false
		if k.String() == "y" || k.String() == "enter" {
			return m.quit()
		}
		m.setStatus(statusInfo, "")
		return m, nil
	case m.dialog != nil:
		return m.updateDialog(k)
	case m.mod.dialog != nil:
		return m.updateModuleDialog(k)
	case m.showHelp:
		if key.Matches(k, m.keys.Help) || k.String() == "esc" || key.Matches(k, m.keys.Quit) {
			m.showHelp = false
		}
		return m, nil
	case m.typing():
		return m.updateFocused(k)
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		if m.jobs.Tracker().Unfinished() {
			c := m.jobs.Tracker().Counts()
			m.confirmQuit = true
			m.setStatus(statusWarn, fmt.Sprintf("%d job(s) running, %d queued: quit and cancel them? y/n", c[sync.Running], c[sync.Queued]))
			return m, nil
		}
		return m.quit()
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
		return m, nil
	case key.Matches(k, m.keys.NextPane):
		m.setFocus((m.focus + 1) % numPanes)
		return m, nil
	case key.Matches(k, m.keys.PrevPane):
		m.setFocus((m.focus + numPanes - 1) % numPanes)
		return m, nil
	case key.Matches(k, m.keys.Details):
		if m.lay.details {
			m.detailsPref = -1
		} else {
			m.detailsPref = 1
		}
		m.relayout()
		return m, nil
	case key.Matches(k, m.keys.Compare):
		num := int(k.String()[0] - '0')
		if m.view == viewModules {
			m.toggleModuleCompared(num)
		} else {
			m.toggleCompared(num)
		}
		return m, nil
	case key.Matches(k, m.keys.Modules):
		return m.toggleView()
	}
	if m.view == viewModules && m.focus != paneJobs {
		return m.updateModuleKey(k)
	}
	switch m.focus {
	case paneProviders:
		if key.Matches(k, m.providers.Keys().Open) {
			m.setFocus(paneMatrix)
			return m, nil
		}
	case paneMatrix:
		switch {
		case key.Matches(k, m.matrix.Keys().Queue):
			return m.openQueue()
		case key.Matches(k, m.matrix.Keys().Verify):
			return m.verifyTargets()
		}
	case paneJobs:
		switch {
		case key.Matches(k, m.jobs.Keys().Cancel):
			return m.cancelJob()
		case key.Matches(k, m.jobs.Keys().Retry):
			return m.retryJob()
		}
	}
	return m.updateFocused(k)
}

func (m Model) typing() bool {
	if m.view == viewModules {
		return false
	}
	return m.focus == paneProviders && m.providers.Typing() || m.focus == paneMatrix && m.matrix.Typing()
}

// updateFocused hands a key to the focused pane and follows what it did.
func (m Model) updateFocused(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch m.focus {
	case paneProviders:
		m.providers, cmd = m.providers.Update(k)
		if p, ok := m.providers.Selected(); ok && (!m.hasCurrent || p != m.current) {
			return m, tea.Batch(cmd, m.selectProvider(p, false))
		}
	case paneMatrix:
		m.matrix, cmd = m.matrix.Update(k)
	case paneJobs:
		m.jobs, cmd = m.jobs.Update(k)
	}
	m.refreshDetails()
	return m, cmd
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	m.jobs.Focus(p == paneJobs)
	m.refreshDetails()
}

// toggleCompared takes mirror number num in or out of the comparison.
func (m *Model) toggleCompared(num int) {
	i := -1
	for k, mi := range m.mirrors {
		if mi.num == num {
			i = k
		}
	}
	if i < 0 {
		return
	}
	n := 0
	for _, c := range m.compared {
		if c {
			n++
		}
	}
	if m.compared[i] && n == 1 {
		m.setStatus(statusWarn, "at least one mirror stays in the comparison")
		return
	}
	m.compared[i] = !m.compared[i]
	m.rebuild()
}

func (m Model) comparedList() []int {
	var out []int
	for i, c := range m.compared {
		if c {
			out = append(out, i)
		}
	}
	return out
}

// quit stops at once when nothing runs; otherwise it cancels the jobs and
// waits for the engine to say it has stopped (engineClosedMsg), so staging
// files are cleaned up before the program exits.
func (m Model) quit() (tea.Model, tea.Cmd) {
	if !m.jobs.Tracker().Unfinished() || m.quitting {
		return m, tea.Quit
	}
	m.quitting = true
	m.setStatus(statusWarn, "canceling jobs…")
	cancel, eng := m.engineCancel, m.engine
	return m, tea.Batch(
		jobCmd(func() { cancel(); eng.Close() }),
		tea.Tick(quitTimeout, func(_ time.Time) tea.Msg { return quitTimeoutMsg{} }),
	)
}

// --- providers and listings ----------------------------------------------

func (m Model) updateProvidersListed(msg providersListedMsg) (tea.Model, tea.Cmd) {
	mi := m.mirrors[msg.mirror]
	mi.listed = true
	switch {
	case errors.Is(msg.err, backends.ErrNoCatalogue):
		mi.noCatalogue = true
	case msg.err != nil:
		mi.err = msg.err
		m.setStatus(statusBad, fmt.Sprintf("[%d] %v", mi.num, msg.err))
	default:
		mi.providers = msg.providers
	}
	if len(msg.warnings) > 0 && m.status.kind != statusBad {
		m.setStatus(statusWarn, fmt.Sprintf("[%d] %d warning(s), first: %s (tfmirror ls %s lists them)",
			mi.num, len(msg.warnings), msg.warnings[0], mi.Reader))
	}
	m.providers.SetProviders(m.providerUnion())
	if !m.hasCurrent {
		if p, ok := m.providers.Selected(); ok {
			return m, m.selectProvider(p, true)
		}
	}
	return m, nil
}

// providerUnion is every provider some mirror lists, plus those the user
// named for the mirrors that cannot list theirs.
func (m *Model) providerUnion() []backends.Provider {
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	add := func(p backends.Provider) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, mi := range m.mirrors {
		for _, p := range mi.providers {
			add(p)
		}
	}
	listed := append([]backends.Provider(nil), out...)
	for _, f := range m.cfg.Selection.Providers {
		if f.Hostname != "" {
			if p, err := f.On(""); err == nil {
				add(p)
			}
			continue
		}
		found := false
		for _, p := range listed {
			if f.Matches(p) {
				found = true
			}
		}
		if !found {
			// The clients' default registry is the likeliest meaning of a
			// bare NAMESPACE/TYPE; the status line says how to choose.
			if p, err := f.On("registry.terraform.io"); err == nil {
				add(p)
				m.setStatus(statusWarn, fmt.Sprintf("provider %s: assuming %s (write HOST/%s to choose the host)", f, p, f))
			}
		}
	}
	backends.SortProviders(out)
	return out
}

// selectProvider shows p, loading it now or, while the cursor is still
// moving, a moment later.
func (m *Model) selectProvider(p backends.Provider, now bool) tea.Cmd {
	m.current, m.hasCurrent = p, true
	m.matrix.Reset()
	m.rebuild()
	if m.loaded(p) {
		return nil
	}
	if now {
		return m.startLoad(p)
	}
	m.loadToken++
	return loadTick(m.loadToken)
}

// listingOf returns mirror i's listing of p, nil when none was asked for.
func (m *Model) listingOf(p backends.Provider, i int) *listing {
	if ls := m.cache[p]; i < len(ls) {
		return ls[i]
	}
	return nil
}

// loaded reports whether every mirror's listing of p is in or on its way.
func (m *Model) loaded(p backends.Provider) bool {
	ls := m.cache[p]
	if ls == nil {
		return false
	}
	for _, l := range ls {
		if l == nil {
			return false
		}
	}
	return true
}

// startLoad lists p in every mirror that has not, cancelling what is still
// being listed for the provider shown before.
func (m *Model) startLoad(p backends.Provider) tea.Cmd {
	m.loadCancel()
	ctx, cancel := context.WithCancel(m.ctx)
	m.loadCancel = cancel
	ls := m.cache[p]
	if ls == nil {
		ls = make([]*listing, len(m.mirrors))
		m.cache[p] = ls
	}
	var cmds []tea.Cmd
	for i, mi := range m.mirrors {
		if ls[i] != nil {
			continue
		}
		m.gen++
		ls[i] = &listing{state: stateLoading, gen: m.gen}
		cmds = append(cmds, loadProviderCmd(ctx, m.gen, i, mi.Reader, p))
	}
	m.rebuild()
	return tea.Batch(append(cmds, m.startSpinner())...)
}

func (m Model) updateProviderLoaded(msg providerLoadedMsg) (tea.Model, tea.Cmd) {
	ls := m.cache[msg.provider]
	if ls == nil || ls[msg.mirror] == nil || ls[msg.mirror].gen != msg.gen {
		return m, nil // overtaken by a newer load
	}
	l := ls[msg.mirror]
	l.refreshing = false
	switch {
	case errors.Is(msg.err, context.Canceled):
		if l.state == stateLoading {
			ls[msg.mirror] = nil // list again when the provider is shown again
		}
		return m, nil
	case msg.err != nil && l.state == stateLoaded:
		// A refresh failed: keep what was listed, say why it is stale.
		m.setStatus(statusBad, fmt.Sprintf("[%d] %v", m.mirrors[msg.mirror].num, msg.err))
	case msg.err != nil:
		l.state, l.err = stateFailed, msg.err
		m.setStatus(statusBad, fmt.Sprintf("[%d] %v", m.mirrors[msg.mirror].num, msg.err))
	default:
		l.state, l.err, l.versions = stateLoaded, nil, msg.versions
		l.archives = map[string]map[string]backends.Archive{}
		for _, a := range msg.archives {
			v := a.Version.String()
			if l.archives[v] == nil {
				l.archives[v] = map[string]backends.Archive{}
			}
			l.archives[v][a.Platform.String()] = a
		}
	}
	m.noteNewest(msg.provider)
	if m.hasCurrent && msg.provider == m.current {
		m.rebuild()
	}
	return m, nil
}

// noteNewest shows a provider's newest version beside it in the list.
func (m *Model) noteNewest(p backends.Provider) {
	var newest backends.Version
	for _, l := range m.cache[p] {
		if l == nil || l.state != stateLoaded {
			continue
		}
		for _, v := range l.versions {
			if newest == nil || backends.CompareVersions(v, newest) > 0 {
				newest = v
			}
		}
	}
	if newest != nil {
		m.providers.SetNote(p, newest.String())
	}
}

// markDirty asks for mirror i's listing of p to be refreshed shortly.
func (m *Model) markDirty(i int, p backends.Provider) tea.Cmd {
	if i < 0 {
		return nil
	}
	first := len(m.dirty) == 0 && len(m.mod.dirty) == 0 // one tick serves both views
	m.dirty[relistKey{i, p}] = true
	if first {
		return relistTick()
	}
	return nil
}

// relistDirty refreshes the listings jobs changed, keeping what is shown
// until the new listing arrives so cells do not flicker.
func (m *Model) relistDirty() tea.Cmd {
	var cmds []tea.Cmd
	for k := range m.dirty {
		ls := m.cache[k.provider]
		if ls == nil {
			continue // never shown: it is listed afresh when it is
		}
		m.gen++
		if ls[k.mirror] == nil {
			ls[k.mirror] = &listing{state: stateLoading}
		}
		ls[k.mirror].gen = m.gen
		ls[k.mirror].refreshing = true
		cmds = append(cmds, loadProviderCmd(m.ctx, m.gen, k.mirror, m.mirrors[k.mirror].Reader, k.provider))
	}
	clear(m.dirty)
	return tea.Batch(cmds...)
}

// rebuild recomputes the matrix for the current provider from the listings
// of the compared mirrors and the verifications done so far.
func (m *Model) rebuild() {
	if !m.hasCurrent {
		m.matrix.SetData(matrix.Data{})
		m.refreshDetails()
		return
	}
	cmp := m.comparedList()
	byVersion := map[string]backends.Version{}
	byPlatform := map[string]backends.Platform{}
	for _, i := range cmp {
		l := m.listingOf(m.current, i)
		if l == nil || l.state != stateLoaded {
			continue
		}
		for _, v := range l.versions {
			byVersion[v.String()] = v
		}
		for _, plats := range l.archives {
			for _, a := range plats {
				byPlatform[a.Platform.String()] = a.Platform
			}
		}
	}
	vs := make([]backends.Version, 0, len(byVersion))
	for _, v := range byVersion {
		vs = append(vs, v)
	}
	vs = m.cfg.Selection.Versions.ProviderVersions(vs)
	var plats []string
	for s, p := range byPlatform {
		if m.cfg.Selection.WantsPlatform(p) {
			plats = append(plats, s)
		}
	}
	sort.Strings(plats)

	d := matrix.Data{Versions: make([]string, len(vs)), Platforms: plats, PerCell: len(cmp)}
	d.Marks = make([][][]theme.Mark, len(vs))
	all := make([]theme.Mark, len(vs)*len(plats)*len(cmp)) // one allocation for every cell
	in := make([]cellInput, len(cmp))
	for r, v := range vs {
		d.Versions[r] = v.String()
		d.Marks[r] = make([][]theme.Mark, len(plats))
		for c, plat := range plats {
			m.cellInputs(in, cmp, d.Versions[r], plat)
			cell := all[:0:len(cmp)]
			all = all[len(cmp):]
			d.Marks[r][c] = cellMarks(in, cell)
		}
	}
	m.matrix.SetData(d)
	m.refreshDetails()
}

// cellInputs fills in with what each of the mirrors in idx has for one
// package of the current provider.
func (m *Model) cellInputs(in []cellInput, idx []int, version, platform string) {
	for k, i := range idx {
		in[k] = cellInput{state: stateLoading}
		l := m.listingOf(m.current, i)
		if l == nil {
			continue
		}
		in[k].state = l.state
		if a, ok := l.archive(version, platform); ok {
			in[k].archive = &a
			in[k].verify = m.verified[verifyKey{i, a.Key()}]
		}
	}
}

// refreshDetails points Details at the job or the cell under the cursor.
func (m *Model) refreshDetails() {
	if m.focus == paneJobs {
		if j, ok := m.jobs.Selected(); ok {
			m.details.ShowJob(j, m.placeLabel(j.Info.Src), m.placeLabel(j.Info.Dst))
			return
		}
	}
	if m.view == viewModules {
		m.refreshModuleDetails()
		return
	}
	c, ok := m.matrix.Cursor()
	if !ok {
		m.details.ShowCell(nil)
		return
	}
	// Compared mirrors first, so the reference is the matrix's.
	order := m.comparedList()
	for i, cmp := range m.compared {
		if !cmp {
			order = append(order, i)
		}
	}
	in := make([]cellInput, len(order))
	m.cellInputs(in, order, c.Version, c.Platform)
	marks := cellMarks(in, nil)
	cell := &details.Cell{Mirrors: make([]details.Mirror, len(m.mirrors))}
	for k, i := range order {
		mi := m.mirrors[i]
		if cell.Ref == 0 && marks[k] == theme.MarkOK {
			cell.Ref = mi.num
		}
		dm := details.Mirror{Number: mi.num, Name: mi.Reader.String(), Compared: m.compared[i], Mark: marks[k], Archive: in[k].archive}
		if l := m.listingOf(m.current, i); l != nil && l.state == stateFailed {
			dm.Err = l.err
		}
		if a := in[k].archive; a != nil {
			cell.Package = a.Package
			vk := verifyKey{i, a.Key()}
			if v := m.verified[vk]; v != nil {
				f := v.finding
				dm.Verify, dm.Origin = &f, v.origin
			}
			dm.Verifying = m.verifying[vk]
		}
		cell.Mirrors[i] = dm
	}
	if cell.Package.Version == nil {
		// No mirror holds it: name it from the matrix.
		cell.Package.Provider = m.current
		if v, err := backends.ParseVersion(c.Version); err == nil {
			cell.Package.Version = v
		}
		if p, err := backends.ParsePlatform(c.Platform); err == nil {
			cell.Package.Platform = p
		}
	}
	if cell.Package.Version == nil {
		m.details.ShowCell(nil)
		return
	}
	m.details.ShowCell(cell)
}

// placeLabel names a place as "[n] name".
func (m *Model) placeLabel(name string) string {
	for _, mi := range m.mirrors {
		if mi.Reader.String() == name {
			return fmt.Sprintf("[%d] %s", mi.num, name)
		}
	}
	for _, p := range m.mod.places {
		if p.Lister.String() == name {
			return fmt.Sprintf("[%d] %s", p.num, name)
		}
	}
	return name
}

// mirrorIndex finds a mirror by the name the engine reports it by.
func (m *Model) mirrorIndex(name string) int {
	for i, mi := range m.mirrors {
		if mi.Reader.String() == name {
			return i
		}
	}
	return -1
}

// --- engine ---------------------------------------------------------------

func (m Model) updateEngine(ev sync.Event) (tea.Model, tea.Cmd) {
	cmds := []tea.Cmd{waitForEvent(m.engine.Events())}
	j := m.jobs.Apply(ev)
	switch ev := ev.(type) {
	case sync.JobQueued:
		m.queueActive = true
	case sync.JobDone:
		if j != nil {
			i := m.mirrorIndex(j.Info.Dst)
			res := ev.Result
			f := sync.Finding{Package: j.Info.Package, Status: sync.StatusOK, Result: &res}
			m.verified[verifyKey{i, j.Info.Package.Key()}] = &verification{finding: f, origin: "transfer"}
			cmds = append(cmds, m.markDirty(i, j.Info.Package.Provider))
		}
	case sync.JobFailed:
		if j != nil && !ev.Canceled {
			m.setStatus(statusBad, fmt.Sprintf("✗ %s %s %s: %s", j.Info.Package.Provider.ShortString(), j.Info.Package.Version, j.Info.Package.Platform, jobs.Reason(ev.Err)))
		}
	case sync.IndexWritten:
		if ev.Err != nil {
			m.setStatus(statusBad, "✗ "+ev.Err.Error())
		}
		cmds = append(cmds, m.markDirty(m.mirrorIndex(ev.Dst), ev.Provider))
	case sync.Idle:
		m.queueActive = false
		if !m.mod.queueActive {
			m.idleStatus()
		}
	}
	if m.focus == paneJobs {
		m.refreshDetails()
	}
	return m, tea.Batch(append(cmds, m.startSpinner())...)
}

// idleStatus sums up the jobs once both engines are idle.
func (m *Model) idleStatus() {
	c := m.jobs.Tracker().Counts()
	kind := statusInfo
	if c[sync.Failed] > 0 {
		kind = statusBad
	}
	if !m.quitting {
		m.setStatus(kind, fmt.Sprintf("queue idle: %d done, %d failed, %d canceled", c[sync.Done], c[sync.Failed], c[sync.Canceled]))
	}
}

func (m Model) cancelJob() (tea.Model, tea.Cmd) {
	j, ok := m.jobs.Selected()
	if !ok || (j.State != sync.Queued && j.State != sync.Running) {
		return m, nil
	}
	if isModuleJob(j.Info.ID) {
		return m.cancelModuleJob(j.Info.ID)
	}
	id, eng := j.Info.ID, m.engine
	return m, jobCmd(func() { eng.Cancel(id) })
}

func (m Model) retryJob() (tea.Model, tea.Cmd) {
	j, ok := m.jobs.Selected()
	if !ok || (j.State != sync.Failed && j.State != sync.Canceled) {
		m.setStatus(statusInfo, "R retries a failed or canceled job")
		return m, nil
	}
	if isModuleJob(j.Info.ID) {
		return m.retryModuleJob(j)
	}
	id, eng := j.Info.ID, m.engine
	return m, jobCmd(func() { eng.Retry(id) })
}

// --- verification ---------------------------------------------------------

// verifyTargets recomputes the hashes of the selected cells (or the cell
// under the cursor) in every compared mirror that holds them.
func (m Model) verifyTargets() (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	for _, c := range m.matrix.Targets() {
		for _, i := range m.comparedList() {
			a, ok := m.listingOf(m.current, i).archive(c.Version, c.Platform)
			if !ok {
				continue
			}
			k := verifyKey{i, a.Key()}
			if m.verifying[k] {
				continue
			}
			m.verifying[k] = true
			cmds = append(cmds, verifyCmd(m.ctx, m.slots, k, m.mirrors[i].Reader, a, m.cfg.Engine.Hashing))
		}
	}
	if len(cmds) == 0 {
		m.setStatus(statusInfo, "nothing to verify here: no compared mirror holds the selected package(s)")
		return m, nil
	}
	if m.batch.done >= m.batch.total {
		m.batch = verifyBatch{}
	}
	m.batch.total += len(cmds)
	m.setStatus(statusInfo, fmt.Sprintf("verifying %d archive(s)…", m.batch.total-m.batch.done))
	m.refreshDetails()
	return m, tea.Batch(append(cmds, m.startSpinner())...)
}

func (m Model) updateVerified(msg verifiedMsg) (tea.Model, tea.Cmd) {
	delete(m.verifying, msg.key)
	f := msg.finding
	m.verified[msg.key] = &verification{finding: f, origin: "verify"}
	m.batch.done++
	if f.Status != sync.StatusOK {
		m.batch.bad++
	}
	switch {
	case m.batch.bad > 0:
		m.setStatus(statusBad, fmt.Sprintf("verified %d/%d: %d failed — ✗ %s", m.batch.done, m.batch.total, m.batch.bad, f.Detail))
	default:
		m.setStatus(statusInfo, fmt.Sprintf("verified %d/%d: all match what is stated", m.batch.done, m.batch.total))
	}
	if m.hasCurrent && msg.key.pkg.Provider == m.current {
		m.rebuild()
	}
	return m, nil
}

// --- spinner ----------------------------------------------------------------

// busy reports whether anything is under way that the spinner should show.
func (m Model) busy() bool {
	if m.quitting || m.queueActive || m.mod.queueActive || len(m.verifying) > 0 || len(m.dirty) > 0 || len(m.mod.dirty) > 0 || m.jobs.Tracker().Unfinished() {
		return true
	}
	if m.mod.hasCurrent && m.loadingModule() {
		return true
	}
	for _, mi := range m.mirrors {
		if !mi.listed {
			return true
		}
	}
	if m.hasCurrent {
		for _, l := range m.cache[m.current] {
			if l != nil && (l.state == stateLoading || l.refreshing) {
				return true
			}
		}
	}
	return false
}

func (m *Model) startSpinner() tea.Cmd {
	if m.spinning || m.cfg.NoAnimation {
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
	m.jobs.Spin = m.spinner.View()
	return m, cmd
}
