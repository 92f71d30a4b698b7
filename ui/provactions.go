package ui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/events"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// What the Providers view does with the cells the user picks: shows them
// in Details, verifies them, and plans their transfers for the queue
// dialog.

// showDetails points Details at the cell under the cursor: every mirror,
// compared ones first, with what it holds and how verification went.
func (v *providersView) showDetails(d *details.Model, c grid.Cell) {
	order := v.order()
	in := make([]cellInput, len(order))
	v.cellInputs(in, v.current, order, c.Row, c.Col)
	marks, differs := v.kind.detailMarks(in, order, c.Row, c.Col)
	cell := &details.Cell{Mirrors: make([]details.Mirror, len(v.places)), Differs: differs}
	if ref, _ := reference(in); ref >= 0 && differs == "" {
		cell.Ref = v.places[order[ref]].num
	}
	for k, i := range order {
		p := v.places[i]
		dm := details.Mirror{Number: p.num, Name: p.name, Compared: p.compared, Mark: marks[k], Archive: in[k].archive}
		if l := v.listingOf(v.current, i); l != nil && l.state == stateFailed {
			dm.Err = l.err
		}
		if a := in[k].archive; a != nil {
			cell.Package = a.Package
			if l := v.listingOf(v.current, i); l != nil {
				dm.Withheld = l.data.withheld(c.Row)
			}
			vk := verifyKey{i, a.Key()}
			if ver := v.verified[vk]; ver != nil {
				f := ver.finding
				dm.Verify, dm.Origin = &f, ver.origin
			}
			dm.Verifying = v.verifying[vk]
		}
		cell.Mirrors[i] = dm
	}
	if cell.Package.Version == nil {
		// No mirror holds it: name it from the matrix.
		cell.Package.Provider = v.current
		if ver, err := backends.ParseVersion(c.Row); err == nil {
			cell.Package.Version = ver
		}
		if p, err := backends.ParsePlatform(c.Col); err == nil {
			cell.Package.Platform = p
		}
	}
	if cell.Package.Version == nil {
		d.Clear()
		return
	}
	cell.Notes = v.kind.cellNotes(c.Row)
	d.ShowCell(cell)
}

// verifyTargets recomputes the hashes of the selected cells (or the cell
// under the cursor) in every compared mirror that holds them.
func (v *providersView) verifyTargets() tea.Cmd {
	var cmds []tea.Cmd
	for _, c := range v.grid.Targets() {
		for _, i := range v.compared() {
			h, _ := v.shown(i)
			a, ok := h.archive(c.Row, c.Col)
			if !ok {
				continue
			}
			k := verifyKey{i, a.Key()}
			if v.verifying[k] {
				continue
			}
			v.verifying[k] = true
			cmds = append(cmds, verifyCmd(v.sh.ctx, v.slots, k, v.mirrors[i].reader, a, v.hashing))
		}
	}
	if len(cmds) == 0 {
		v.sh.setStatus(statusInfo, "nothing to verify here: no compared mirror holds the selected package(s)")
		return nil
	}
	if v.batch.done >= v.batch.total {
		v.batch = verifyBatch{}
	}
	v.batch.total += len(cmds)
	v.sh.setStatus(statusInfo, fmt.Sprintf("verifying %d archive(s)…", v.batch.total-v.batch.done))
	return tea.Batch(cmds...)
}

// verifyCmd hashes one archive, waiting for one of a few slots so that
// verifying a whole column does not hash hundreds of archives at once.
func verifyCmd(ctx context.Context, slots chan struct{}, key verifyKey, r backends.Reader, a backends.Archive, opts hashing.Options) tea.Cmd {
	return func() tea.Msg {
		msg := verifiedMsg{to: to(viewProviders), key: key}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			msg.finding = sync.Finding{Package: a.Package, Status: sync.StatusError, Detail: ctx.Err().Error()}
			return msg
		}
		msg.finding = sync.VerifySigned(ctx, r, a, sync.VerifyOptions{Hashing: opts})
		return msg
	}
}

func (v *providersView) updateVerified(msg verifiedMsg) {
	delete(v.verifying, msg.key)
	f := msg.finding
	v.verified[msg.key] = &verification{finding: f, origin: "verify"}
	v.batch.done++
	if f.Status != sync.StatusOK {
		v.batch.bad++
		what := fmt.Sprintf("[%d] %s %s %s: %s", v.places[msg.key.mirror].num, f.Package.Provider.ShortString(),
			f.Package.Version, f.Package.Platform, failedCheck(f))
		if v.batch.firstBad == "" {
			v.batch.firstBad = what
		}
		// Every check of it, in full, for the events pane.
		full := f.Detail
		if f.Result != nil && f.Result.Err() != nil {
			full = f.Result.Err().Error()
		}
		v.sh.log.Add(events.Failure, fmt.Sprintf("verify [%d] %s: %s", v.places[msg.key.mirror].num, f.Package, full))
	}
	switch {
	case v.batch.bad > 0:
		v.sh.setStatus(statusBad, fmt.Sprintf("verified %d/%d: %d failed — %s", v.batch.done, v.batch.total, v.batch.bad, v.batch.firstBad))
	default:
		v.sh.setStatus(statusInfo, fmt.Sprintf("verified %d/%d: all match what is stated", v.batch.done, v.batch.total))
	}
	if v.hasCurrent && msg.key.pkg.Provider == v.current {
		v.kind.rebuild()
	}
}

