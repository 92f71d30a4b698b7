package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	gosync "sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/jobs"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The Providers view: the mirrors' providers on the left, the chosen
// provider's platform matrix in the centre, each cell one mark per compared
// mirror; cells are queued as provider transfers and verified in place.

// mirror is one mirror and what is known of its catalogue.
type mirror struct {
	reader      backends.Reader
	writer      backends.Writer
	scope       *Scope
	listed      bool // its catalogue arrived, or it has none
	noCatalogue bool
	// unknown are the NAMESPACE/TYPE filters whose host it cannot know.
	unknown   []backends.ProviderFilter
	err       error
	providers []backends.Provider
}

// provHolding is what one mirror holds of one provider.
type provHolding struct {
	vs []backends.Version
	// archives by version string, then platform string.
	archives map[string]map[string]backends.Archive
}

func (h provHolding) versions() []backends.Version { return h.vs }

func (h provHolding) archive(version, platform string) (backends.Archive, bool) {
	a, ok := h.archives[version][platform]
	return a, ok
}

// verifyBatch counts the results of the last `v`, for the status line,
// which quotes the first failure.
type verifyBatch struct {
	total, done, bad int
	firstBad         string
}

type providersView struct {
	base[backends.Provider, provHolding]
	mirrors   []*mirror
	sel       sync.Selection
	hashing   hashing.Options
	verified  map[verifyKey]*verification
	verifying map[verifyKey]bool
	batch     verifyBatch
	// slots bounds how many archives `v` hashes at once.
	slots chan struct{}
	// newest is each provider's newest version any mirror lists, for the
	// list; newestPending counts the mirrors still being asked.
	newest        map[backends.Provider]backends.Version
	newestPending int
	// newestLater are the mirrors' newest-version scans held back until
	// the first provider shown is listed: on two cores, scanning 100,000
	// archives' names beside that listing doubled the time the first
	// screen and matrix took.
	newestLater []tea.Cmd
	firstLoad   bool // the first provider shown is being listed
	// wanted is what the spec the UI opened on wants of each provider.
	wanted map[backends.Provider]wantedVersions
	// catGen is the latest round of catalogues asked for (ctrl+r asks
	// again); catalogues of an older round are dropped.
	catGen uint64
	// lock is the lock view's state, when the UI opened on lock files.
	lock *lockState
	// items are the providers listed, as the list has them.
	items []backends.Provider
	// surveying: a step of the survey (gaps.go) is under way.
	surveying bool
}

// wantedVersions are the versions a spec wants of one provider, and for
// which platforms (none: every platform its source offers).
type wantedVersions struct {
	versions  []backends.Version
	platforms []backends.Platform
}

var matrixLegend = []grid.LegendItem{
	markItem(theme.MarkVerified), markItem(theme.MarkStated), markItem(theme.MarkUnverified), markItem(theme.MarkMissing),
	markItem(theme.MarkDiffers), markItem(theme.MarkFailed), markItem(theme.MarkNotApplicable),
	markItem(theme.MarkLoading), markItem(theme.MarkError),
}

func markItem(mk theme.Mark) grid.LegendItem {
	return grid.LegendItem{Mark: mk, Long: mk.Label(), Short: mk.Short()}
}

func newProvidersView(sh *shell, cfg Config) *providersView {
	v := &providersView{sel: cfg.Selection, hashing: cfg.Engine.Hashing(),
		verified: map[verifyKey]*verification{}, verifying: map[verifyKey]bool{}, slots: make(chan struct{}, 4),
		newest: map[backends.Provider]backends.Version{}}
	var ps []place
	for i, mr := range cfg.Mirrors {
		w, _ := mr.Reader.(backends.Writer)
		v.mirrors = append(v.mirrors, &mirror{reader: mr.Reader, writer: w, scope: mr.Scope})
		ps = append(ps, place{num: numbered(mr.Number, i), name: placeName(mr.Reader.String()), kind: mr.Kind, compared: i < 4, writable: w != nil})
	}
	if cfg.Spec != nil {
		// A spec's destinations are compared: what they lack is its gaps;
		// its sources are a number key away.
		v.wanted = specWanted(cfg.Spec.Wanted)
		for i := range ps {
			ps[i].compared = false
		}
		for k, i := range cfg.Spec.Dests {
			ps[i].compared = k < 4
		}
	}
	l := list.New(sh.styles, list.Options[backends.Provider]{Name: "Providers", Keys: list.DefaultKeyMap("open matrix"),
		Short: backends.Provider.ShortString, Full: backends.Provider.String, NoMatch: " no provider matches"})
	g := grid.New(sh.styles, grid.Options{Keys: grid.CellKeys(), Legend: matrixLegend})
	v.base = newBase[backends.Provider, provHolding](sh, viewProviders, "mirror", "provider", ps, l, g)
	v.base.load = v.loadProvider
	v.base.rebuild = v.rebuild
	v.base.hint = func(i int, _ backends.Provider) string { return "tfmirror ls " + v.places[i].name }
	v.base.note = v.noteVersion
	v.base.onLoaded = func(p backends.Provider) {
		if !v.hasCurrent || p != v.current {
			v.noteGaps(p) // rebuild notes the provider shown's
		}
	}
	if cfg.Spec != nil {
		v.setItems()
	}
	if cfg.Locks != nil {
		v.lock = newLockState(cfg.Locks)
		v.list.SetItems(v.providerUnion())
	}
	return v
}

