package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// moduleJobsEmpty is what the empty jobs pane says in the Modules view.
const moduleJobsEmpty = " No jobs: select versions (space, a for all), then enter."

// modQueueDialog takes the selected versions to a destination, as the
// provider queue dialog does cells: pick a writable place, see what would
// be fetched, confirm (f to force).
type modQueueDialog struct {
	versions []string
	dests    []int // writable module places
	cursor   int
	confirm  bool
	plan     modQueuePlan
	force    bool
}

// modQueuePlan is what queueing the versions to one destination would do.
type modQueuePlan struct {
	dest int
	// copy: the destination lacks these.
	copy []sync.ModuleJobSpec
	// present: the destination lists these already. With force they are
	// fetched again and the destination replaces what differs (the engine
	// compares: an identical package is left alone).
	present []sync.ModuleJobSpec
	// there: the destination lists these and no registry offers them.
	there int
	// none: no registry gives a location for these and the destination
	// lacks them.
	none int
	from map[int]int // copies per source place
}

// openModuleQueue starts the dialog for the selected versions, or the one
// under the cursor.
func (m Model) openModuleQueue() (tea.Model, tea.Cmd) {
	versions := m.mod.table.Targets()
	if len(versions) == 0 {
		m.setStatus(statusInfo, "nothing to queue: choose a module with versions first")
		return m, nil
	}
	if m.mod.cfg.Builder == nil {
		m.setStatus(statusBad, "module jobs cannot run: no package builder configured")
		return m, nil
	}
	var dests []int
	for i, p := range m.mod.places {
		if p.writer != nil {
			dests = append(dests, i)
		}
	}
	if len(dests) == 0 {
		m.setStatus(statusBad, "no writable module place: registries are read-only; open a directory or oci:// place too")
		return m, nil
	}
	d := &modQueueDialog{versions: versions, dests: dests}
	best := -1
	for k, i := range dests {
		if n := len(m.planModuleQueue(versions, i).copy); n > best {
			best, d.cursor = n, k
		}
	}
	if len(dests) == 1 {
		d.confirm = true
		d.plan = m.planModuleQueue(versions, dests[0])
	}
	m.mod.dialog = d
	return m, nil
}

func (m Model) updateModuleDialog(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	d := *m.mod.dialog
	m.mod.dialog = &d
	switch {
	case key.Matches(k, m.dkeys.Cancel):
		m.mod.dialog = nil
	case !d.confirm && key.Matches(k, m.dkeys.Up):
		d.cursor = max(0, d.cursor-1)
	case !d.confirm && key.Matches(k, m.dkeys.Down):
		d.cursor = min(len(d.dests)-1, d.cursor+1)
	case !d.confirm && key.Matches(k, m.dkeys.Confirm):
		d.confirm = true
		d.plan = m.planModuleQueue(d.versions, d.dests[d.cursor])
	case d.confirm && key.Matches(k, m.dkeys.Force):
		d.force = !d.force
	case d.confirm && key.Matches(k, m.dkeys.Confirm):
		return m.enqueueModules()
	}
	return m, nil
}

// enqueueModules hands the confirmed plan to the module engine.
func (m Model) enqueueModules() (tea.Model, tea.Cmd) {
	d := m.mod.dialog
	m.mod.dialog = nil
	specs := append([]sync.ModuleJobSpec(nil), d.plan.copy...)
	if d.force {
		specs = append(specs, d.plan.present...)
		for i := range specs {
			specs[i].Force = true
		}
	}
	if len(specs) == 0 {
		m.setStatus(statusInfo, "nothing to queue: the destination already has every selected version")
		return m, nil
	}
	for _, s := range specs {
		m.mod.specs[moduleJobKey(s)] = s
	}
	m.mod.table.ClearSelection()
	dest := m.mod.places[d.plan.dest]
	label := fmt.Sprintf("[%d] %s", dest.num, dest.Lister)
	m.setStatus(statusInfo, fmt.Sprintf("queueing %d module job(s) to %s…", len(specs), label))
	return m, tea.Batch(moduleEnqueueCmd(m.mod.engine, specs, label), m.startSpinner())
}

