package ui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/jobs"
	"github.com/tfmirror/tfmirror/ui/modlist"
	"github.com/tfmirror/tfmirror/ui/modtable"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The Modules view (m) is the providers view's twin for module packages:
// the modules named with --module on the left, the chosen module's versions
// against every module place in the centre, Details saying where each
// package lives. Its jobs run on a sync.ModuleEngine whose events feed the
// same jobs pane.

// ModulePlace is a place the Modules view compares: a module registry, an
// OCI mirror or a directory.
type ModulePlace struct {
	Lister modules.Lister
	// Kind labels it in the header: registry, oci, fs.
	Kind string
	// Number is how the header numbers it: give a place that is also a
	// Mirror the Mirror's number. 0 numbers it by position, from 1.
	Number int
}

// ModulesConfig is what the Modules view shows; with no Modules the view
// is left out.
type ModulesConfig struct {
	Modules []modules.Module
	Places  []ModulePlace
	// Builder fetches and packs packages from the locations registries
	// give; module jobs need it.
	Builder modules.Builder
	// ShowFirst opens the UI on the Modules view.
	ShowFirst bool
}

type viewKind int

const (
	viewProviders viewKind = iota
	viewModules
)

// modPlace is a module place and what the view knows of it.
type modPlace struct {
	ModulePlace
	num    int
	writer modules.Writer
}

// modListing is what one place holds of one module.
type modListing struct {
	state      loadState
	gen        uint64
	refreshing bool
	err        error
	// note says why the place holds nothing of the module when that is not
	// a plain absence.
	note  string
	items map[string]modules.Listing // by canonical version
}

func (l *modListing) item(version string) (modules.Listing, bool) {
	if l == nil || l.state != stateLoaded {
		return modules.Listing{}, false
	}
	it, ok := l.items[version]
	return it, ok
}

type modRelistKey struct {
	place  int
	module modules.Module
}

// modJobKey finds the spec of a module job from what its events say, so a
// job can be retried and its destination re-listed when it lands.
type modJobKey struct{ name, dst string }

func moduleJobKey(s sync.ModuleJobSpec) modJobKey {
	// The name the module engine gives the job (JobInfo.Name).
	return modJobKey{name: s.Module.String() + " " + s.Version.String(), dst: s.Dst.String()}
}

// moduleState is the Modules view's part of the root model.
type moduleState struct {
	cfg        ModulesConfig
	places     []*modPlace
	compared   []bool
	list       modlist.Model
	table      modtable.Model
	current    modules.Module
	hasCurrent bool
	cache      map[modules.Module][]*modListing
	dirty      map[modRelistKey]bool
	loadToken  uint64
	loadCancel context.CancelFunc
	dialog     *modQueueDialog

	engine      *sync.Engine
	specs       map[modJobKey]sync.ModuleJobSpec
	queueActive bool
}

func newModuleState(ctx context.Context, cfg ModulesConfig, opts sync.Options, styles *theme.Styles) moduleState {
	s := moduleState{
		cfg:        cfg,
		list:       modlist.New(styles),
		table:      modtable.New(styles),
		cache:      map[modules.Module][]*modListing{},
		dirty:      map[modRelistKey]bool{},
		specs:      map[modJobKey]sync.ModuleJobSpec{},
		loadCancel: func() {},
	}
	if len(cfg.Modules) == 0 {
		return s
	}
	for i, p := range cfg.Places {
		mp := &modPlace{ModulePlace: p, num: p.Number}
		if mp.num == 0 {
			mp.num = i + 1
		}
		mp.writer, _ = p.Lister.(modules.Writer)
		s.places = append(s.places, mp)
		s.compared = append(s.compared, true)
	}
	mods := append([]modules.Module(nil), cfg.Modules...)
	sort.Slice(mods, func(i, j int) bool { return mods[i].Less(mods[j]) })
	s.list.SetModules(mods)
	s.engine = sync.NewEngine(ctx, opts)
	return s
}

func (s *moduleState) enabled() bool { return len(s.cfg.Modules) > 0 }

// shutdown cancels module listings and waits for the module engine to end
// its jobs.
func (s moduleState) shutdown() {
	s.loadCancel()
	if s.engine != nil {
		s.engine.Close()
		for range s.engine.Events() {
		}
	}
}