// specWanted is every version w wants of each provider, in any
// destination.
func specWanted(w *spec.Wanted) map[backends.Provider]wantedVersions {
	out := map[backends.Provider]wantedVersions{}
	if w == nil {
		return out
	}
	for _, d := range w.Destinations {
		for _, r := range d.Providers {
			wv := out[r.Provider]
			wv.versions = unionVersions(wv.versions, r.Versions())
			wv.platforms = r.Selection.Platforms
			out[r.Provider] = wv
		}
	}
	return out
}

// unionVersions is vs with the versions of more it lacks, newest first.
func unionVersions(vs, more []backends.Version) []backends.Version {
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v.String()] = true
	}
	for _, v := range more {
		if !seen[v.String()] {
			seen[v.String()] = true
			vs = append(vs, v)
		}
	}
	backends.SortVersionsNewestFirst(vs)
	return vs
}

// numbered is a place's number: as given, else its position from 1.
func numbered(num, i int) int {
	if num == 0 {
		return i + 1
	}
	return num
}

func (v *providersView) words() viewWords {
	w := viewWords{places: " ─ mirrors: ", list: "Providers", item: "provider", listNote: listNote, grid: "Matrix", jobsEmpty: jobs.DefaultEmpty, marks: "mirror", legend: matrixLegend}
	if v.lock != nil {
		w.listNote = "" // the lock view's notes say what the lock's packages lack
	}
	return w
}

// catalogueMsg is one mirror's catalogue of providers, narrowed by
// --provider (sync.Selection.HostRule, as every command does).
type catalogueMsg struct {
	to
	gen         uint64
	mirror      int
	providers   []backends.Provider
	noCatalogue bool
	// unknown are the NAMESPACE/TYPE filters whose host the mirror cannot
	// know; other mirrors may.
	unknown  []backends.ProviderFilter
	err      error
	warnings []string
}

// newestMsg is the newest version one mirror lists of each of its
// providers.
type newestMsg struct {
	to
	newest map[backends.Provider]backends.Version
}

// verifiedMsg is the result of recomputing one archive's hashes.
type verifiedMsg struct {
	to
	key     verifyKey
	finding sync.Finding
}

// Init lists every mirror's providers.
func (v *providersView) Init() tea.Cmd {
	var cmds []tea.Cmd
	gen := v.catGen
	for i, mr := range v.mirrors {
		r := mr.reader
		// -p narrows the list by the rule every command follows; the
		// lock's providers are not the list's business here.
		sel := sync.Selection{Providers: v.sel.Providers}
		cmds = append(cmds, func() tea.Msg {
			listed, err := r.Providers(v.sh.ctx)
			msg := catalogueMsg{to: to(viewProviders), gen: gen, mirror: i, noCatalogue: errors.Is(err, backends.ErrNoCatalogue)}
			msg.providers, msg.unknown, msg.err = sel.HostRule(r, listed, err)
			if w, ok := r.(backends.Warner); ok {
				msg.warnings = w.Warnings()
			}
			return msg
		})
	}
	if v.lock != nil {
		cmds = append(cmds, v.lockTie())
	}
	return tea.Batch(cmds...)
}

