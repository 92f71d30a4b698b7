package ui

import (
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// versions is every version a compared place holds of the item shown that
// filter keeps (a constraint's Filter or ProviderVersions), newest first.
func (b *base[K, V]) versions(filter func([]backends.Version) []backends.Version) []backends.Version {
	seen := map[string]bool{}
	var vs []backends.Version
	for _, i := range b.compared() {
		d, ok := b.shown(i)
		if !ok {
			continue
		}
		for _, v := range d.versions() {
			if !seen[v.String()] {
				seen[v.String()] = true
				vs = append(vs, v)
			}
		}
	}
	return filter(vs)
}

// cursor is the cell under the grid's cursor, if an item is shown.
func (b *base[K, V]) cursor() (grid.Cell, bool) {
	c, ok := b.grid.Cursor()
	return c, ok && b.hasCurrent
}

// queuePlace is place i as the queue dialog names it.
func (b *base[K, V]) queuePlace(i int) queue.Place {
	return queue.Place{Num: b.places[i].num, Name: b.places[i].name, Kind: b.places[i].kind}
}

// planner is what a view's plan of queueing to one place tells the dialog.
type planner interface {
	// queuePlan is the plan as the dialog shows and queues it; from is
	// sources(), as the dialog names them.
	queuePlan(s *theme.Styles, from []queue.Source) queue.Plan
	// sources is how many jobs take from each place, by index.
	sources() map[int]int
}

// request asks the queue dialog to take n targets of the item shown to a
// writable place; plan says what queueing to place i would do. Where
// nothing can be queued, the status line says why.
func (b *base[K, V]) request(words queue.Words, n int, plan func(i int) planner) (queue.Request, bool) {
	var dests []int
	var places []queue.Place
	for i, p := range b.places {
		if p.writable {
			dests, places = append(dests, i), append(places, b.queuePlace(i))
		}
	}
	switch {
	case n == 0:
		b.sh.setStatus(statusInfo, "nothing to queue: choose a "+b.item+" with versions first")
	case len(dests) == 0:
		b.sh.setStatus(statusBad, words.NoDest)
	default:
		return queue.Request{Words: words, N: n, Subject: b.list.Label(b.current), Dests: places,
			Plan: func(k int) queue.Plan {
				p := plan(dests[k])
				return p.queuePlan(b.sh.styles, b.sources(p.sources()))
			}}, true
	}
	return queue.Request{}, false
}

// sources is how many of a plan's jobs take from each place, in place
// order.
func (b *base[K, V]) sources(from map[int]int) []queue.Source {
	var out []queue.Source
	for i := range b.places {
		if n := from[i]; n > 0 {
			out = append(out, queue.Source{Place: b.queuePlace(i), N: n})
		}
	}
	return out
}

// gridTitle names the item shown, the places compared and the versions.
func (b *base[K, V]) gridTitle(name string) string {
	cmp := b.compared()
	switch {
	case len(cmp) == 1:
		name += fmt.Sprintf(" ─ %s %d", b.noun, b.places[cmp[0]].num)
	case len(cmp) > 1:
		nums := make([]string, len(cmp))
		for k, i := range cmp {
			nums[k] = fmt.Sprint(b.places[i].num)
		}
		name += " ─ compare " + strings.Join(nums, " ↔ ")
	}
	switch n, shown := len(b.grid.Data().Rows), b.grid.Shown(); {
	case n > 0 && shown < n:
		name += fmt.Sprintf(" ─ %d of %s", shown, plural(n, "version"))
	case n > 0:
		name += " ─ " + plural(n, "version")
	}
	if b.grid.GapsOnly() {
		name += " ─ o: gaps only" // a sign it is on, and how to turn it off
	}
	return name
}

// plural is "1 version", "2 versions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// gridLines draws the grid of the item shown, or says why there is none:
// still listing (what), a place that failed or has a note, or nothing the
// compared places hold.
func (b *base[K, V]) gridLines(what string, note func(i int) string) []string {
	s, spin := b.sh.styles, b.sh.spin
	if len(b.grid.Data().Rows) > 0 {
		lines := strings.Split(b.grid.View(), "\n")
		if b.loading() {
			lines[len(lines)-1] = spin + " listing… " + lines[len(lines)-1]
		}
		return lines
	}
	if b.loading() {
		return []string{" " + spin + " listing versions and " + what + "…"}
	}
	var lines []string
	for _, i := range b.compared() {
		l := b.listingOf(b.current, i)
		switch {
		case l == nil:
		case l.state == stateFailed:
			lines = append(lines, s.Bad.Render(fmt.Sprintf(" ✗ [%d] %v", b.places[i].num, l.err)))
		case note(i) != "":
			lines = append(lines, s.Dim.Render(fmt.Sprintf(" [%d] %s %s", b.places[i].num, b.places[i].name, note(i))))
		}
	}
	filter := ""
	if !b.sh.versions.IsZero() {
		filter = " matching --version " + b.sh.versions.String()
	}
	return append(lines, s.Dim.Render(" The compared "+b.noun+"s hold no version of this "+b.item+filter+"."))
}

// placeName is how the UI shows a place's name: on one line, with its
// control characters, bidirectional overrides, tabs and newlines written
// out as escapes, so that a name from a configuration or a listing neither
// drives the terminal nor breaks a line of the layout.
func placeName(s string) string { return backends.PrintableLine(s) }