// failedCheck quotes what failed in a verification: the first check that
// contradicted what is stated, or why the hashes could not be computed.
func failedCheck(f sync.Finding) string {
	if f.Result != nil {
		for _, c := range f.Result.Checks {
			if c.Status == hashing.Mismatch {
				return c.String()
			}
		}
	}
	return f.Detail
}

// transferWords name what the Providers view queues.
var transferWords = queue.Words{Unit: "package(s)", Place: "mirror", Verb: "copy", Jobs: "job(s)",
	Nothing: "the destination already has everything selected",
	NoDest:  "no writable mirror: network mirrors and registries are read-only; open a directory or oci:// place too"}

// queue asks to copy the selected cells (or the cell under the cursor) to
// a writable mirror.
func (v *providersView) queue() (queue.Request, bool) {
	cells := v.grid.Targets()
	return v.request(transferWords, len(cells), func(dst int) planner { return v.plan(cells, dst) })
}

// transferPlan is what queueing cells to one mirror would do.
type transferPlan struct {
	// copy: the destination lacks these, or holds something no stated hash
	// can compare (the engine decides: identical is a no-op, different a
	// conflict).
	copy []sync.Transfer
	// differ: the destination holds these with different hashes.
	differ  []sync.Transfer
	present int         // the destination has these with the same hashes
	none    int         // no mirror holds these as a zip
	from    map[int]int // copies per source mirror
	// work counts the copies, and the differing cells where the
	// destination is not the mirror the others are compared with.
	work int
}

// plan decides, for each cell, the source (the first mirror holding it as
// a zip) and whether the destination needs it.
func (v *providersView) plan(cells []grid.Cell, dst int) transferPlan {
	plan := transferPlan{from: map[int]int{}}
	get := func(i int, c grid.Cell) (backends.Archive, bool) {
		h, _ := v.shown(i)
		return h.archive(c.Row, c.Col)
	}
	for _, c := range cells {
		src := -1
		var sa backends.Archive
		for i := range v.mirrors {
			if a, ok := get(i, c); ok && i != dst && a.Layout == backends.Packed {
				src, sa = i, a
				break
			}
		}
		da, has := get(dst, c)
		if src < 0 {
			if has {
				plan.present++
			} else {
				plan.none++
			}
			continue
		}
		t := sync.Transfer{Src: v.mirrors[src].reader, Dst: v.mirrors[dst].writer, Archive: sa}
		if has {
			shared, comparable := sync.Agree(known(sa, v.verified[verifyKey{src, sa.Key()}]), known(da, v.verified[verifyKey{dst, da.Key()}]))
			switch {
			case comparable && shared != "":
				plan.present++
				continue
			case comparable:
				plan.differ = append(plan.differ, t)
				if !v.isReference(dst, c) {
					plan.work++
				}
				continue
			}
		}
		plan.copy = append(plan.copy, t)
		plan.from[src]++
		if v.mirrors[dst].scope.Installs(v.current) {
			plan.work++ // no client would take it from an excluding mirror
		}
	}
	return plan
}

// isReference reports whether mirror i holds the package of cell c that the
// others are compared with, as Details and the matrix take it.
func (v *providersView) isReference(i int, c grid.Cell) bool {
	order := v.order()
	in := make([]cellInput, len(order))
	v.cellInputs(in, v.current, order, c.Row, c.Col)
	ref, _ := reference(in)
	return ref >= 0 && order[ref] == i
}

func (p transferPlan) sources() map[int]int { return p.from }

func (p transferPlan) queuePlan(s *theme.Styles, from []queue.Source) queue.Plan {
	q := queue.Plan{Need: fmt.Sprintf("%d to copy", len(p.copy)), From: from, Work: p.work}
	switch n := len(p.differ); {
	case n == 1:
		q.Need += ", 1 differs"
		q.Nothing = "1 differs: press f to replace it"
	case n > 1:
		q.Need += fmt.Sprintf(", %d differ", n)
		q.Nothing = fmt.Sprintf("%d differ: press f to replace them", n)
	}
	for _, t := range p.copy {
		q.Run = append(q.Run, t)
	}
	for _, t := range append(append([]sync.Transfer(nil), p.copy...), p.differ...) {
		t.Force = true
		q.Forced = append(q.Forced, t)
	}
	present := queue.Note{Style: s.Dim, Text: fmt.Sprintf("✓ %d already there with the same hashes: skipped", p.present)}
	none := queue.Note{Style: s.Dim, Text: fmt.Sprintf("○ %d no mirror holds as a zip: skipped", p.none)}
	for _, force := range []bool{false, true} {
		var notes []queue.Note
		if p.present > 0 {
			notes = append(notes, present)
		}
		switch {
		case len(p.differ) > 0 && force:
			notes = append(notes, queue.Note{Style: s.Bad, Text: fmt.Sprintf("≠ %d differ there: will be REPLACED (force)", len(p.differ))})
		case len(p.differ) > 0:
			notes = append(notes, queue.Note{Style: s.Warn, Text: fmt.Sprintf("≠ %d differ there: skipped (f replaces them)", len(p.differ))})
		}
		if p.none > 0 {
			notes = append(notes, none)
		}
		if force && len(p.copy) > 0 {
			notes = append(notes, queue.Note{Style: s.Warn, Text: "force: archives that turn out different are replaced"})
		}
		if force {
			q.ForceNotes = notes
		} else {
			q.Notes = notes
		}
	}
	return q
}