func (v *providersView) update(msg viewMsg) tea.Cmd {
	switch msg := msg.(type) {
	case catalogueMsg:
		return v.updateCatalogue(msg)
	case verifiedMsg:
		v.updateVerified(msg)
		return nil
	case lockTiedMsg:
		return v.updateLockTied(msg)
	case surveyMsg:
		return v.updateSurvey(msg)
	case newestMsg:
		v.newestPending--
		for p, ver := range msg.newest {
			v.noteVersion(p, ver)
		}
		return nil
	case loadedMsg[backends.Provider, provHolding]:
		cmd := v.base.update(msg)
		if !v.firstLoad {
			return cmd
		}
		v.firstLoad = false
		later := v.newestLater
		v.newestLater = nil
		return tea.Batch(append(later, cmd, v.survey())...)
	}
	return v.base.update(msg)
}

// key verifies in the matrix; the rest is the base's.
func (v *providersView) key(p pane, k tea.KeyPressMsg) tea.Cmd {
	if p == paneMatrix && key.Matches(k, v.grid.Keys().Verify) {
		return v.verifyTargets()
	}
	return v.base.key(p, k)
}

// loadProvider lists mirror i's versions and archives of p.
func (v *providersView) loadProvider(ctx context.Context, i int, p backends.Provider) (provHolding, []string, error) {
	r := v.mirrors[i].reader
	var vs []backends.Version
	var as []backends.Archive
	var err error
	if l, ok := r.(backends.Lister); ok {
		// One pass lists every archive; the versions are theirs.
		if as, err = l.AllArchives(ctx, p); errors.Is(err, backends.ErrNotFound) {
			return provHolding{}, nil, nil // the mirror holds nothing of p
		}
		seen := map[string]bool{}
		for _, a := range as {
			if s := a.Version.String(); !seen[s] {
				seen[s] = true
				vs = append(vs, a.Version)
			}
		}
		backends.SortVersionsNewestFirst(vs)
	} else {
		if vs, err = r.Versions(ctx, p); errors.Is(err, backends.ErrNotFound) {
			return provHolding{}, nil, nil
		}
		if v.lock != nil {
			vs = v.lock.only(p, vs) // a registry keeps every release: list the locked ones
		}
		if err == nil {
			as, err = backends.ListArchives(ctx, r, p, vs)
		}
	}
	h := provHolding{vs: vs, archives: map[string]map[string]backends.Archive{}}
	for _, a := range as {
		s := a.Version.String()
		if h.archives[s] == nil {
			h.archives[s] = map[string]backends.Archive{}
		}
		h.archives[s][a.Platform.String()] = a
	}
	return h, warningsAbout(r, p), err
}

// warningsAbout is what r ignored while listing p (a document it could not
// read): its warnings that name p's directory.
func warningsAbout(r backends.Reader, p backends.Provider) []string {
	w, ok := r.(backends.Warner)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range w.Warnings() {
		if strings.Contains(s, p.String()+"/") {
			out = append(out, s)
		}
	}
	return out
}

// reload lists every mirror's catalogue again, and the provider shown:
// what the list and the matrix show was listed before a sync from
// elsewhere changed the mirrors. The provider under the cursor stays
// shown once the catalogues are in.
func (v *providersView) reload() tea.Cmd {
	v.forget()
	v.catGen++
	for _, mr := range v.mirrors {
		mr.listed, mr.noCatalogue, mr.unknown, mr.err, mr.providers = false, false, nil, nil, nil
	}
	clear(v.verified)
	clear(v.newest)
	v.surveying = false // its step finds a newer round and is dropped
	v.hasCurrent = false
	v.noteAllGaps()
	v.rebuild()
	return v.Init()
}

func (v *providersView) updateCatalogue(msg catalogueMsg) tea.Cmd {
	if msg.gen != v.catGen {
		return nil // a round of catalogues ctrl+r has asked for again
	}
	mr, num := v.mirrors[msg.mirror], v.places[msg.mirror].num
	mr.listed, mr.noCatalogue, mr.unknown = true, msg.noCatalogue, msg.unknown
	switch {
	case errors.Is(msg.err, backends.ErrNoCatalogue):
	case msg.err != nil:
		mr.err = msg.err
		v.sh.problem(statusBad, fmt.Sprintf("[%d] %v", num, msg.err), "")
	default:
		mr.providers = msg.providers
	}
	v.sh.warn(num, msg.warnings, "tfmirror ls "+v.places[msg.mirror].name)
	v.setItems()
	v.unmatchedFilters()
	var cmds []tea.Cmd
	if p, ok := v.list.Selected(); ok && !v.hasCurrent {
		cmds = append(cmds, v.selectItem(p, true))
		v.firstLoad = cmds[0] != nil
	}
	if len(mr.providers) > 0 {
		v.newestPending++
		newest := newestCmd(v.sh.ctx, mr.reader, mr.providers)
		if v.firstLoad {
			v.newestLater = append(v.newestLater, newest)
		} else {
			cmds = append(cmds, newest)
		}
	}
	return tea.Batch(append(cmds, v.survey())...)
}

