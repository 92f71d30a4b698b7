package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The lock view: the Providers view opened with lock files (ui --lock,
// --from). The list is every locked provider, also those no place holds;
// each matrix has the locked versions as rows and, as columns, the
// platforms the lock covers: those its hashes are tied to (lockcheck.TieIndex,
// the rule `check` applies) and any --platform. A gap ○ is a package init
// would miss on that platform. L queues every gap from a chosen source.

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

// lockState is the lock view's part of the Providers view.
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
func (v *providersView) lockTie() tea.Cmd {
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
func (v *providersView) updateLockTied(msg lockTiedMsg) tea.Cmd {
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
func (v *providersView) lockPlatforms(p backends.Provider) []string {
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

// lockGap is a package a compared place lacks that the lock says init
// needs: what L queues.
type lockGap struct {
	key   lockKey
	plat  string
	place int
	// differs: the place holds an archive of the package, but one whose
	// stated hashes the lock does not name (init fails its checksum).
	differs bool
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

// lockGaps are the gaps of p, or of every locked provider when p is nil.
func (v *providersView) lockGaps(only *backends.Provider) []lockGap {
	var out []lockGap
	for _, k := range v.lock.keys() {
		if only != nil && k.p != *only {
			continue
		}
		t := v.lock.tied[k]
		if t == nil {
			continue
		}
		for _, plat := range v.lockPlatforms(k.p) {
			for _, i := range v.compared() {
				if t.errs[i] != nil || !v.mirrors[i].scope.Installs(k.p) {
					continue
				}
				if _, ok := t.held[i][plat]; !ok || t.differs[i][plat] {
					out = append(out, lockGap{key: k, plat: plat, place: i, differs: ok})
				}
			}
		}
	}
	return out
}

// lockNote is what the list says of p: its locked version, and how many
// packages the compared places lack, "ok", or that no place holds it.
func (v *providersView) lockNote(p backends.Provider) string {
	ver, long, _, _ := v.lockStatus(p)
	if long == "" {
		return ver
	}
	return ver + " " + long
}

// lockStatus is lockNote in parts: the version (the list's note) and the
// badge, long and short (at 80 columns), with its kind.
func (v *providersView) lockStatus(p backends.Provider) (ver, long, short string, kind int) {
	vs := v.lock.versions[p]
	ver = vs[0].String()
	if len(vs) > 1 {
		ver += fmt.Sprintf(" +%d", len(vs)-1)
	}
	held := false
	for _, k := range v.lock.keys() {
		if t := v.lock.tied[k]; k.p == p && t != nil {
			for _, h := range t.held {
				held = held || len(h) > 0
			}
		}
	}
	gaps := v.lockGaps(&p)
	differ := 0
	for _, g := range gaps {
		if g.differs {
			differ++
		}
	}
	switch n := len(gaps) - differ; {
	case v.lock.tied == nil:
		return ver, "", "", 0
	case !held:
		return ver, "not in any", "∅", 2
	case differ > 0 && n > 0:
		return ver, fmt.Sprintf("%d missing, %d differ", n, differ), fmt.Sprintf("○%d≠%d", n, differ), 1
	case differ > 0:
		return ver, fmt.Sprintf("%d differ", differ), fmt.Sprintf("≠%d", differ), 1
	case n > 0:
		return ver, fmt.Sprintf("%d missing", n), fmt.Sprintf("○%d", n), 1
	default:
		return ver, "ok", "✓", 0
	}
}

// rebuildLock is rebuild in the lock view: the locked versions as rows,
// the lock's platforms as columns.
func (v *providersView) rebuildLock() {
	cmp := v.compared()
	vs := v.lock.versions[v.current]
	plats := v.lockPlatforms(v.current)
	d := grid.Data{Rows: make([]string, len(vs)), Cols: make([]grid.Column, len(plats)), PerCell: len(cmp)}
	for c, p := range plats {
		os, arch, _ := strings.Cut(p, "_")
		d.Cols[c] = grid.Column{Head: p, Narrow: [2]string{os, arch}}
	}
	d.Marks = make([][][]theme.Mark, len(vs))
	in := make([]cellInput, len(cmp))
	for r, ver := range vs {
		d.Rows[r] = ver.String()
		d.Marks[r] = make([][]theme.Mark, len(plats))
		for c, plat := range plats {
			v.cellInputs(in, v.current, cmp, d.Rows[r], plat)
			d.Marks[r][c] = v.lockMarks(in, cmp, lockKey{v.current, d.Rows[r]}, plat)
		}
	}
	v.grid.SetData(d)
}

// lockMarks are a lock view cell's marks: each place compared with the
// lock, not with the first place. The place holding a package other than
// the locked one is marked ≠; a place holding the locked one keeps its
// agreeing mark, whatever the others hold.
func (v *providersView) lockMarks(in []cellInput, cmp []int, k lockKey, plat string) []theme.Mark {
	marks := cellMarks(in, nil)
	t := v.lock.tied[k]
	if t == nil {
		return marks
	}
	for j, i := range cmp {
		if in[j].archive == nil || in[j].verify.failed() {
			continue
		}
		switch {
		case t.differs[i][plat]:
			marks[j] = theme.MarkDiffers
		case marks[j] == theme.MarkDiffers || marks[j] == theme.MarkUnverified:
			if lockNames(*in[j].archive, v.lock.locked[k].Hashes) {
				marks[j] = agreeing(in[j])
			}
		}
	}
	return marks
}

// lockNames reports whether the lock names one of a's hashes.
func lockNames(a backends.Archive, locked []hashing.Hash) bool {
	return slices.ContainsFunc(a.Hashes(), func(h hashing.Hash) bool { return slices.Contains(locked, h) })
}

// lockLines are the lines under the matrix of the provider shown: which
// lock files lock it, and what of its lock is tied to no package.
func (v *providersView) lockLines() []string {
	s := v.sh.styles
	var lines []string
	var untied, unplaced []lockcheck.UntiedHash
	tying := false
	for _, ver := range v.lock.versions[v.current] {
		t := v.lock.tied[lockKey{v.current, ver.String()}]
		if t == nil {
			tying = true
			continue
		}
		untied, unplaced = append(untied, t.ties.Untied...), append(unplaced, t.ties.Unplaced...)
	}
	switch {
	case tying:
		lines = append(lines, s.Dim.Render(" "+v.sh.spin+" tying the locked hashes to platforms…"))
	case len(v.lockPlatforms(v.current)) == 0:
		lines = append(lines, s.Warn.Render(" no place ties a locked hash to a platform: add the origin registry:// or name --platform"))
	}
	if len(unplaced) > 0 {
		lines = append(lines, s.Bad.Render(fmt.Sprintf(" locked h1: of no held package: %d (init fails on a platform no place holds)", len(unplaced))))
	}
	if !tying {
		lines = append(lines, v.completeLines()...)
	}
	if len(untied) > 0 {
		lines = append(lines, s.Dim.Render(fmt.Sprintf(" untied locked hashes: %d (%s)", len(untied), untiedWhat(untied))))
	}
	return lines
}

// untiedWhat says briefly what untied hashes are.
func untiedWhat(us []lockcheck.UntiedHash) string {
	files := 0
	for _, u := range us {
		if u.File != "" {
			files++
		}
	}
	switch {
	case files == len(us):
		return "zh: of a non-package file"
	case files > 0:
		return fmt.Sprintf("%d of non-package files, %d of nothing any place holds", files, len(us)-files)
	}
	return "zh: of nothing any place holds"
}

// lockDetails are Details' lines about the lock for the cell shown.
func (v *providersView) lockDetails(row string) []string {
	k := lockKey{v.current, row}
	l, ok := v.lock.locked[k]
	if !ok {
		return nil
	}
	out := []string{fmt.Sprintf("locked by %s: %d hashes", l.Source, len(l.Hashes))}
	t := v.lock.tied[k]
	if t == nil {
		return out
	}
	for i, err := range t.errs {
		if err != nil {
			out = append(out, fmt.Sprintf("[%d] cannot tie: %v", v.places[i].num, err))
		}
	}
	for _, u := range t.ties.Unplaced {
		out = append(out, "h1: of no held package: "+u.Hash.Short())
	}
	for i := range t.held {
		for _, plat := range v.lockPlatforms(k.p) {
			if t.differs[i][plat] {
				out = append(out, fmt.Sprintf("[%d] %s: ≠ not the locked package (none of its hashes is locked): init fails its checksum; L, then f, replaces it", v.places[i].num, plat))
			}
		}
	}
	if n := len(t.ties.Untied); n > 0 {
		out = append(out, fmt.Sprintf("untied locked hashes: %d (%s)", n, untiedWhat(t.ties.Untied)))
		for _, u := range t.ties.Untied {
			out = append(out, "  "+u.Why())
		}
	}
	return out
}

// lockWords name what L queues.
var lockWords = queue.Words{Unit: "package(s) missing or differing", Place: "source", Verb: "copy", Jobs: "job(s)", From: true,
	Nothing: "the compared mirrors hold every package the lock needs",
	NoDest:  "no place holds a package the compared mirrors lack"}

// lockRequest asks the queue dialog to copy every gap of the lock from a
// source the user picks: each place that holds some of them.
func (v *providersView) lockRequest() (queue.Request, bool) {
	if v.lock.tied == nil {
		v.sh.setStatus(statusInfo, "still tying the locked hashes to platforms: L works when that is done")
		return queue.Request{}, false
	}
	gaps := v.lockGaps(nil)
	if len(gaps) == 0 {
		v.sh.setStatus(statusInfo, "no gaps: "+lockWords.Nothing)
		return queue.Request{}, false
	}
	var srcs []int
	for i := range v.places {
		if slices.ContainsFunc(gaps, func(g lockGap) bool { return g.place != i && v.lockSource(g, i) }) {
			srcs = append(srcs, i)
		}
	}
	if len(srcs) == 0 {
		v.sh.setStatus(statusBad, fmt.Sprintf("%d gaps, and %s: add the origin (registry://HOST) or a mirror that holds them", len(gaps), lockWords.NoDest))
		return queue.Request{}, false
	}
	places := make([]queue.Place, len(srcs))
	for k, i := range srcs {
		places[k] = v.queuePlace(i)
	}
	subject := "1 lock file"
	if n := len(v.lock.locks.Files); n != 1 {
		subject = fmt.Sprintf("%d lock files", n)
	}
	return queue.Request{Words: lockWords, N: len(gaps), Subject: subject, Dests: places,
		Plan: func(k int) queue.Plan { return v.lockPlan(gaps, srcs[k]) }}, true
}

// lockSource reports whether place i holds g's package as a zip.
func (v *providersView) lockSource(g lockGap, i int) bool {
	t := v.lock.tied[g.key]
	a, ok := t.held[i][g.plat]
	return ok && a.Layout == backends.Packed && !t.differs[i][g.plat]
}

// lockPlan copies from place src each gap it holds into the compared
// place that lacks it, and, forced (f, as curation's dialog does), also
// replaces each package a compared place holds other than the locked one.
func (v *providersView) lockPlan(gaps []lockGap, src int) queue.Plan {
	s := v.sh.styles
	var q queue.Plan
	var differ []sync.Transfer
	lacks, readOnly := 0, 0
	for _, g := range gaps {
		dst := v.mirrors[g.place].writer
		switch {
		case dst == nil:
			readOnly++
		case g.place == src || !v.lockSource(g, src):
			lacks++
		case g.differs:
			differ = append(differ, sync.Transfer{Src: v.mirrors[src].reader, Dst: dst, Archive: v.lock.tied[g.key].held[src][g.plat], Force: true})
		default:
			t := sync.Transfer{Src: v.mirrors[src].reader, Dst: dst, Archive: v.lock.tied[g.key].held[src][g.plat]}
			q.Run = append(q.Run, t)
			t.Force = true
			q.Forced = append(q.Forced, t)
		}
	}
	for _, t := range differ {
		q.Forced = append(q.Forced, t)
	}
	q.Need, q.Work = fmt.Sprintf("%d missing to copy", len(q.Run)), len(q.Forced)
	if n := len(differ); n > 0 {
		q.Need += fmt.Sprintf(", %d differ from the lock", n)
		q.Nothing = fmt.Sprintf("%d differ from the lock: press f to replace them", n)
	}
	if len(q.Forced) > 0 {
		q.From = []queue.Source{{Place: v.queuePlace(src), N: len(q.Run)}}
	}
	var notes []queue.Note
	if lacks > 0 {
		notes = append(notes, queue.Note{Style: s.Warn, Text: fmt.Sprintf("○ %d it does not hold as the locked zip: skipped (pick another source for them)", lacks)})
	}
	if readOnly > 0 {
		notes = append(notes, queue.Note{Style: s.Dim, Text: fmt.Sprintf("○ %d in read-only places: skipped", readOnly)})
	}
	q.Notes, q.ForceNotes = notes, slices.Clone(notes)
	if n := len(differ); n > 0 {
		q.Notes = append(q.Notes, queue.Note{Style: s.Warn, Text: fmt.Sprintf("≠ %d differ from the lock: skipped (f replaces them)", n)})
		q.ForceNotes = append(q.ForceNotes, queue.Note{Style: s.Bad, Text: fmt.Sprintf("≠ %d differ from the lock: will be REPLACED (force)", n)})
	}
	return q
}

// openLockGaps opens the queue dialog on the lock's gaps (L).
func (m *Model) openLockGaps() {
	v, ok := m.views[viewProviders].(*providersView)
	if !ok || v.lock == nil {
		return
	}
	if req, ok := v.lockRequest(); ok {
		d := queue.New(req)
		m.dialog = &d
	}
}

// lockedProviders is the list of the lock view: every locked provider,
// held or not, narrowed by --provider.
func (v *providersView) lockedProviders() []backends.Provider {
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

// lockTitle names the provider shown, its locked versions, its gaps and
// the places compared.
func (v *providersView) lockTitle() string {
	var vs []string
	for _, ver := range v.lock.versions[v.current] {
		vs = append(vs, ver.String())
	}
	// The gaps come first: at 80 columns the title is cut at the end.
	title := v.current.String()
	if _, long, _, _ := v.lockStatus(v.current); long != "" {
		title += " ─ " + long // the words the list says
	}
	title += " ─ locked " + strings.Join(vs, ", ")
	var nums []string
	for _, i := range v.compared() {
		nums = append(nums, fmt.Sprint(v.places[i].num))
	}
	return title + " ─ compare " + strings.Join(nums, " ↔ ")
}

// lockGrid puts the lock's lines (lockLines) in the blank lines between
// the matrix's rows and its legend, or after a grid that has no legend.
func (v *providersView) lockGrid(lines []string) []string {
	extra := v.lockLines()
	if len(v.grid.Data().Rows) == 0 {
		return append(lines, extra...)
	}
	last := len(lines) - 1 // the legend
	free := 0
	for i := last - 1; i >= 0 && strings.TrimSpace(lines[i]) == "" && free < len(extra)+1; i-- {
		free++
	}
	if free <= len(extra) {
		return lines // no room: Details shows them
	}
	copy(lines[last-len(extra):last], extra)
	return lines
}
