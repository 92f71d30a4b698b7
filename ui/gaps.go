package ui

import (
	"strconv"
	gosync "sync"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The providers list says, beside each provider, what the compared mirrors
// lack of it: "2 missing" ("○2" in a narrow pane) is the number of ○ marks
// its matrix would show, "ok" (✓) none, "!" a mirror that could not be
// listed. Once the first provider shown is listed, every provider is listed
// in every place in the background, a few at a time (the survey), into the
// same listings the matrix is drawn from; the counts are worked out from
// them in Update, without I/O, and again whenever they change (a job
// lands, a mirror is taken in or out of the comparison).

// listNote is what help says of the badges.
const listNote = "○N missing (its ○), ✓ ok"

// surveyBatch is how many providers one step of the survey lists, and
// surveyWorkers how many listings it runs at once.
const (
	surveyBatch   = 8
	surveyWorkers = 4
)

// surveyMsg is one step of the survey: the listings of a few providers.
type surveyMsg struct {
	to
	gen      uint64
	listings []loadedMsg[backends.Provider, provHolding]
}

// gapCount is what the compared mirrors lack of the provider whose matrix
// d is: its ○ marks; pending while a compared mirror is still listing it,
// failed where one could not.
func gapCount(d grid.Data) (missing int, pending, failed bool) {
	for _, row := range d.Marks {
		for _, cell := range row {
			for _, mk := range cell {
				switch mk {
				case theme.MarkMissing:
					missing++
				case theme.MarkLoading:
					pending = true
				case theme.MarkError:
					failed = true
				}
			}
		}
	}
	return missing, pending, failed
}

// noteGapsOf shows beside p in the list what its matrix d says the
// compared mirrors lack.
func (v *providersView) noteGapsOf(p backends.Provider, d grid.Data) {
	if !v.listedEverywhere(p) {
		v.list.SetBadge(p, "", "", 0)
		return
	}
	missing, pending, failed := gapCount(d)
	switch {
	case failed:
		v.list.SetBadge(p, "! cannot list", "!", 2)
	case pending:
		v.list.SetBadge(p, "", "", 0)
	case missing > 0:
		n := strconv.Itoa(missing)
		v.list.SetBadge(p, n+" missing", "○"+n, 1)
	default:
		v.list.SetBadge(p, "ok", "✓", 0)
	}
}

// listedEverywhere reports whether every compared mirror's listing of p is
// in (or failed).
func (v *providersView) listedEverywhere(p backends.Provider) bool {
	for _, i := range v.compared() {
		if l := v.listingOf(p, i); l == nil || l.state == stateLoading {
			return false
		}
	}
	return true
}

// noteGaps works out the badge of p from its listings.
func (v *providersView) noteGaps(p backends.Provider) {
	switch {
	case !v.listedEverywhere(p):
		v.list.SetBadge(p, "", "", 0)
		return
	case v.hasCurrent && p == v.current:
		v.noteGapsOf(p, v.grid.Data())
		return
	}
	v.noteGapsOf(p, v.kind.matrixOf(p))
}

// noteAllGaps works out every provider's badge again: the comparison
// changed.
func (v *providersView) noteAllGaps() {
	for _, p := range v.items {
		v.kind.noteGaps(p)
	}
}

// toggleCompared takes a mirror in or out of the comparison; what each
// provider lacks changes with it.
func (v *providersView) toggleCompared(num int) {
	v.base.toggleCompared(num)
	v.noteAllGaps()
}

// survey lists the next few providers not yet listed in every place, in a
// command; nil when none is left, or before the first provider shown and
// every catalogue are in (the first screen comes first).
func (v *providersView) survey() tea.Cmd {
	if v.surveying || v.firstLoad {
		return nil
	}
	for _, mr := range v.mirrors {
		if !mr.listed {
			return nil
		}
	}
	type job struct {
		p backends.Provider
		i int
		m loadedMsg[backends.Provider, provHolding]
	}
	var jobs []job
	n := 0
	for _, p := range v.items {
		if n == surveyBatch {
			break
		}
		if v.loaded(p) {
			continue
		}
		n++
		ls := v.cache[p]
		if ls == nil {
			ls = make([]*listing[provHolding], len(v.places))
			v.cache[p] = ls
		}
		for i := range v.places {
			if ls[i] == nil {
				v.gen++
				ls[i] = &listing[provHolding]{state: stateLoading, gen: v.gen}
				jobs = append(jobs, job{p: p, i: i, m: loadedMsg[backends.Provider, provHolding]{to: to(viewProviders), gen: v.gen, place: i, item: p, quiet: true}})
			}
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	v.surveying = true
	ctx, gen, load := v.sh.ctx, v.catGen, v.load
	return func() tea.Msg {
		work := make(chan int)
		var wg gosync.WaitGroup
		for range min(surveyWorkers, len(jobs)) {
			wg.Go(func() {
				for k := range work {
					j := &jobs[k]
					j.m.data, j.m.warnings, j.m.err = load(ctx, j.i, j.p)
				}
			})
		}
		for k := range jobs {
			if ctx.Err() != nil {
				jobs[k].m.err = ctx.Err()
				continue
			}
			work <- k
		}
		close(work)
		wg.Wait()
		msg := surveyMsg{to: to(viewProviders), gen: gen}
		for _, j := range jobs {
			msg.listings = append(msg.listings, j.m)
		}
		return msg
	}
}

// updateSurvey files a step of the survey's listings, shows what they say
// each provider lacks, and takes the next step.
func (v *providersView) updateSurvey(msg surveyMsg) tea.Cmd {
	if msg.gen != v.catGen {
		return nil // ctrl+r started over; a new survey follows the catalogues
	}
	v.surveying = false
	for _, l := range msg.listings {
		v.base.updateLoaded(l) // and onLoaded notes the gaps
	}
	return v.kind.survey()
}
