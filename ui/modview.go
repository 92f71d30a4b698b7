package ui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// The Modules view (m): the modules named with --module on the left, the
// chosen module's versions against every module place in the centre,
// Details saying where each package lives. Its jobs are module tasks on the
// one engine, shown in the same jobs pane.

// ModulePlace is a place the Modules view compares: a module registry, an
// OCI mirror or a directory.
type ModulePlace struct {
	Lister modules.Lister
	// Kind labels it in the header: registry, oci, fs.
	Kind string
	// Number is how the header numbers it: give a place that is also a
	// Mirror the Mirror's number. 0 numbers it by position, from 1.
	Number int
}

// ModulesConfig is what the Modules view shows; with no Modules the view
// is left out.
type ModulesConfig struct {
	Modules []modules.Module
	Places  []ModulePlace
	// Builder fetches and packs packages from the locations registries
	// give; module jobs need it.
	Builder modules.Builder
	// ShowFirst opens the UI on the Modules view.
	ShowFirst bool
}

// moduleJobsEmpty is what the empty jobs pane says in the Modules view.
const moduleJobsEmpty = " No jobs: select versions (space, a for all), then enter."

// moduleLegend is the marks the Modules view draws, with what each means
// for a module: only OCI places state digests, so "differs" is a digest.
var moduleLegend = []grid.LegendItem{
	{Mark: theme.MarkStated, Long: "present", Short: "present"},
	{Mark: theme.MarkMissing, Long: "missing", Short: "missing"},
	{Mark: theme.MarkDiffers, Long: "digest differs", Short: "differs"},
	{Mark: theme.MarkError, Long: "error", Short: "error"},
	{Mark: theme.MarkLoading, Long: "loading", Short: "loading"},
}

// moduleMarkLabel names a mark as the Modules view means it.
func moduleMarkLabel(mk theme.Mark) string {
	for _, l := range moduleLegend {
		if l.Mark == mk {
			return l.Long
		}
	}
	return mk.Label()
}

// modPlace is a module place and where its packages are written, if they
// can be.
type modPlace struct {
	lister modules.Lister
	writer modules.Writer
}

// modHolding is what one place holds of one module.
type modHolding struct {
	items map[string]modules.Listing // by canonical version
	// note says why the place holds nothing of the module when that is not
	// a plain absence.
	note string
}

func (h modHolding) versions() []backends.Version {
	out := make([]backends.Version, 0, len(h.items))
	for _, it := range h.items {
		out = append(out, it.Version)
	}
	return out
}

func (h modHolding) item(version string) (modules.Listing, bool) {
	it, ok := h.items[version]
	return it, ok
}

type modulesView struct {
	base[modules.Module, modHolding]
	modPlaces []modPlace
	builder   modules.Builder
}

// newModulesView returns the Modules view, nil when no module is named.
func newModulesView(sh *shell, cfg ModulesConfig) *modulesView {
	if len(cfg.Modules) == 0 {
		return nil
	}
	v := &modulesView{builder: cfg.Builder}
	var ps []place
	for i, p := range cfg.Places {
		w, _ := p.Lister.(modules.Writer)
		v.modPlaces = append(v.modPlaces, modPlace{lister: p.Lister, writer: w})
		ps = append(ps, place{num: numbered(p.Number, i), name: placeName(p.Lister.String()), kind: p.Kind, compared: true, writable: w != nil})
	}
	keys := list.DefaultKeyMap("open versions")
	keys.Filter.SetEnabled(false) // a command line names a handful of modules, not hundreds
	l := list.New(sh.styles, list.Options[modules.Module]{Name: "Modules", Keys: keys, Short: modules.Module.Short,
		Full: modules.Module.String, Empty: " no modules: name them with --module"})
	mods := append([]modules.Module(nil), cfg.Modules...)
	sort.Slice(mods, func(i, j int) bool { return mods[i].Less(mods[j]) })
	l.SetItems(mods)
	g := grid.New(sh.styles, grid.Options{Keys: grid.RowKeys(), Rows: true, Legend: moduleLegend})
	v.base = newBase[modules.Module, modHolding](sh, viewModules, "place", "module", ps, l, g)
	v.base.load = v.listModule
	v.base.rebuild = v.rebuild
	v.base.hint = func(i int, mod modules.Module) string {
		return "tfmirror ls " + v.places[i].name + " --module " + mod.String()
	}
	return v
}

func (v *modulesView) words() viewWords {
	return viewWords{places: " ─ module places: ", list: "Modules", item: "module", grid: "Module versions", jobsEmpty: moduleJobsEmpty, marks: "place", legend: moduleLegend}
}

// startMsg lists the first module when the UI starts: Init cannot change
// the model, so the listing starts from a message.
type startMsg struct{ to }

// Init asks for the first module to be listed, so the view is ready when
// it is opened.
func (v *modulesView) Init() tea.Cmd {
	return func() tea.Msg { return startMsg{to(viewModules)} }
}

