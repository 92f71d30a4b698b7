package ui

import (
	"errors"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/regserve"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
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
	// kept are the versions whose provenance the mirror keeps, where it
	// lists them at once (a directory, a bucket); nil where unknown.
	kept map[string]bool
}

// withheld says why serve's providers.v1 leaves version out of this
// mirror, or "" where it offers it or that is not known. As ls notes it,
// only where the mirror keeps the provenance of some other version: one
// that keeps none (filled by tofu providers mirror) would say it of every
// cell, and serve's 404 for the provider says why.
func (h provHolding) withheld(version string) string {
	if len(h.kept) == 0 || h.kept[version] || h.archives[version] == nil {
		return ""
	}
	return regserve.Withheld
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
	// kind is the whole view: this one, or the spec or lock view that
	// embeds it (provKind).
	kind provKind
	// catGen is the latest round of catalogues asked for (ctrl+r asks
	// again); catalogues of an older round are dropped.
	catGen uint64
	// items are the providers listed, as the list has them.
	items []backends.Provider
	// surveying: a step of the survey (gaps.go) is under way.
	surveying bool
}

var matrixLegend = []grid.LegendItem{
	markItem(theme.MarkVerified), markItem(theme.MarkStated), markItem(theme.MarkUnverified), markItem(theme.MarkMissing),
	markItem(theme.MarkDiffers), markItem(theme.MarkFailed), markItem(theme.MarkNotApplicable),
	markItem(theme.MarkLoading), markItem(theme.MarkError),
}

func markItem(mk theme.Mark) grid.LegendItem {
	return grid.LegendItem{Mark: mk, Long: mk.Label(), Short: mk.Short()}
}

// provKind is what each kind of providers view (this one, the spec view
// and the lock view) does its own way. The shared code asks v.kind, which
// is the whole view, so that what the spec and lock views override is
// what runs (a Go method of an embedded type cannot call its embedder's).
type provKind interface {
	Init() tea.Cmd
	// rebuild recomputes the matrix of the provider shown.
	rebuild()
	// matrixOf is provider p's matrix, without I/O.
	matrixOf(p backends.Provider) grid.Data
	// noteGaps and noteVersion say beside p in the list what it lacks and
	// its newest version; survey lists every provider for them.
	noteGaps(p backends.Provider)
	noteVersion(p backends.Provider, ver backends.Version)
	survey() tea.Cmd
	// providerUnion is the list.
	providerUnion() []backends.Provider
	// listedVersions narrows the versions of p a place that keeps every
	// release (a registry) lists, before its archives are listed.
	listedVersions(p backends.Provider, vs []backends.Version) []backends.Version
	// cellNotes are the lines Details adds to the cell of row's version.
	cellNotes(row string) []string
	// detailMarks are the marks Details gives the places of in (in the
	// order order lists them) for row's version on plat, as the matrix
	// marks them, and what ≠ means there ("": its hashes differ from the
	// first place's).
	detailMarks(in []cellInput, order []int, row, plat string) ([]theme.Mark, string)
}

var (
	_ provKind = (*providersView)(nil)
	_ provKind = (*specView)(nil)
	_ provKind = (*lockView)(nil)
)

// newView is the Providers view cfg asks for: the lock view on lock
// files, the spec view on a spec, else the plain one.
func newView(sh *shell, cfg Config) view {
	switch {
	case cfg.Locks != nil:
		return newLockView(sh, cfg)
	case cfg.Spec != nil:
		return newSpecView(sh, cfg)
	}
	v := newProviders(sh, cfg, nil)
	v.kind = v
	return v
}

