package ui

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The lock view: the Providers view opened with lock files (ui --lock,
// --from). The list is every locked provider, also those no place holds;
// each matrix has the locked versions as rows and, as columns, the
// platforms the lock covers: those its hashes are tied to (lockcheck.TieIndex,
// the rule `check` applies) and any --platform. A gap ○ is a package init
// would miss on that platform. L queues every gap from a chosen source
// (lockview_gaps.go); C completes the lock files from the places
// (lockcomplete*.go); lockview_render.go draws the view.

// lockView is the Providers view on lock files: the shared providers
// machinery, with the lock's state and what the lock view does its own
// way (provKind, and the roles the Model asks for).
type lockView struct {
	*providersView
	lock *lockState
}

func newLockView(sh *shell, cfg Config) *lockView {
	v := &lockView{lock: newLockState(cfg.Locks)}
	v.providersView = newProviders(sh, cfg, func(_ []place, _ *list.Options[backends.Provider], g *grid.Options) {
		g.Legend = lockLegend
	})
	v.kind = v
	v.list.SetItems(v.providerUnion())
	return v
}

// Init lists every place's providers and ties the lock.
func (v *lockView) Init() tea.Cmd { return tea.Batch(v.providersView.Init(), v.lockTie()) }

func (v *lockView) update(msg viewMsg) tea.Cmd {
	if msg, ok := msg.(lockTiedMsg); ok {
		return v.updateLockTied(msg)
	}
	return v.providersView.update(msg)
}

func (v *lockView) busy() bool {
	return v.providersView.busy() || v.lock.running || v.lock.filling
}

// jobEvent ties the lock again once the jobs (the gaps L queued) are done.
func (v *lockView) jobEvent(j *engine.TrackedJob, ev engine.Event) tea.Cmd {
	if _, idle := ev.(engine.Idle); idle {
		return v.lockTie()
	}
	return v.providersView.jobEvent(j, ev)
}

func (v *lockView) words() viewWords {
	w := v.providersView.words()
	w.listNote = "" // the lock view's notes say what the lock's packages lack
	w.legend = lockLegend
	return w
}

// lockLegend is the lock view's: each place is compared with the lock,
// so ≠ marks a package other than the locked one.
var lockLegend = func() []grid.LegendItem {
	l := slices.Clone(matrixLegend)
	for i := range l {
		if l[i].Mark == theme.MarkDiffers {
			l[i].Long, l[i].Short = "not the locked package", "not locked"
		}
	}
	return l
}()

func (v *lockView) gridBox() (string, []string) {
	if !v.hasCurrent {
		return v.providersView.gridBox()
	}
	return v.lockTitle(), v.lockGrid(v.gridLines("archives", func(int) string { return "" }))
}

func (v *lockView) rebuild() {
	if !v.hasCurrent {
		v.grid.SetData(grid.Data{})
		return
	}
	v.rebuildLock()
}

// The list's notes say the locked version and what the lock's packages
// lack (updateLockTied), not the newest version and the matrix's gaps; the
// lock is tied instead of surveyed.
func (v *lockView) noteGaps(backends.Provider)                      {}
func (v *lockView) noteVersion(backends.Provider, backends.Version) {}
func (v *lockView) survey() tea.Cmd                                 { return nil }
func (v *lockView) providerUnion() []backends.Provider              { return v.lockedProviders() }
func (v *lockView) cellNotes(row string) []string                   { return v.lockDetails(row) }

// detailMarks are the matrix's: each place compared with the lock.
func (v *lockView) detailMarks(in []cellInput, order []int, row, plat string) ([]theme.Mark, string) {
	return v.lockMarks(in, order, lockKey{v.current, row}, plat), "not the locked package: init there fails its checksum"
}

// listedVersions: a registry keeps every release: list the locked ones.
func (v *lockView) listedVersions(p backends.Provider, vs []backends.Version) []backends.Version {
	return v.lock.only(p, vs)
}

// Locks are the lock files the UI opens on.
type Locks struct {
	// Files name the lock files, for the title and messages.
	Files []string
	// Entries are every file's providers, each with the file in its
	// Locked.Source.
	Entries []LockEntry
}

// LockEntry is one provider locked in one file.
type LockEntry struct {
	Provider backends.Provider
	Locked   sync.Locked
}

// lockKey is a locked provider version.
type lockKey struct {
	p backends.Provider
	v string
}

// lockTied is what the places hold of one locked provider version, and
// the lock's hashes tied to platforms with it.
type lockTied struct {
	ties lockcheck.LockTies
	// held is, for each place, its archives of the version by platform.
	held []map[string]backends.Archive
	// differs is, for each place, the platforms whose archive is not the
	// package the lock names (differsFromLock): init fails its checksum.
	differs []map[string]bool
	errs    []error
	// platOf is the platform of each locked hash tied to one.
	platOf map[hashing.Hash]string
}

// lockState is what the lock view knows of the lock files.
type lockState struct {
	locks *Locks
	// locked is each provider version's entry, the hashes of every file
	// that locks it merged; versions, each provider's locked versions,
	// newest first.
	locked   map[lockKey]sync.Locked
	versions map[backends.Provider][]backends.Version
	order    []backends.Provider
	// tied is the last tying of every key (nil before the first).
	tied map[lockKey]*lockTied
	// gen numbers the tyings asked for; running: one is under way, again:
	// another is wanted when it ends.
	gen     uint64
	running bool
	again   bool
	// filling: C is hashing or writing; none are the platforms it found
	// no place holding; learned, the hashes it computed, by key and
	// platform, for the tying.
	filling bool
	none    []fillTarget
	learned map[lockKey]map[string][]hashing.Hash
}

// lockTiedMsg is a tying of every locked provider version.
type lockTiedMsg struct {
	to
	gen  uint64
	tied map[lockKey]*lockTied
}

func newLockState(l *Locks) *lockState {
	s := &lockState{locks: l, locked: map[lockKey]sync.Locked{}, versions: map[backends.Provider][]backends.Version{}}
	for _, e := range l.Entries {
		k := lockKey{e.Provider, e.Locked.Version.String()}
		cur, ok := s.locked[k]
		if !ok {
			if _, seen := s.versions[e.Provider]; !seen {
				s.order = append(s.order, e.Provider)
			}
			s.versions[e.Provider] = unionVersions(s.versions[e.Provider], []backends.Version{e.Locked.Version})
			s.locked[k] = sync.Locked{Version: e.Locked.Version, Hashes: e.Locked.Hashes, Source: e.Locked.Source, Malformed: e.Locked.Malformed}
			continue
		}
		cur.Hashes = hashing.SortUnique(append(append([]hashing.Hash(nil), cur.Hashes...), e.Locked.Hashes...))
		cur.Malformed = append(slices.Clip(cur.Malformed), e.Locked.Malformed...)
		if !strings.Contains(cur.Source, e.Locked.Source) {
			cur.Source += ", " + e.Locked.Source
		}
		s.locked[k] = cur
	}
	backends.SortProviders(s.order)
	return s
}

// keys is every locked provider version, in order.
func (s *lockState) keys() []lockKey {
	var out []lockKey
	for _, p := range s.order {
		for _, v := range s.versions[p] {
			out = append(out, lockKey{p, v.String()})
		}
	}
	return out
}

// lockTie asks for the lock to be tied again (after jobs landed); one
// tying runs at a time.
func (v *lockView) lockTie() tea.Cmd {
	s := v.lock
	if s.running {
		s.again = true
		return nil
	}
	s.running, s.again = true, false
	s.gen++
	gen, keys, ctx := s.gen, s.keys(), v.sh.ctx
	locked := make([]sync.Locked, len(keys))
	for i, k := range keys {
		locked[i] = s.locked[k]
	}
	readers := make([]backends.Reader, len(v.mirrors))
	for i, mr := range v.mirrors {
		readers[i] = mr.reader
	}
	named := v.sel.Platforms
	learned := make([]map[string][]hashing.Hash, len(keys))
	for i, k := range keys {
		learned[i] = s.learned[k]
	}
	return func() tea.Msg { return tieLocks(ctx, gen, keys, locked, learned, readers, named) }
}

// tieLocks lists every place's archives of each locked provider version
// and ties the lock's hashes with them and the signed SHA256SUMS the places
// keep or sign with; a few versions at a time.
func tieLocks(ctx context.Context, gen uint64, keys []lockKey, locked []sync.Locked, learned []map[string][]hashing.Hash, readers []backends.Reader, named []backends.Platform) lockTiedMsg {
	out := make([]*lockTied, len(keys))
	sync.Parallel(ctx, 4, len(keys), func(i int) {
		k := keys[i]
		idx := lockcheck.NewTieIndex(k.p, locked[i].Version)
		t := &lockTied{held: make([]map[string]backends.Archive, len(readers)), errs: make([]error, len(readers))}
		listed := make([][]backends.Archive, len(readers))
		for j, r := range readers {
			as, err := idx.AddPlace(ctx, r, provenance.Options{})
			t.held[j], listed[j] = map[string]backends.Archive{}, as
			for _, a := range as {
				t.held[j][a.Platform.String()] = a
			}
			if err != nil && !errors.Is(err, backends.ErrNoCatalogue) {
				t.errs[j] = err
			}
		}
		learn(idx, k, locked[i].Version, learned[i])
		t.ties = idx.Tie(locked[i])
		if len(t.ties.Unplaced)+len(t.ties.Untied) > 0 {
			// Archives that state no hash are read where that is cheap:
			// a local place's (a mirror terraform providers mirror wrote
			// keeps no hashes until tfmirror indexes it).
			for j, r := range readers {
				if _, local := r.(backends.LocalPather); local {
					if err := idx.AddHashed(ctx, r, listed[j], hashing.Options{}); err != nil && t.errs[j] == nil {
						t.errs[j] = err
					}
				}
			}
			t.ties = idx.Tie(locked[i])
		}
		t.platOf = tiedPlatforms(idx, locked[i].Hashes)
		t.differs = make([]map[string]bool, len(readers))
		for j := range readers {
			t.differs[j] = map[string]bool{}
			for plat, a := range t.held[j] {
				// A platform --platform names is one the lock is about: an
				// archive there with none of the locked hashes fails
				// init's checksum, as check says.
				t.differs[j][plat] = differsFromLock(a, locked[i].Hashes, idx) ||
					slices.Contains(named, a.Platform) && len(a.Hashes()) > 0 && !lockNames(a, locked[i].Hashes)
			}
		}
		out[i] = t
	})
	msg := lockTiedMsg{to: to(viewProviders), gen: gen, tied: map[lockKey]*lockTied{}}
	for i, k := range keys {
		if out[i] != nil {
			msg.tied[k] = out[i]
		}
	}
	return msg
}

// updateLockTied takes a tying in, and starts the next one if jobs landed
// meanwhile.
func (v *lockView) updateLockTied(msg lockTiedMsg) tea.Cmd {
	s := v.lock
	s.running = false
	if msg.gen == s.gen {
		s.tied = msg.tied
		for _, p := range s.order {
			ver, long, short, kind := v.lockStatus(p)
			v.list.SetNote(p, ver)
			v.list.SetBadge(p, long, short, kind)
		}
		v.rebuild()
	}
	if s.again {
		return v.lockTie()
	}
	return nil
}

// lockPlatforms are the columns of p's matrix: the platforms the lock is
// about (lockcheck.LockTies.About, check's rule): those of --platform, or
// else those p's locked hashes are tied to, in any locked version.
func (v *lockView) lockPlatforms(p backends.Provider) []string {
	seen := map[string]bool{}
	var out []string
	add := func(pl backends.Platform) {
		if s := pl.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, ver := range v.lock.versions[p] {
		if t := v.lock.tied[lockKey{p, ver.String()}]; t != nil {
			for _, pl := range t.ties.About(v.sel.Platforms) {
				add(pl)
			}
		}
	}
	for _, pl := range v.sel.Platforms {
		add(pl)
	}
	sort.Strings(out)
	return out
}

// differsFromLock reports whether a is not the package the lock names for
// its platform: a states a hash of a scheme the lock holds for that
// platform (tied through idx), and the lock names none of a's hashes. An
// archive that states nothing, or only schemes the lock has none of for
// its platform (a mirror stating h1: where the lock holds the registry's
// zh:), is not judged.
func differsFromLock(a backends.Archive, locked []hashing.Hash, idx *lockcheck.TieIndex) bool {
	schemes := map[hashing.Scheme]bool{}
	for _, h := range locked {
		if p, ok := idx.PlatformOf(h); ok && p == a.Platform {
			schemes[h.Scheme()] = true
		}
	}
	compared := false
	for _, h := range a.Hashes() {
		if slices.Contains(locked, h) {
			return false
		}
		compared = compared || schemes[h.Scheme()]
	}
	return compared
}

// lockedProviders is the list of the lock view: every locked provider,
// held or not, narrowed by --provider.
func (v *lockView) lockedProviders() []backends.Provider {
	var out []backends.Provider
	for _, p := range v.lock.order {
		if matchesFilters(v.sel.Providers, p) {
			out = append(out, p)
		}
	}
	return out
}

func matchesFilters(fs []backends.ProviderFilter, p backends.Provider) bool {
	if len(fs) == 0 {
		return true
	}
	return slices.ContainsFunc(fs, func(f backends.ProviderFilter) bool { return f.Matches(p) })
}

// only is the versions of vs p has locked.
func (s *lockState) only(p backends.Provider, vs []backends.Version) []backends.Version {
	var out []backends.Version
	for _, v := range vs {
		if _, ok := s.locked[lockKey{p, v.String()}]; ok {
			out = append(out, v)
		}
	}
	return out
}
