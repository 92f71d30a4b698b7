package ui

import (
	"fmt"
	"slices"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/queue"
)

// The lock view's gaps: the packages init would miss, and L, which
// queues them from a source the user picks.

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

// lockGaps are the gaps of p, or of every locked provider when p is nil.
func (v *lockView) lockGaps(only *backends.Provider) []lockGap {
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

// lockWords name what L queues.
var lockWords = queue.Words{Unit: "package(s) missing or differing", Place: "source", Verb: "copy", Jobs: "job(s)", From: true,
	Nothing: "the compared mirrors hold every package the lock needs",
	NoDest:  "no place holds a package the compared mirrors lack"}

// lockRequest asks the queue dialog to copy every gap of the lock from a
// source the user picks: each place that holds some of them.
func (v *lockView) lockRequest() (queue.Request, bool) {
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
func (v *lockView) lockSource(g lockGap, i int) bool {
	t := v.lock.tied[g.key]
	a, ok := t.held[i][g.plat]
	return ok && a.Layout == backends.Packed && !t.differs[i][g.plat]
}

// lockPlan copies from place src each gap it holds into the compared
// place that lacks it, and, forced (f, as curation's dialog does), also
// replaces each package a compared place holds other than the locked one.
func (v *lockView) lockPlan(gaps []lockGap, src int) queue.Plan {
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
	v, ok := m.views[viewProviders].(*lockView)
	if !ok {
		return
	}
	if req, ok := v.lockRequest(); ok {
		d := queue.New(req)
		m.dialog = &d
	}
}