// initModules starts listening to the module engine and asks for the first
// module to be listed, so the view is ready when it is opened. Init cannot
// change the model, so the listing starts from a message.
func (m Model) initModules() tea.Cmd {
	if !m.mod.enabled() {
		return nil
	}
	return tea.Batch(waitForModuleEvent(m.mod.engine.Events()), func() tea.Msg { return moduleStartMsg{} })
}

// --- messages ----------------------------------------------------------------

// moduleMsg is a message of the Modules view; updateModules routes them, so
// the root Update needs one case for them all.
type moduleMsg interface{ isModuleMsg() }

// moduleListedMsg is one place's listing of one module; gen drops results
// overtaken by a newer listing.
type moduleListedMsg struct {
	gen      uint64
	place    int
	module   modules.Module
	listings modules.Listings
	note     string
	err      error
}

// moduleStartMsg lists the first module when the UI starts.
type moduleStartMsg struct{}

// moduleLoadTickMsg fires a moment after the module cursor stops.
type moduleLoadTickMsg struct{ token uint64 }

// moduleEventMsg carries one module engine event, its job ids already
// turned into the UI's (see fromModuleEngine).
type moduleEventMsg struct{ ev sync.Event }

// moduleEngineClosedMsg: the module engine has sent its last event.
type moduleEngineClosedMsg struct{}

// moduleEnqueuedMsg reports module jobs handed to the engine.
type moduleEnqueuedMsg struct {
	n    int
	dest string
}

func (moduleStartMsg) isModuleMsg()        {}
func (moduleListedMsg) isModuleMsg()       {}
func (moduleLoadTickMsg) isModuleMsg()     {}
func (moduleEventMsg) isModuleMsg()        {}
func (moduleEngineClosedMsg) isModuleMsg() {}
func (moduleEnqueuedMsg) isModuleMsg()     {}

func listModuleCmd(ctx context.Context, gen uint64, i int, l modules.Lister, mod modules.Module, c backends.VersionConstraint) tea.Cmd {
	return func() tea.Msg {
		msg := moduleListedMsg{gen: gen, place: i, module: mod}
		if reg, ok := l.(*modules.Registry); ok && reg.Host() != mod.Host {
			// A registry serves its own host's modules: asking it for the
			// same path would list another module.
			msg.note = "serves " + reg.Host() + "'s modules, not " + mod.Host + "'s"
			return msg
		}
		msg.listings, msg.err = l.ListModule(ctx, mod, c)
		return msg
	}
}

func moduleLoadTick(token uint64) tea.Cmd {
	return tea.Tick(loadDelay, func(_ time.Time) tea.Msg { return moduleLoadTickMsg{token} })
}

// Module job ids are negated in the UI, so they never collide with the
// provider engine's in the shared jobs pane; the sign says which engine
// runs a job.
func uiModuleID(id sync.JobID) sync.JobID     { return -id }
func engineModuleID(id sync.JobID) sync.JobID { return -id }
func isModuleJob(id sync.JobID) bool          { return id < 0 }

// fromModuleEngine turns a module engine event's job id into the UI's.
func fromModuleEngine(ev sync.Event) sync.Event {
	switch e := ev.(type) {
	case sync.JobQueued:
		e.Job.ID = uiModuleID(e.Job.ID)
		return e
	case sync.JobStarted:
		e.ID = uiModuleID(e.ID)
		return e
	case sync.JobProgress:
		e.ID = uiModuleID(e.ID)
		return e
	case sync.HashChecked:
		e.ID = uiModuleID(e.ID)
		return e
	case sync.JobRetrying:
		e.ID = uiModuleID(e.ID)
		return e
	case sync.JobDone:
		e.ID = uiModuleID(e.ID)
		return e
	case sync.JobFailed:
		e.ID = uiModuleID(e.ID)
		return e
	}
	return ev
}

func waitForModuleEvent(events <-chan sync.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-events
		if !ok {
			return moduleEngineClosedMsg{}
		}
		return moduleEventMsg{fromModuleEngine(ev)}
	}
}

