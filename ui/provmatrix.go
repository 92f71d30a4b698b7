package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// landed records an archive a job put in mirror i, in the listing of its
// provider if there is one, and redraws the matrix if it is shown.
func (v *providersView) landed(i int, a backends.Archive) {
	l := v.listingOf(a.Provider, i)
	if l == nil || l.state != stateLoaded {
		return // listed afresh when it is shown
	}
	ver := a.Version.String()
	if l.data.archives == nil {
		l.data.archives = map[string]map[string]backends.Archive{}
	}
	if l.data.archives[ver] == nil {
		l.data.archives[ver] = map[string]backends.Archive{}
		l.data.vs = append(l.data.vs, a.Version)
		backends.SortVersionsNewestFirst(l.data.vs)
	}
	// What was there (a forced job replaced it) is no more.
	l.data.archives[ver][a.Platform.String()] = a
	if v.hasCurrent && a.Provider == v.current {
		v.kind.rebuild()
	} else {
		v.kind.noteGaps(a.Provider)
	}
}

// rebuild recomputes the matrix for the provider shown from the listings
// of the compared mirrors and the verifications done so far.
func (v *providersView) rebuild() {
	if !v.hasCurrent {
		v.grid.SetData(grid.Data{})
		return
	}
	d := v.kind.matrixOf(v.current)
	v.grid.SetData(d)
	v.noteGapsOf(v.current, d)
}

// matrixOf is provider p's matrix: the versions and platforms the compared
// mirrors list of it, a mark per compared mirror in each cell. It reads
// only what is listed already: no I/O.
func (v *providersView) matrixOf(p backends.Provider) grid.Data {
	seen := map[string]bool{}
	var vs []backends.Version
	for _, i := range v.compared() {
		h, _ := v.listingOf(p, i).loaded()
		for _, ver := range h.vs {
			if !seen[ver.String()] {
				seen[ver.String()] = true
				vs = append(vs, ver)
			}
		}
	}
	vs = v.sel.Versions.ProviderVersions(vs) // never 0.0.0, OpenTofu's "unspecified"
	return v.matrixFor(p, vs, nil, nil)
}

// matrixFor is provider p's matrix with the rows vs and, as columns, the
// platforms the compared mirrors list of it and those more adds, each
// kept where keep (when set) and --platform say so.
func (v *providersView) matrixFor(p backends.Provider, vs []backends.Version, keep func(backends.Platform) bool, more func(add func(backends.Platform))) grid.Data {
	cmp := v.compared()
	var plats []string
	seen := map[string]bool{}
	addPlatform := func(pl backends.Platform) {
		if keep != nil && !keep(pl) {
			return
		}
		if s := pl.String(); !seen[s] && v.sel.WantsPlatform(pl) {
			seen[s] = true
			plats = append(plats, s)
		}
	}
	for _, i := range cmp {
		h, _ := v.listingOf(p, i).loaded()
		for _, byPlatform := range h.archives {
			for _, a := range byPlatform {
				addPlatform(a.Platform)
			}
		}
	}
	if more != nil {
		more(addPlatform)
	}
	sort.Strings(plats)
	d := grid.Data{Rows: make([]string, len(vs)), Cols: make([]grid.Column, len(plats)), PerCell: len(cmp)}
	for c, pl := range plats {
		os, arch, _ := strings.Cut(pl, "_")
		d.Cols[c] = grid.Column{Head: pl, Narrow: [2]string{os, arch}}
	}
	d.Marks = make([][][]theme.Mark, len(vs))
	all := make([]theme.Mark, len(vs)*len(plats)*len(cmp)) // one allocation for every cell
	in := make([]cellInput, len(cmp))
	for r, ver := range vs {
		d.Rows[r] = ver.String()
		d.Marks[r] = make([][]theme.Mark, len(plats))
		for c, plat := range plats {
			v.cellInputs(in, p, cmp, d.Rows[r], plat)
			cell := all[:0:len(cmp)]
			all = all[len(cmp):]
			d.Marks[r][c] = cellMarks(in, cell)
		}
	}
	return d
}

// cellInputs fills in with what each of the mirrors in idx has for one
// package of provider p.
func (v *providersView) cellInputs(in []cellInput, p backends.Provider, idx []int, version, platform string) {
	for k, i := range idx {
		in[k] = cellInput{state: stateLoading, excluded: !v.mirrors[i].scope.Installs(p)}
		l := v.listingOf(p, i)
		if l == nil {
			continue
		}
		in[k].state = l.state
		if a, ok := l.data.archive(version, platform); ok {
			in[k].archive = &a
			in[k].verify = v.verified[verifyKey{i, a.Key()}]
		}
	}
}

func (v *providersView) listBox() (string, []string) {
	if v.list.Len() > 0 {
		return v.list.Title(), strings.Split(v.list.View(), "\n")
	}
	for _, mr := range v.mirrors {
		if !mr.listed {
			return v.list.Title(), []string{" " + v.sh.spin + " listing…"}
		}
	}
	return v.list.Title(), []string{v.sh.styles.Dim.Render(" no providers")}
}

func (v *providersView) gridBox() (string, []string) {
	if !v.hasCurrent {
		return "Matrix", v.emptyLines()
	}
	return v.gridTitle(v.current.String()), v.gridLines("archives", func(int) string { return "" })
}

// emptyLines explains an empty screen: still listing, or nothing to list
// and what to do about it.
func (v *providersView) emptyLines() []string {
	s := v.sh.styles
	if len(v.mirrors) == 0 {
		return []string{s.Dim.Render(" None of the places given holds providers; m shows the modules.")}
	}
	var lines []string
	for i, mr := range v.mirrors {
		p := v.places[i]
		switch {
		case !mr.listed:
			lines = append(lines, fmt.Sprintf(" %s listing providers in [%d] %s…", v.sh.spin, p.num, p.name))
		case mr.err != nil:
			lines = append(lines, s.Bad.Render(fmt.Sprintf(" ✗ [%d] %v", p.num, mr.err)))
		case mr.noCatalogue:
			lines = append(lines, s.Warn.Render(fmt.Sprintf(" [%d] %s cannot list its providers:", p.num, p.name)),
				s.Warn.Render("     name them with --provider HOST/NAMESPACE/TYPE"))
		case len(mr.providers) == 0:
			lines = append(lines, s.Dim.Render(fmt.Sprintf(" [%d] %s holds no providers", p.num, p.name)))
		}
	}
	return lines
}
