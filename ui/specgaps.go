package ui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/queue"
)

// S queues every gap of the spec the UI opened on: each wanted package a
// destination lacks, from its resolved source, planned as sync --spec plans
// it (spec.Plan), and confirmed in the queue dialog like a selection.

// specWords name what S queues.
var specWords = queue.Words{Unit: "wanted package(s)", Place: "mirror", Verb: "copy", Jobs: "job(s)",
	Nothing: "every destination already holds what the spec wants",
	NoDest:  "the spec names no destination"}

// specGapsMsg is the spec planned against each of its destinations.
type specGapsMsg struct {
	dests []specDestPlan
}

// specDestPlan is one destination's plan: one Planned per wanted provider.
type specDestPlan struct {
	mirror  int // index in Config.Mirrors
	planned []spec.Planned
	err     error // the destination cannot hold the spec's providers together
}

// planSpecGaps plans the spec against every destination, in a command: the
// dialog opens when the plans arrive.
func (m *Model) planSpecGaps() tea.Cmd {
	sp := m.cfg.Spec
	if sp == nil || sp.Wanted == nil {
		return nil
	}
	m.setStatus(statusInfo, "planning the gaps of "+sp.Path+"…")
	ctx, opts := m.sh.ctx, sync.PlanOptions{Hashing: m.engine.Hashing()}
	dsts := make([]backends.Reader, len(sp.Dests))
	for k, i := range sp.Dests {
		dsts[k] = m.cfg.Mirrors[i].Reader
	}
	return func() tea.Msg { return planSpec(ctx, sp, dsts, opts) }
}

func planSpec(ctx context.Context, sp *Spec, dsts []backends.Reader, opts sync.PlanOptions) specGapsMsg {
	var msg specGapsMsg
	for k, d := range sp.Wanted.Destinations {
		planned, err := spec.Plan(ctx, d, dsts[k], opts)
		msg.dests = append(msg.dests, specDestPlan{mirror: sp.Dests[k], planned: planned, err: err})
	}
	return msg
}

// openSpecGaps opens the queue dialog on the spec's gaps, or says why
// there are none to queue.
func (m *Model) openSpecGaps(msg specGapsMsg) {
	v := m.views[viewProviders].(*specView)
	var q queue.Plan
	from := map[int]int{}
	var total, present, differ int
	for _, d := range msg.dests {
		dst, _ := m.cfg.Mirrors[d.mirror].Reader.(backends.Writer)
		if d.err != nil || dst == nil {
			m.sh.problem(statusBad, fmt.Sprintf("✗ %s: %v", v.places[d.mirror].name, orReadOnly(d.err)), "")
			continue
		}
		for _, p := range d.planned {
			if p.Err != nil {
				m.sh.problem(statusBad, fmt.Sprintf("✗ %s → %s: %v", p.Provider, v.places[d.mirror].name, p.Err), "")
				continue
			}
			run, _ := p.Plan.Jobs(dst, false)
			forced, _ := p.Plan.Jobs(dst, true)
			q.Run, q.Forced = append(q.Run, run...), append(q.Forced, forced...)
			from[v.placeIndex(p.Source.String())] += len(run)
			total += len(p.Plan.Items)
			present += p.Plan.Count(sync.StatusPresent)
			differ += p.Plan.Count(sync.StatusConflict)
		}
	}
	if len(q.Run)+len(q.Forced) == 0 {
		if m.sh.status.kind != statusBad {
			m.setStatus(statusInfo, "no gaps: "+specWords.Nothing)
		}
		return
	}
	q.Need, q.From, q.Work = fmt.Sprintf("%d to copy", len(q.Run)), v.sources(from), len(q.Run)
	s := v.sh.styles
	if present > 0 {
		q.Notes = append(q.Notes, queue.Note{Style: s.Dim, Text: fmt.Sprintf("✓ %d already there with the same hashes: skipped", present)})
	}
	q.ForceNotes = append(q.ForceNotes, q.Notes...)
	if differ > 0 {
		q.Need += fmt.Sprintf(", %d differ", differ)
		q.Notes = append(q.Notes, queue.Note{Style: s.Warn, Text: fmt.Sprintf("≠ %d differ there: skipped (f replaces them)", differ)})
		q.ForceNotes = append(q.ForceNotes, queue.Note{Style: s.Bad, Text: fmt.Sprintf("≠ %d differ there: will be REPLACED (force)", differ)})
		q.Nothing = fmt.Sprintf("%d differ: press f to replace them", differ)
	}
	if n := len(m.cfg.Spec.Wanted.Problems); n > 0 {
		q.Notes = append(q.Notes, queue.Note{Style: s.Warn, Text: fmt.Sprintf("! %d wanted that no source offers (tfmirror diff --spec lists them)", n)})
	}
	dest := queue.Place{Name: fmt.Sprintf("the %d destinations of %s", len(msg.dests), m.cfg.Spec.Path), Kind: "spec"}
	if len(msg.dests) == 1 {
		dest = v.queuePlace(msg.dests[0].mirror)
	}
	req := queue.Request{Words: specWords, N: total, Subject: m.cfg.Spec.Path, Dests: []queue.Place{dest},
		Plan: func(int) queue.Plan { return q }}
	d := queue.New(req)
	m.dialog = &d
	if m.sh.status.kind == statusInfo {
		m.setStatus(statusInfo, "") // "planning…" is done; a failure stays
	}
}

func orReadOnly(err error) error {
	if err == nil {
		return fmt.Errorf("read-only: %w", backends.ErrUsage)
	}
	return err
}