// moduleEnqueueCmd hands jobs to the module engine, outside Update: Enqueue
// sends events the UI itself must read.
func moduleEnqueueCmd(eng *sync.Engine, specs []sync.ModuleJobSpec, dest string) tea.Cmd {
	return func() tea.Msg {
		return moduleEnqueuedMsg{n: len(eng.Enqueue(sync.ModuleTasks(specs)...)), dest: dest}
	}
}

// --- routing -----------------------------------------------------------------

func (m Model) updateModules(msg moduleMsg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case moduleStartMsg:
		if mod, ok := m.mod.list.Selected(); ok && !m.mod.hasCurrent {
			return m, m.selectModule(mod, true)
		}
	case moduleListedMsg:
		return m.updateModuleListed(msg)
	case moduleLoadTickMsg:
		if msg.token != m.mod.loadToken || !m.mod.hasCurrent {
			return m, nil
		}
		return m, m.startModuleLoad(m.mod.current)
	case moduleEventMsg:
		return m.updateModuleEngine(msg.ev)
	case moduleEnqueuedMsg:
		m.setStatus(statusInfo, fmt.Sprintf("queued %d module job(s) to %s", msg.n, msg.dest))
	}
	return m, nil
}

// toggleView switches the left and centre panes between providers and
// modules.
func (m Model) toggleView() (tea.Model, tea.Cmd) {
	if !m.mod.enabled() {
		m.setStatus(statusInfo, "no modules: open the UI with --module NAMESPACE/NAME/SYSTEM to compare module places")
		return m, nil
	}
	if m.view == viewModules {
		m.view = viewProviders
		m.jobs.Empty = jobs.DefaultEmpty
	} else {
		m.view = viewModules
		m.jobs.Empty = moduleJobsEmpty
	}
	m.refreshDetails()
	return m, nil
}

// updateModuleKey handles a key for the module list or table.
func (m Model) updateModuleKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch m.focus {
	case paneProviders:
		if key.Matches(k, m.mod.list.Keys().Open) {
			m.setFocus(paneMatrix)
			return m, nil
		}
		var cmd tea.Cmd
		m.mod.list, cmd = m.mod.list.Update(k)
		if mod, ok := m.mod.list.Selected(); ok && (!m.mod.hasCurrent || mod != m.mod.current) {
			cmd = tea.Batch(cmd, m.selectModule(mod, false))
		}
		m.refreshDetails()
		return m, cmd
	case paneMatrix:
		if key.Matches(k, m.mod.table.Keys().Queue) {
			return m.openModuleQueue()
		}
		var cmd tea.Cmd
		m.mod.table, cmd = m.mod.table.Update(k)
		m.refreshDetails()
		return m, cmd
	}
	return m, nil
}

func (m *Model) toggleModuleCompared(num int) {
	i := -1
	for k, p := range m.mod.places {
		if p.num == num {
			i = k
		}
	}
	if i < 0 {
		return
	}
	n := 0
	for _, c := range m.mod.compared {
		if c {
			n++
		}
	}
	if m.mod.compared[i] && n == 1 {
		m.setStatus(statusWarn, "at least one place stays in the comparison")
		return
	}
	m.mod.compared[i] = !m.mod.compared[i]
	m.rebuildModules()
}

func (m Model) comparedModulePlaces() []int {
	var out []int
	for i, c := range m.mod.compared {
		if c {
			out = append(out, i)
		}
	}
	return out
}

// --- listings ------------------------------------------------------------------

// selectModule shows mod, listing it now or once the cursor rests.
func (m *Model) selectModule(mod modules.Module, now bool) tea.Cmd {
	m.mod.current, m.mod.hasCurrent = mod, true
	m.mod.table.Reset()
	m.rebuildModules()
	if m.moduleLoaded(mod) {
		return nil
	}
	if now {
		return m.startModuleLoad(mod)
	}
	m.mod.loadToken++
	return moduleLoadTick(m.mod.loadToken)
}

func (m *Model) moduleListing(mod modules.Module, i int) *modListing {
	if ls := m.mod.cache[mod]; i < len(ls) {
		return ls[i]
	}
	return nil
}