// setItems lists every provider some mirror lists (or the user named, or
// the spec wants), with what is known of each.
func (v *providersView) setItems() {
	v.items = v.providerUnion()
	v.list.SetItems(v.items)
	v.noteAllGaps()
}

// newestCmd asks a mirror for the versions of each provider it lists, a
// few at a time, so the list shows every provider's newest version before
// it is opened. A provider that cannot be listed is left without one: its
// error shows when it is opened.
func newestCmd(ctx context.Context, r backends.Reader, ps []backends.Provider) tea.Cmd {
	return func() tea.Msg {
		out := make([]backends.Version, len(ps))
		work := make(chan int)
		var wg gosync.WaitGroup
		for range min(4, len(ps)) {
			wg.Go(func() {
				for i := range work {
					vs, err := r.Versions(ctx, ps[i])
					if err != nil {
						continue
					}
					// Newest first, and never OpenTofu's "unspecified" 0.0.0.
					if vs = (backends.VersionConstraint{}).ProviderVersions(vs); len(vs) > 0 {
						out[i] = vs[0]
					}
				}
			})
		}
		for i := range ps {
			if ctx.Err() != nil {
				break
			}
			work <- i
		}
		close(work)
		wg.Wait()
		msg := newestMsg{to: to(viewProviders), newest: map[backends.Provider]backends.Version{}}
		for i, v := range out {
			if v != nil {
				msg.newest[ps[i]] = v
			}
		}
		return msg
	}
}

// noteVersion shows ver beside p in the list when it is the newest known.
func (v *providersView) noteVersion(p backends.Provider, ver backends.Version) {
	if v.lock != nil {
		return // the lock view notes the locked version and the gaps
	}
	if cur := v.newest[p]; cur == nil || backends.CompareVersions(ver, cur) > 0 {
		v.newest[p] = ver
		v.list.SetNote(p, ver.String())
	}
}

// providerUnion is every provider the mirrors selected by the rule for
// --provider (sync.Selection.HostRule), the full addresses named (held
// nowhere yet, or by a place that cannot list), and what a spec wants.
func (v *providersView) providerUnion() []backends.Provider {
	if v.lock != nil {
		return v.lockedProviders()
	}
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	add := func(p backends.Provider) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, mr := range v.mirrors {
		for _, p := range mr.providers {
			add(p)
		}
	}
	for p := range v.wanted {
		add(p) // wanted, held nowhere yet or by a place that cannot list
	}
	for _, f := range v.sel.Providers {
		if f.Hostname != "" {
			if p, err := f.On(""); err == nil {
				add(p)
			}
		}
	}
	backends.SortProviders(out)
	return out
}

// unmatchedFilters says, once every mirror is listed, which NAMESPACE/TYPE
// filters selected nothing: their host could not be known (a usage error
// in every command), or no mirror holds them.
func (v *providersView) unmatchedFilters() {
	var unknown []backends.ProviderFilter
	var where []string
	for i, mr := range v.mirrors {
		if !mr.listed {
			return
		}
		if len(mr.unknown) > 0 {
			unknown = mr.unknown
			where = append(where, v.places[i].name)
		}
	}
	listed := v.providerUnion()
	for _, f := range v.sel.Providers {
		if f.Hostname != "" || slices.ContainsFunc(listed, f.Matches) {
			continue
		}
		if slices.Contains(unknown, f) {
			err := sync.HostUnknownError(where, []backends.ProviderFilter{f})
			v.sh.problem(statusWarn, err.Error(), "")
			return
		}
		v.sh.problem(statusWarn, fmt.Sprintf("--provider %s: no mirror here lists it", f), "")
		return
	}
}