func (v *modulesView) update(msg viewMsg) tea.Cmd {
	if _, ok := msg.(startMsg); ok {
		if mod, ok := v.list.Selected(); ok && !v.hasCurrent {
			return v.selectItem(mod, true)
		}
		return nil
	}
	return v.base.update(msg)
}

// listModule lists place i's versions of mod and where each lives.
func (v *modulesView) listModule(ctx context.Context, i int, mod modules.Module) (modHolding, []string, error) {
	l := v.modPlaces[i].lister
	if reg, ok := l.(*modules.Registry); ok && reg.Host() != mod.Host {
		// A registry serves its own host's modules: asking it for the
		// same path would list another module.
		return modHolding{note: "serves " + reg.Host() + "'s modules, not " + mod.Host + "'s"}, nil, nil
	}
	ls, err := l.ListModule(ctx, mod, v.sh.versions)
	if errors.Is(err, backends.ErrNotFound) {
		return modHolding{}, ls.Warnings, nil
	}
	h := modHolding{items: make(map[string]modules.Listing, len(ls.Items))}
	for _, it := range ls.Items {
		h.items[it.Version.String()] = it
	}
	return h, ls.Warnings, err
}

// marks gives, for one version, the mark of each place in idx and the
// index (into idx) of the place whose digest the others are compared with
// (-1: none states a digest). Only OCI places state digests; two of them
// holding different manifests for one version hold different packages.
func (v *modulesView) marks(idx []int, version string) ([]theme.Mark, int) {
	ref, refDigest := -1, ""
	for k, i := range idx {
		h, _ := v.shown(i)
		if it, ok := h.item(version); ok && it.Err == nil && it.Digest != "" {
			ref, refDigest = k, it.Digest
			break
		}
	}
	out := make([]theme.Mark, 0, len(idx))
	for _, i := range idx {
		l := v.listingOf(v.current, i)
		mk := theme.MarkLoading
		switch {
		case l == nil || l.state == stateLoading:
		case l.state == stateFailed:
			mk = theme.MarkError
		default:
			it, ok := l.data.item(version)
			switch {
			case !ok:
				mk = theme.MarkMissing
			case it.Err != nil:
				mk = theme.MarkError
			case it.Digest != "" && ref >= 0 && it.Digest != refDigest:
				mk = theme.MarkDiffers
			default:
				mk = theme.MarkStated
			}
		}
		out = append(out, mk)
	}
	return out, ref
}

// rebuild recomputes the table for the module shown: its versions against
// the compared places, one mark each.
func (v *modulesView) rebuild() {
	if !v.hasCurrent {
		v.grid.SetData(grid.Data{})
		return
	}
	cmp := v.compared()
	vs := v.versions(backends.VersionConstraint{}.Filter) // each place listed what --version selects
	d := grid.Data{Rows: make([]string, len(vs)), Marks: make([][][]theme.Mark, len(vs)), PerCell: 1}
	for _, i := range cmp {
		num := fmt.Sprintf("[%d]", v.places[i].num)
		d.Cols = append(d.Cols, grid.Column{Head: num + " " + v.places[i].kind, Narrow: [2]string{num}})
	}
	for r, ver := range vs {
		d.Rows[r] = ver.String()
		marks, _ := v.marks(cmp, d.Rows[r])
		d.Marks[r] = make([][]theme.Mark, len(marks))
		for c := range marks {
			d.Marks[r][c] = marks[c : c+1]
		}
	}
	v.grid.SetData(d)
}

// showDetails points Details at the version under the cursor: every place,
// compared ones first, with where it keeps the package.
func (v *modulesView) showDetails(d *details.Model, c grid.Cell) {
	order := v.order()
	marks, ref := v.marks(order, c.Row)
	dv := &details.ModuleVersion{Module: v.current, Version: c.Row}
	if ref >= 0 {
		dv.Ref = v.places[order[ref]].num
	}
	for k, i := range order {
		p := v.places[i]
		dp := details.ModulePlace{Number: p.num, Name: p.name, Compared: p.compared, Mark: marks[k], Label: moduleMarkLabel(marks[k])}
		if l := v.listingOf(v.current, i); l != nil {
			switch {
			case l.state == stateFailed:
				dp.Err = l.err
			case l.state == stateLoaded:
				dp.Note = l.data.note
				if it, ok := l.data.item(c.Row); ok {
					dp.Listing = &it
				}
			}
		}
		dv.Places = append(dv.Places, dp)
	}
	d.ShowModule(dv)
}

func (v *modulesView) listBox() (string, []string) {
	return v.list.Title(), strings.Split(v.list.View(), "\n")
}

func (v *modulesView) gridBox() (string, []string) {
	if !v.hasCurrent {
		return "Versions", []string{v.sh.styles.Dim.Render(" no modules: name them with --module NAMESPACE/NAME/SYSTEM")}
	}
	note := func(i int) string {
		h, _ := v.shown(i)
		return h.note
	}
	return v.gridTitle(v.current.String()), v.gridLines("locations", note)
}