func (m *Model) moduleLoaded(mod modules.Module) bool {
	ls := m.mod.cache[mod]
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

// startModuleLoad lists mod in every place that has not, cancelling what
// is still being listed for the module shown before.
func (m *Model) startModuleLoad(mod modules.Module) tea.Cmd {
	m.mod.loadCancel()
	ctx, cancel := context.WithCancel(m.ctx)
	m.mod.loadCancel = cancel
	ls := m.mod.cache[mod]
	if ls == nil {
		ls = make([]*modListing, len(m.mod.places))
		m.mod.cache[mod] = ls
	}
	var cmds []tea.Cmd
	for i, p := range m.mod.places {
		if ls[i] != nil {
			continue
		}
		m.gen++
		ls[i] = &modListing{state: stateLoading, gen: m.gen}
		cmds = append(cmds, listModuleCmd(ctx, m.gen, i, p.Lister, mod, m.cfg.Selection.Versions))
	}
	m.rebuildModules()
	return tea.Batch(append(cmds, m.startSpinner())...)
}

func (m Model) updateModuleListed(msg moduleListedMsg) (tea.Model, tea.Cmd) {
	ls := m.mod.cache[msg.module]
	if ls == nil || ls[msg.place] == nil || ls[msg.place].gen != msg.gen {
		return m, nil // overtaken by a newer listing
	}
	l := ls[msg.place]
	l.refreshing = false
	p := m.mod.places[msg.place]
	switch {
	case errors.Is(msg.err, context.Canceled):
		if l.state == stateLoading {
			ls[msg.place] = nil // list again when the module is shown again
		}
		return m, nil
	case errors.Is(msg.err, backends.ErrNotFound):
		l.state, l.err, l.items, l.note = stateLoaded, nil, nil, ""
	case msg.err != nil && l.state == stateLoaded:
		m.setStatus(statusBad, fmt.Sprintf("[%d] %v", p.num, msg.err))
	case msg.err != nil:
		l.state, l.err = stateFailed, msg.err
		m.setStatus(statusBad, fmt.Sprintf("[%d] %v", p.num, msg.err))
	default:
		l.state, l.err, l.note = stateLoaded, nil, msg.note
		l.items = make(map[string]modules.Listing, len(msg.listings.Items))
		for _, it := range msg.listings.Items {
			l.items[it.Version.String()] = it
		}
	}
	if w := msg.listings.Warnings; len(w) > 0 && m.status.kind != statusBad {
		m.setStatus(statusWarn, fmt.Sprintf("[%d] %d warning(s), first: %s (tfmirror ls %s --module %s lists them)",
			p.num, len(w), w[0], p.Lister, msg.module))
	}
	m.noteNewestModule(msg.module)
	if m.mod.hasCurrent && msg.module == m.mod.current {
		m.rebuildModules()
	}
	return m, nil
}

// noteNewestModule shows a module's newest version beside it in the list.
func (m *Model) noteNewestModule(mod modules.Module) {
	var newest modules.Version
	for _, l := range m.mod.cache[mod] {
		if l == nil || l.state != stateLoaded {
			continue
		}
		for _, it := range l.items {
			if newest == nil || it.Version.GreaterThan(newest) {
				newest = it.Version
			}
		}
	}
	if newest != nil {
		m.mod.list.SetNote(mod, newest.String())
	}
}

// markModuleDirty asks for place i's listing of mod to be refreshed
// shortly; one tick refreshes both views' dirty listings.
func (m *Model) markModuleDirty(i int, mod modules.Module) tea.Cmd {
	if i < 0 {
		return nil
	}
	first := len(m.dirty) == 0 && len(m.mod.dirty) == 0
	m.mod.dirty[modRelistKey{i, mod}] = true
	if first {
		return relistTick()
	}
	return nil
}

// relistModules refreshes the listings module jobs changed, keeping what
// is shown until the new listing arrives.
func (m *Model) relistModules() tea.Cmd {
	var cmds []tea.Cmd
	for k := range m.mod.dirty {
		ls := m.mod.cache[k.module]
		if ls == nil {
			continue // never shown: listed afresh when it is
		}
		m.gen++
		if ls[k.place] == nil {
			ls[k.place] = &modListing{state: stateLoading}
		}
		ls[k.place].gen = m.gen
		ls[k.place].refreshing = true
		cmds = append(cmds, listModuleCmd(m.ctx, m.gen, k.place, m.mod.places[k.place].Lister, k.module, m.cfg.Selection.Versions))
	}
	clear(m.mod.dirty)
	return tea.Batch(cmds...)
}

func (m *Model) modPlaceIndex(name string) int {
	for i, p := range m.mod.places {
		if p.Lister.String() == name {
			return i
		}
	}
	return -1
}

// loadingModule reports whether a compared place is still listing the
// module shown.
func (m Model) loadingModule() bool {
	for _, i := range m.comparedModulePlaces() {
		if l := m.moduleListing(m.mod.current, i); l == nil || l.state == stateLoading || l.refreshing {
			return true
		}
	}
	return false
}

// --- the table and Details -----------------------------------------------------

// moduleMarks gives, for one version, the mark of each place in idx and the
// index (into idx) of the place whose digest the others are compared with
// (-1: none states a digest). Only OCI places state digests; two of them
// holding different manifests for one version hold different packages.
func (m *Model) moduleMarks(idx []int, version string, out []theme.Mark) ([]theme.Mark, int) {
	ref := -1
	refDigest := ""
	for k, i := range idx {
		if it, ok := m.moduleListing(m.mod.current, i).item(version); ok && it.Err == nil && it.Digest != "" {
			ref, refDigest = k, it.Digest
			break
		}
	}
	for _, i := range idx {
		l := m.moduleListing(m.mod.current, i)
		mk := theme.MarkLoading
		switch {
		case l == nil || l.state == stateLoading:
		case l.state == stateFailed:
			mk = theme.MarkError
		default:
			it, ok := l.item(version)
			switch {
			case !ok:
				mk = theme.MarkMissing
			case it.Err != nil:
				mk = theme.MarkError
			case it.Digest != "" && ref >= 0 && it.Digest != refDigest:
				mk = theme.MarkDiffers
			default:
				mk = theme.MarkOK
			}
		}
		out = append(out, mk)
	}
	return out, ref
}

// rebuildModules recomputes the table for the module shown.
func (m *Model) rebuildModules() {
	if !m.mod.hasCurrent {
		m.mod.table.SetData(modtable.Data{})
		m.refreshDetails()
		return
	}
	cmp := m.comparedModulePlaces()
	byVersion := map[string]modules.Version{}
	for _, i := range cmp {
		l := m.moduleListing(m.mod.current, i)
		if l == nil || l.state != stateLoaded {
			continue
		}
		for s, it := range l.items {
			byVersion[s] = it.Version
		}
	}
	vs := make([]modules.Version, 0, len(byVersion))
	for _, v := range byVersion {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].GreaterThan(vs[j]) })
	d := modtable.Data{Versions: make([]string, len(vs)), Marks: make([][]theme.Mark, len(vs))}
	for _, i := range cmp {
		p := m.mod.places[i]
		d.Places = append(d.Places, fmt.Sprintf("[%d] %s", p.num, p.Kind))
		d.Short = append(d.Short, fmt.Sprintf("[%d]", p.num))
	}
	for r, v := range vs {
		d.Versions[r] = v.String()
		d.Marks[r], _ = m.moduleMarks(cmp, d.Versions[r], make([]theme.Mark, 0, len(cmp)))
	}
	m.mod.table.SetData(d)
	m.refreshDetails()
}