// landed records an archive a job put in mirror i, in the listing of its
// provider if there is one, and redraws the matrix if it is shown.
func (v *providersView) landed(i int, a backends.Archive) {
	l := v.listingOf(a.Provider, i)
	if l == nil || l.state != stateLoaded {
		return // listed afresh when it is shown
	}
	ver := a.Version.String()
	if l.data.archives == nil {
		l.data.archives = map[string]map[string]backends.Archive{}
	}
	if l.data.archives[ver] == nil {
		l.data.archives[ver] = map[string]backends.Archive{}
		l.data.vs = append(l.data.vs, a.Version)
		backends.SortVersionsNewestFirst(l.data.vs)
	}
	// What was there (a forced job replaced it) is no more.
	l.data.archives[ver][a.Platform.String()] = a
	if v.hasCurrent && a.Provider == v.current {
		v.rebuild()
	} else {
		v.noteGaps(a.Provider)
	}
}

// rebuild recomputes the matrix for the provider shown from the listings
// of the compared mirrors and the verifications done so far.
func (v *providersView) rebuild() {
	if !v.hasCurrent {
		v.grid.SetData(grid.Data{})
		return
	}
	if v.lock != nil {
		v.rebuildLock()
		return
	}
	d := v.matrixOf(v.current)
	v.grid.SetData(d)
	v.noteGapsOf(v.current, d)
}

// matrixOf is provider p's matrix: the versions and platforms the compared
// mirrors list of it (or a spec wants), a mark per compared mirror in each
// cell. It reads only what is listed already: no I/O.
func (v *providersView) matrixOf(p backends.Provider) grid.Data {
	cmp := v.compared()
	want, wanted := v.wanted[p]
	var vs []backends.Version
	if wanted {
		// The rows are the versions the spec wants, landed or not: a
		// version a destination holds that the spec does not want is no
		// gap of it.
		vs = unionVersions(nil, want.versions)
	} else {
		seen := map[string]bool{}
		for _, i := range cmp {
			h, _ := v.listingOf(p, i).loaded()
			for _, ver := range h.vs {
				if !seen[ver.String()] {
					seen[ver.String()] = true
					vs = append(vs, ver)
				}
			}
		}
		vs = v.sel.Versions.ProviderVersions(vs) // never 0.0.0, OpenTofu's "unspecified"
	}
	var plats []string
	seen := map[string]bool{}
	addPlatform := func(pl backends.Platform) {
		// A spec that names its platforms wants no others: their cells
		// would be gaps it does not have.
		if wanted && len(want.platforms) > 0 && !slices.Contains(want.platforms, pl) {
			return
		}
		if s := pl.String(); !seen[s] && v.sel.WantsPlatform(pl) {
			seen[s] = true
			plats = append(plats, s)
		}
	}
	for _, i := range cmp {
		h, _ := v.listingOf(p, i).loaded()
		for _, byPlatform := range h.archives {
			for _, a := range byPlatform {
				addPlatform(a.Platform)
			}
		}
	}
	if wanted {
		v.wantedPlatforms(p, want, addPlatform)
	}
	sort.Strings(plats)
	d := grid.Data{Rows: make([]string, len(vs)), Cols: make([]grid.Column, len(plats)), PerCell: len(cmp)}
	for c, pl := range plats {
		os, arch, _ := strings.Cut(pl, "_")
		d.Cols[c] = grid.Column{Head: pl, Narrow: [2]string{os, arch}}
	}
	d.Marks = make([][][]theme.Mark, len(vs))
	all := make([]theme.Mark, len(vs)*len(plats)*len(cmp)) // one allocation for every cell
	in := make([]cellInput, len(cmp))
	for r, ver := range vs {
		d.Rows[r] = ver.String()
		d.Marks[r] = make([][]theme.Mark, len(plats))
		for c, plat := range plats {
			v.cellInputs(in, p, cmp, d.Rows[r], plat)
			cell := all[:0:len(cmp)]
			all = all[len(cmp):]
			d.Marks[r][c] = cellMarks(in, cell)
		}
	}
	return d
}

// wantedPlatforms adds the platforms a spec wants of provider p: those it
// names, or else every platform some place (its source) lists of a wanted
// version, so a version no compared place holds has its columns.
func (v *providersView) wantedPlatforms(p backends.Provider, want wantedVersions, add func(backends.Platform)) {
	if len(want.platforms) > 0 {
		for _, pl := range want.platforms {
			add(pl)
		}
		return
	}
	for i := range v.places {
		h, _ := v.listingOf(p, i).loaded()
		for _, ver := range want.versions {
			for _, a := range h.archives[ver.String()] {
				add(a.Platform)
			}
		}
	}
}

