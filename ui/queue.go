package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/matrix"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// queueDialog takes the selected cells to a destination: pick a writable
// mirror, see what would be copied, confirm (with f to force).
type queueDialog struct {
	cells   []matrix.Cell
	dests   []int // writable mirrors
	cursor  int
	confirm bool // past choosing the destination
	plan    queuePlan
	force   bool
}

// queuePlan is what queueing the cells to one destination would do.
type queuePlan struct {
	dest int
	// copy: the destination lacks these, or holds something no stated hash
	// can compare (the engine decides: identical is a no-op, different a
	// conflict).
	copy []sync.Transfer
	// differ: the destination holds these with different hashes.
	differ  []sync.Transfer
	present int         // the destination has these with the same hashes
	none    int         // no mirror holds these as a zip
	from    map[int]int // copies per source mirror
}

// openQueue starts the dialog for the selection, or the cell under the
// cursor.
func (m Model) openQueue() (tea.Model, tea.Cmd) {
	cells := m.matrix.Targets()
	if len(cells) == 0 {
		m.setStatus(statusInfo, "nothing to queue: choose a provider with versions first")
		return m, nil
	}
	var dests []int
	for i, mi := range m.mirrors {
		if mi.writer != nil {
			dests = append(dests, i)
		}
	}
	if len(dests) == 0 {
		m.setStatus(statusBad, "no writable mirror: network mirrors and registries are read-only; open a directory or oci:// place too")
		return m, nil
	}
	d := &queueDialog{cells: cells, dests: dests}
	// Start on the destination that lacks the most of the selection.
	best := -1
	for k, i := range dests {
		if n := len(m.planQueue(cells, i).copy); n > best {
			best, d.cursor = n, k
		}
	}
	if len(dests) == 1 {
		d.confirm = true
		d.plan = m.planQueue(cells, dests[0])
	}
	m.dialog = d
	return m, nil
}

func (m Model) updateDialog(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	d := *m.dialog
	m.dialog = &d
	switch {
	case key.Matches(k, m.dkeys.Cancel):
		m.dialog = nil
		return m, nil
	case !d.confirm && key.Matches(k, m.dkeys.Up):
		d.cursor = max(0, d.cursor-1)
	case !d.confirm && key.Matches(k, m.dkeys.Down):
		d.cursor = min(len(d.dests)-1, d.cursor+1)
	case !d.confirm && key.Matches(k, m.dkeys.Confirm):
		d.confirm = true
		d.plan = m.planQueue(d.cells, d.dests[d.cursor])
	case d.confirm && key.Matches(k, m.dkeys.Force):
		d.force = !d.force
	case d.confirm && key.Matches(k, m.dkeys.Confirm):
		return m.enqueue()
	}
	return m, nil
}

// enqueue hands the confirmed plan to the engine.
func (m Model) enqueue() (tea.Model, tea.Cmd) {
	d := m.dialog
	m.dialog = nil
	transfers := append([]sync.Transfer(nil), d.plan.copy...)
	if d.force {
		transfers = append(transfers, d.plan.differ...)
	}
	specs := make([]sync.Task, len(transfers))
	for i, t := range transfers {
		t.Force = d.force
		specs[i] = t
	}
	if len(specs) == 0 {
		m.setStatus(statusInfo, "nothing to queue: the destination already has everything selected")
		return m, nil
	}
	m.matrix.ClearSelection()
	dest := m.mirrors[d.plan.dest]
	label := fmt.Sprintf("[%d] %s", dest.num, dest.Reader)
	m.setStatus(statusInfo, fmt.Sprintf("queueing %d job(s) to %s…", len(specs), label))
	return m, tea.Batch(enqueueCmd(m.engine, specs, label), m.startSpinner())
}