// refreshModuleDetails points Details at the version under the cursor:
// every place, compared ones first, with where it keeps the package.
func (m *Model) refreshModuleDetails() {
	v, ok := m.mod.table.Cursor()
	if !ok || !m.mod.hasCurrent {
		m.details.ShowModule(nil)
		return
	}
	order := m.comparedModulePlaces()
	for i, c := range m.mod.compared {
		if !c {
			order = append(order, i)
		}
	}
	marks, ref := m.moduleMarks(order, v, nil)
	dv := &details.ModuleVersion{Module: m.mod.current, Version: v}
	if ref >= 0 {
		dv.Ref = m.mod.places[order[ref]].num
	}
	for k, i := range order {
		p := m.mod.places[i]
		dp := details.ModulePlace{Number: p.num, Name: p.Lister.String(), Compared: m.mod.compared[i], Mark: marks[k], Label: modtable.MarkLabel(marks[k])}
		if l := m.moduleListing(m.mod.current, i); l != nil {
			switch {
			case l.state == stateFailed:
				dp.Err = l.err
			case l.state == stateLoaded:
				dp.Note = l.note
				if it, ok := l.item(v); ok {
					dp.Listing = &it
				}
			}
		}
		dv.Places = append(dv.Places, dp)
	}
	m.details.ShowModule(dv)
}