// planModuleQueue takes each version from the first place that gives its
// package's location (a registry) and says whether the destination needs
// it.
func (m Model) planModuleQueue(versions []string, dst int) modQueuePlan {
	plan := modQueuePlan{dest: dst, from: map[int]int{}}
	mod := m.mod.current
	for _, v := range versions {
		_, has := m.moduleListing(mod, dst).item(v)
		src := -1
		var spec sync.ModuleJobSpec
		for i, p := range m.mod.places {
			if i == dst {
				continue
			}
			it, ok := m.moduleListing(mod, i).item(v)
			if ok && it.Err == nil && it.Source != nil {
				src = i
				spec = sync.ModuleJobSpec{Module: mod, Version: it.Version, Location: *it.Source, Src: p.Lister.String(),
					Builder: m.mod.cfg.Builder, Dst: m.mod.places[dst].writer}
				break
			}
		}
		switch {
		case src < 0 && has:
			plan.there++
		case src < 0:
			plan.none++
		case has:
			plan.present = append(plan.present, spec)
		default:
			plan.copy = append(plan.copy, spec)
			plan.from[src]++
		}
	}
	return plan
}

// moduleDialogLines renders the dialog's content.
func (m Model) moduleDialogLines() (string, []string) {
	s := m.styles
	d := m.mod.dialog
	n := len(d.versions)
	name := m.mod.current.Short()
	if !d.confirm {
		lines := []string{fmt.Sprintf(" Queue %d version(s) of %s to which place?", n, name), ""}
		for k, i := range d.dests {
			p := m.mod.places[i]
			plan := m.planModuleQueue(d.versions, i)
			need := fmt.Sprintf("%d to fetch", len(plan.copy))
			room := m.lay.rightW - 2 - 4 - len(need) - len(p.Kind) - 10
			line := fmt.Sprintf("[%d] %s (%s)", p.num, theme.ShortPlace(p.Lister.String(), room), p.Kind)
			if k == d.cursor {
				lines = append(lines, " "+s.Accent.Render("▸ ")+s.Cursor.Render(line)+" "+need)
			} else {
				lines = append(lines, "   "+line+" "+s.Dim.Render(need))
			}
		}
		return "Queue to…", lines
	}
	p := d.plan
	dest := m.mod.places[p.dest]
	room := m.lay.rightW - 4
	lines := []string{fmt.Sprintf(" %d version(s) of %s to [%d] %s", n, name, dest.num,
		theme.ShortPlace(dest.Lister.String(), room-30-len(name))), ""}
	if len(p.copy) > 0 {
		from := ""
		for i, mp := range m.mod.places {
			if c := p.from[i]; c > 0 {
				if from != "" {
					from += ", "
				}
				from += fmt.Sprintf("%d from [%d] %s", c, mp.num, theme.ShortPlace(mp.Lister.String(), max(12, (room-20)/len(p.from)-10)))
			}
		}
		lines = append(lines, " "+s.OK.Render("●")+fmt.Sprintf(" %d to fetch and pack: %s", len(p.copy), from))
	}
	if k := len(p.present) + p.there; k > 0 {
		if d.force && len(p.present) > 0 {
			lines = append(lines, " "+s.Bad.Render(fmt.Sprintf("✗ %d already there: fetched again, REPLACED where different (force)", len(p.present))))
		} else {
			lines = append(lines, " "+s.Dim.Render(fmt.Sprintf("✓ %d already there: skipped (f fetches and replaces what differs)", k)))
		}
	}
	if p.none > 0 {
		lines = append(lines, " "+s.Dim.Render(fmt.Sprintf("○ %d no registry gives a location for: skipped", p.none)))
	}
	lines = append(lines, "", " "+s.Key.Render("enter")+" queue   "+s.Key.Render("f")+" force   "+s.Key.Render("esc")+" cancel")
	return "Confirm", lines
}