// planQueue decides, for each cell, the source (the first mirror holding it
// as a zip) and whether the destination needs it.
func (m Model) planQueue(cells []matrix.Cell, dst int) queuePlan {
	plan := queuePlan{dest: dst, from: map[int]int{}}
	get := func(i int, c matrix.Cell) (backends.Archive, bool) {
		return m.listingOf(m.current, i).archive(c.Version, c.Platform)
	}
	for _, c := range cells {
		src := -1
		var sa backends.Archive
		for i := range m.mirrors {
			if i == dst {
				continue
			}
			if a, ok := get(i, c); ok && a.Layout == backends.Packed {
				src, sa = i, a
				break
			}
		}
		if src < 0 {
			if _, ok := get(dst, c); ok {
				plan.present++
			} else {
				plan.none++
			}
			continue
		}
		spec := sync.Transfer{Src: m.mirrors[src].Reader, Dst: m.mirrors[dst].writer, Archive: sa}
		da, has := get(dst, c)
		if !has {
			plan.copy = append(plan.copy, spec)
			plan.from[src]++
			continue
		}
		same, comparable := agree(known(sa, m.verified[verifyKey{src, sa.Key()}]), known(da, m.verified[verifyKey{dst, da.Key()}]))
		switch {
		case comparable && same:
			plan.present++
		case comparable:
			plan.differ = append(plan.differ, spec)
		default:
			plan.copy = append(plan.copy, spec)
			plan.from[src]++
		}
	}
	return plan
}

// dialogLines renders the dialog's content.
func (m Model) dialogLines() (string, []string) {
	s := m.styles
	d := m.dialog
	n := len(d.cells)
	if !d.confirm {
		lines := []string{fmt.Sprintf(" Queue %d package(s) of %s to which mirror?", n, m.current.ShortString()), ""}
		for k, i := range d.dests {
			mi := m.mirrors[i]
			p := m.planQueue(d.cells, i)
			need := fmt.Sprintf("%d to copy", len(p.copy))
			if len(p.differ) > 0 {
				need += fmt.Sprintf(", %d differ", len(p.differ))
			}
			room := m.lay.rightW - 2 - 4 - len(need) - len(mi.Kind) - 10
			line := fmt.Sprintf("[%d] %s (%s)", mi.num, theme.ShortPlace(mi.Reader.String(), room), mi.Kind)
			if k == d.cursor {
				lines = append(lines, " "+s.Accent.Render("▸ ")+s.Cursor.Render(line)+" "+need)
			} else {
				lines = append(lines, "   "+line+" "+s.Dim.Render(need))
			}
		}
		return "Queue to…", lines
	}
	p := d.plan
	dest := m.mirrors[p.dest]
	room := m.lay.rightW - 4
	lines := []string{fmt.Sprintf(" %d package(s) of %s to [%d] %s", n, m.current.ShortString(), dest.num,
		theme.ShortPlace(dest.Reader.String(), room-30-len(m.current.ShortString()))), ""}
	if len(p.copy) > 0 {
		from := ""
		for i, mi := range m.mirrors {
			if c := p.from[i]; c > 0 {
				if from != "" {
					from += ", "
				}
				from += fmt.Sprintf("%d from [%d] %s", c, mi.num, theme.ShortPlace(mi.Reader.String(), max(12, (room-20)/len(p.from)-10)))
			}
		}
		lines = append(lines, " "+s.OK.Render("●")+fmt.Sprintf(" %d to copy: %s", len(p.copy), from))
	}
	if p.present > 0 {
		lines = append(lines, " "+s.Dim.Render(fmt.Sprintf("✓ %d already there with the same hashes: skipped", p.present)))
	}
	if len(p.differ) > 0 {
		if d.force {
			lines = append(lines, " "+s.Bad.Render(fmt.Sprintf("✗ %d differ there: will be REPLACED (force)", len(p.differ))))
		} else {
			lines = append(lines, " "+s.Warn.Render(fmt.Sprintf("✗ %d differ there: skipped (f replaces them)", len(p.differ))))
		}
	}
	if p.none > 0 {
		lines = append(lines, " "+s.Dim.Render(fmt.Sprintf("○ %d no mirror holds as a zip: skipped", p.none)))
	}
	if d.force && len(p.copy) > 0 {
		lines = append(lines, " "+s.Warn.Render("force: archives that turn out different are replaced"))
	}
	lines = append(lines, "", " "+s.Key.Render("enter")+" queue   "+s.Key.Render("f")+" force   "+s.Key.Render("esc")+" cancel")
	return "Confirm", lines
}