// --- the engine ----------------------------------------------------------------

func (m Model) updateModuleEngine(ev sync.Event) (tea.Model, tea.Cmd) {
	cmds := []tea.Cmd{waitForModuleEvent(m.mod.engine.Events())}
	j := m.jobs.Apply(ev)
	switch ev := ev.(type) {
	case sync.JobQueued:
		m.mod.queueActive = true
	case sync.JobDone:
		if j != nil {
			if spec, ok := m.mod.specs[modJobKey{j.Info.Name, j.Info.Dst}]; ok {
				cmds = append(cmds, m.markModuleDirty(m.modPlaceIndex(j.Info.Dst), spec.Module))
			}
		}
	case sync.JobFailed:
		if j != nil && !ev.Canceled {
			m.setStatus(statusBad, fmt.Sprintf("✗ %s: %s", j.Info.Label(), jobs.Reason(ev.Err)))
		}
	case sync.Idle:
		m.mod.queueActive = false
		if !m.queueActive {
			m.idleStatus()
		}
	}
	if m.focus == paneJobs {
		m.refreshDetails()
	}
	return m, tea.Batch(append(cmds, m.startSpinner())...)
}

// cancelModuleJob and retryModuleJob act on a module job the jobs pane
// shows. The module engine has no retry: the job is queued again, as a
// new job.
func (m Model) cancelModuleJob(id sync.JobID) (tea.Model, tea.Cmd) {
	eng := m.mod.engine
	return m, jobCmd(func() { eng.Cancel(engineModuleID(id)) })
}

func (m Model) retryModuleJob(j *sync.TrackedJob) (tea.Model, tea.Cmd) {
	spec, ok := m.mod.specs[modJobKey{j.Info.Name, j.Info.Dst}]
	if !ok {
		return m, nil
	}
	m.setStatus(statusInfo, "queueing "+j.Info.Label()+" again…")
	return m, tea.Batch(moduleEnqueueCmd(m.mod.engine, []sync.ModuleJobSpec{spec}, m.placeLabel(j.Info.Dst)), m.startSpinner())
}

// --- drawing -------------------------------------------------------------------

func (m Model) moduleTableTitle() string {
	if !m.mod.hasCurrent {
		return "Versions"
	}
	t := m.mod.current.String()
	cmp := m.comparedModulePlaces()
	if len(cmp) > 1 {
		nums := make([]string, len(cmp))
		for k, i := range cmp {
			nums[k] = fmt.Sprint(m.mod.places[i].num)
		}
		t += " ─ compare " + strings.Join(nums, " ↔ ")
	}
	if n := len(m.mod.table.Data().Versions); n > 0 {
		t += fmt.Sprintf(" ─ %d versions", n)
	}
	return t
}

func (m Model) moduleTableLines() []string {
	s := m.styles
	if !m.mod.hasCurrent {
		return []string{s.Dim.Render(" no modules: name them with --module NAMESPACE/NAME/SYSTEM")}
	}
	if len(m.mod.table.Data().Versions) > 0 {
		lines := strings.Split(m.mod.table.View(), "\n")
		if m.loadingModule() {
			lines[len(lines)-1] = m.spinner.View() + " listing… " + lines[len(lines)-1]
		}
		return lines
	}
	if m.loadingModule() {
		return []string{" " + m.spinner.View() + " listing versions and locations…"}
	}
	var lines []string
	for _, i := range m.comparedModulePlaces() {
		l := m.moduleListing(m.mod.current, i)
		switch {
		case l == nil:
		case l.state == stateFailed:
			lines = append(lines, s.Bad.Render(fmt.Sprintf(" ✗ [%d] %v", m.mod.places[i].num, l.err)))
		case l.note != "":
			lines = append(lines, s.Dim.Render(fmt.Sprintf(" [%d] %s %s", m.mod.places[i].num, m.mod.places[i].Lister, l.note)))
		}
	}
	return append(lines, s.Dim.Render(" The compared places hold no version of this module"+m.filterNote()+"."))
}
