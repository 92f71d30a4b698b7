package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// What the lock view draws: the list's notes, the matrix and its title,
// the lines under it and Details.

// lockNote is what the list says of p: its locked version, and how many
// packages the compared places lack, "ok", or that no place holds it.
func (v *lockView) lockNote(p backends.Provider) string {
	ver, long, _, _ := v.lockStatus(p)
	if long == "" {
		return ver
	}
	return ver + " " + long
}

// lockStatus is lockNote in parts: the version (the list's note) and the
// badge, long and short (at 80 columns), with its kind.
func (v *lockView) lockStatus(p backends.Provider) (ver, long, short string, kind int) {
	vs := v.lock.versions[p]
	ver = vs[0].String()
	if len(vs) > 1 {
		ver += fmt.Sprintf(" +%d", len(vs)-1)
	}
	held, unplaced := false, 0
	for _, k := range v.lock.keys() {
		if t := v.lock.tied[k]; k.p == p && t != nil {
			for _, h := range t.held {
				held = held || len(h) > 0
			}
			if len(v.sel.Platforms) == 0 {
				// A locked h1: no held package matches is a package of a
				// platform no place holds: init there fails (check's
				// "init on some platform would fail"), though which
				// platform cannot be told. --platform names them instead.
				unplaced += len(t.ties.Unplaced)
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
	switch n := len(gaps) - differ + unplaced; {
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
func (v *lockView) rebuildLock() {
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
func (v *lockView) lockMarks(in []cellInput, cmp []int, k lockKey, plat string) []theme.Mark {
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
func (v *lockView) lockLines() []string {
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
func (v *lockView) lockDetails(row string) []string {
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
	if n := lockcheck.AssumedNote(t.ties.Assumed); n != "" && len(v.sel.Platforms) == 0 {
		out = append(out, n) // check's, sync's and lock's words
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

// lockTitle names the provider shown, its locked versions, its gaps and
// the places compared.
func (v *lockView) lockTitle() string {
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
func (v *lockView) lockGrid(lines []string) []string {
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