// cellInputs fills in with what each of the mirrors in idx has for one
// package of provider p.
func (v *providersView) cellInputs(in []cellInput, p backends.Provider, idx []int, version, platform string) {
	for k, i := range idx {
		in[k] = cellInput{state: stateLoading, excluded: !v.mirrors[i].scope.Installs(p)}
		l := v.listingOf(p, i)
		if l == nil {
			continue
		}
		in[k].state = l.state
		if a, ok := l.data.archive(version, platform); ok {
			in[k].archive = &a
			in[k].verify = v.verified[verifyKey{i, a.Key()}]
		}
	}
}

func (v *providersView) listBox() (string, []string) {
	if v.list.Len() > 0 {
		return v.list.Title(), strings.Split(v.list.View(), "\n")
	}
	for _, mr := range v.mirrors {
		if !mr.listed {
			return v.list.Title(), []string{" " + v.sh.spin + " listing…"}
		}
	}
	return v.list.Title(), []string{v.sh.styles.Dim.Render(" no providers")}
}

func (v *providersView) gridBox() (string, []string) {
	if !v.hasCurrent {
		return "Matrix", v.emptyLines()
	}
	if v.lock != nil {
		return v.lockTitle(), v.lockGrid(v.gridLines("archives", func(int) string { return "" }))
	}
	return v.gridTitle(v.current.String()), v.gridLines("archives", func(int) string { return "" })
}

// emptyLines explains an empty screen: still listing, or nothing to list
// and what to do about it.
func (v *providersView) emptyLines() []string {
	s := v.sh.styles
	if len(v.mirrors) == 0 {
		return []string{s.Dim.Render(" None of the places given holds providers; m shows the modules.")}
	}
	var lines []string
	for i, mr := range v.mirrors {
		p := v.places[i]
		switch {
		case !mr.listed:
			lines = append(lines, fmt.Sprintf(" %s listing providers in [%d] %s…", v.sh.spin, p.num, p.name))
		case mr.err != nil:
			lines = append(lines, s.Bad.Render(fmt.Sprintf(" ✗ [%d] %v", p.num, mr.err)))
		case mr.noCatalogue:
			lines = append(lines, s.Warn.Render(fmt.Sprintf(" [%d] %s cannot list its providers:", p.num, p.name)),
				s.Warn.Render("     name them with --provider HOST/NAMESPACE/TYPE"))
		case len(mr.providers) == 0:
			lines = append(lines, s.Dim.Render(fmt.Sprintf(" [%d] %s holds no providers", p.num, p.name)))
		}
	}
	return lines
}

func (v *providersView) busy() bool {
	if v.base.busy() || len(v.verifying) > 0 || v.newestPending > 0 || v.surveying || v.lock != nil && v.lock.running {
		return true
	}
	for _, mr := range v.mirrors {
		if !mr.listed {
			return true
		}
	}
	return false
}

// jobEvent records what a landed archive was checked against, and lists
// its destination again once the provider's index is written.
func (v *providersView) jobEvent(j *sync.TrackedJob, ev sync.Event) tea.Cmd {
	// The matrix changes in the frame that shows the job done: the
	// archive is added to what mirror i is known to hold at once, and the
	// listing that follows its index documents confirms it.
	if _, idle := ev.(sync.Idle); idle && v.lock != nil {
		return v.lockTie() // the gaps jobs filled
	}
	switch ev := ev.(type) {
	case sync.JobDone:
		if j == nil || j.Info.Name != "" {
			return nil // not a provider package
		}
		i := v.placeIndex(j.Info.Dst)
		if i < 0 {
			return nil
		}
		res := ev.Result
		f := sync.Finding{Package: j.Info.Package, Status: sync.StatusOK, Result: &res}
		v.verified[verifyKey{i, j.Info.Package.Key()}] = &verification{finding: f, origin: "transfer"}
		v.landed(i, backends.Archive{Package: j.Info.Package, Layout: backends.Packed, Size: ev.Bytes})
		return v.markDirty(i, j.Info.Package.Provider)
	case sync.IndexWritten:
		return v.markDirty(v.placeIndex(ev.Dst), ev.Provider)
	}
	return nil
}