// newProviders is the shared machinery of every providers view; tune, when
// set, changes the places compared and the list's and grid's options
// before they are built. The caller sets v.kind.
func newProviders(sh *shell, cfg Config, tune func(ps []place, lo *list.Options[backends.Provider], g *grid.Options)) *providersView {
	v := &providersView{sel: cfg.Selection, hashing: cfg.Engine.Hashing(),
		verified: map[verifyKey]*verification{}, verifying: map[verifyKey]bool{}, slots: make(chan struct{}, 4),
		newest: map[backends.Provider]backends.Version{}}
	var ps []place
	compared := 0
	for i, mr := range cfg.Mirrors {
		w, _ := mr.Reader.(backends.Writer)
		v.mirrors = append(v.mirrors, &mirror{reader: mr.Reader, writer: w, scope: mr.Scope})
		cmp := compared < 4 && !mr.Aside
		if cmp {
			compared++
		}
		ps = append(ps, place{num: numbered(mr.Number, i), name: placeName(mr.Reader.String()), kind: mr.Kind, compared: cmp, writable: w != nil})
	}
	if compared == 0 && len(ps) > 0 {
		ps[0].compared = true // every one aside: the first still is
	}
	lo := list.Options[backends.Provider]{Name: "Providers", Keys: list.DefaultKeyMap("open matrix"),
		Short: backends.Provider.ShortString, Full: backends.Provider.String, NoMatch: " no provider matches"}
	gro := grid.Options{Keys: grid.CellKeys(), Legend: matrixLegend}
	if tune != nil {
		tune(ps, &lo, &gro)
	}
	l := list.New(sh.styles, lo)
	g := grid.New(sh.styles, gro)
	v.base = newBase[backends.Provider, provHolding](sh, viewProviders, "mirror", "provider", ps, l, g)
	v.base.load = v.loadProvider
	v.base.rebuild = func() { v.kind.rebuild() }
	v.base.hint = func(i int, _ backends.Provider) string { return "tfmirror ls " + v.places[i].name }
	v.base.note = func(p backends.Provider, ver backends.Version) { v.kind.noteVersion(p, ver) }
	v.base.onLoaded = func(p backends.Provider) {
		if !v.hasCurrent || p != v.current {
			v.kind.noteGaps(p) // rebuild notes the provider shown's
		}
	}
	return v
}

// providers is the shared machinery of a providers view of any kind.
func (v *providersView) providers() *providersView { return v }

// The plain view narrows nothing and adds no notes.
func (v *providersView) listedVersions(_ backends.Provider, vs []backends.Version) []backends.Version {
	return vs
}
func (v *providersView) cellNotes(string) []string { return nil }

func (v *providersView) detailMarks(in []cellInput, _ []int, _, _ string) ([]theme.Mark, string) {
	return cellMarks(in, nil), ""
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
	return viewWords{places: " ─ mirrors: ", list: "Providers", item: "provider", listNote: listNote, grid: "Matrix", jobsEmpty: jobs.DefaultEmpty, marks: "mirror", legend: matrixLegend}
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
	return tea.Batch(cmds...)
}

func (v *providersView) update(msg viewMsg) tea.Cmd {
	switch msg := msg.(type) {
	case catalogueMsg:
		return v.updateCatalogue(msg)
	case verifiedMsg:
		v.updateVerified(msg)
		return nil
	case surveyMsg:
		return v.updateSurvey(msg)
	case newestMsg:
		v.newestPending--
		for p, ver := range msg.newest {
			v.kind.noteVersion(p, ver)
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
		return tea.Batch(append(later, cmd, v.kind.survey())...)
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

func (v *providersView) busy() bool {
	if v.base.busy() || len(v.verifying) > 0 || v.newestPending > 0 || v.surveying {
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
func (v *providersView) jobEvent(j *engine.TrackedJob, ev engine.Event) tea.Cmd {
	// The matrix changes in the frame that shows the job done: the
	// archive is added to what mirror i is known to hold at once, and the
	// listing that follows its index documents confirms it.
	switch ev := ev.(type) {
	case engine.JobDone:
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
	case engine.IndexWritten:
		return v.markDirty(v.placeIndex(ev.Dst), ev.Provider)
	}
	return nil
}