// jobEvent marks the version a module job landed as there at once, in the
// frame that shows the job done, and lists the place again to confirm it.
func (v *modulesView) jobEvent(j *engine.TrackedJob, ev engine.Event) tea.Cmd {
	if _, done := ev.(engine.JobDone); !done || j == nil || j.Info.Module == (modules.Module{}) {
		return nil
	}
	i := v.placeIndex(j.Info.Dst)
	if l := v.listingOf(j.Info.Module, i); l != nil && l.state == stateLoaded {
		// Name is "HOST/NAMESPACE/NAME/SYSTEM VERSION".
		if ver, err := modules.ParseVersion(j.Info.Name[strings.LastIndexByte(j.Info.Name, ' ')+1:]); err == nil {
			if l.data.items == nil {
				l.data.items = map[string]modules.Listing{}
			}
			l.data.items[ver.String()] = modules.Listing{Module: j.Info.Module, Version: ver, Listed: ver.String()}
			if v.hasCurrent && j.Info.Module == v.current {
				v.rebuild()
			}
		}
	}
	return v.markDirty(i, j.Info.Module)
}

// moduleWords name what the Modules view queues.
var moduleWords = queue.Words{Unit: "version(s)", Place: "place", Verb: "fetch and pack", Jobs: "module job(s)",
	Nothing: "the destination already has every selected version",
	NoDest:  "no writable module place: registries are read-only; open a directory or oci:// place too"}

// queue asks to fetch and pack the selected versions (or the one under the
// cursor) into a writable place.
func (v *modulesView) queue() (queue.Request, bool) {
	var versions []string
	for _, c := range v.grid.Targets() {
		versions = append(versions, c.Row)
	}
	if len(versions) > 0 && v.builder == nil {
		v.sh.setStatus(statusBad, "module jobs cannot run: no package builder configured")
		return queue.Request{}, false
	}
	return v.request(moduleWords, len(versions), func(dst int) planner { return v.plan(versions, dst) })
}

// modulePlan is what queueing versions to one place would do.
type modulePlan struct {
	// copy: the destination lacks these.
	copy []sync.ModuleJobSpec
	// present: the destination lists these already. With force they are
	// fetched again and the destination replaces what differs (the task
	// compares: an identical package is left alone).
	present []sync.ModuleJobSpec
	// there: the destination lists these and no registry offers them.
	there int
	// none: no registry gives a location for these and the destination
	// lacks them.
	none int
	from map[int]int // copies per source place
}

// plan takes each version from the first place that gives its package's
// location (a registry) and says whether the destination needs it.
func (v *modulesView) plan(versions []string, dst int) modulePlan {
	plan := modulePlan{from: map[int]int{}}
	hd, _ := v.shown(dst)
	for _, ver := range versions {
		_, has := hd.item(ver)
		src := -1
		var spec sync.ModuleJobSpec
		for i, p := range v.modPlaces {
			h, _ := v.shown(i)
			if it, ok := h.item(ver); ok && i != dst && it.Err == nil && it.Source != nil {
				src = i
				spec = sync.ModuleJobSpec{Module: v.current, Version: it.Version, Location: *it.Source, Src: p.lister.String(),
					Builder: v.builder, Dst: v.modPlaces[dst].writer}
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

func (p modulePlan) sources() map[int]int { return p.from }

func (p modulePlan) queuePlan(s *theme.Styles, from []queue.Source) queue.Plan {
	q := queue.Plan{Need: fmt.Sprintf("%d to fetch", len(p.copy)), Run: sync.ModuleTasks(p.copy), From: from, Work: len(p.copy)}
	if len(p.copy) == 0 && len(p.present) > 0 {
		q.Nothing = fmt.Sprintf("%d already there: press f to fetch again and replace what differs", len(p.present))
	}
	forced := append(append([]sync.ModuleJobSpec(nil), p.copy...), p.present...)
	for i := range forced {
		forced[i].Force = true
	}
	q.Forced = sync.ModuleTasks(forced)
	skipped := queue.Note{Style: s.Dim, Text: fmt.Sprintf("✓ %d already there: skipped (f fetches and replaces what differs)", len(p.present)+p.there)}
	none := queue.Note{Style: s.Dim, Text: fmt.Sprintf("○ %d no registry gives a location for: skipped", p.none)}
	if len(p.present)+p.there > 0 {
		q.Notes = append(q.Notes, skipped)
		if len(p.present) > 0 {
			skipped = queue.Note{Style: s.Bad, Text: fmt.Sprintf("✗ %d already there: fetched again, REPLACED where different (force)", len(p.present))}
		}
		q.ForceNotes = append(q.ForceNotes, skipped)
	}
	if p.none > 0 {
		q.Notes, q.ForceNotes = append(q.Notes, none), append(q.ForceNotes, none)
	}
	return q
}
