package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// loadState is how far one place's listing of one item has got.
type loadState int

const (
	stateLoading loadState = iota
	stateLoaded            // listed; it may hold nothing of the item
	stateFailed
)

// holding is what one place holds of one item.
type holding interface {
	versions() []backends.Version
}

// listing is one place's listing of one item.
type listing[V holding] struct {
	state loadState
	// gen is the latest listing asked for; results of older ones are
	// dropped.
	gen uint64
	// refreshing: a newer listing was asked for (after jobs landed); the
	// one shown stays until it arrives.
	refreshing bool
	err        error
	data       V
}

// loaded returns the listing's data once it is in.
func (l *listing[V]) loaded() (V, bool) {
	if l == nil || l.state != stateLoaded {
		var zero V
		return zero, false
	}
	return l.data, true
}

// loader lists one item in place i; it runs in a tea.Cmd. A place that
// holds nothing of the item answers with empty data, not an error.
type loader[K comparable, V holding] func(ctx context.Context, i int, item K) (data V, warnings []string, err error)

// loadedMsg is place i's listing of one item; gen drops results overtaken
// by a newer listing.
type loadedMsg[K comparable, V holding] struct {
	to
	gen      uint64
	place    int
	item     K
	data     V
	warnings []string
	err      error
	// quiet: a listing the user did not ask for (the providers list's
	// survey); its failures and warnings show when the item is shown.
	quiet bool
}

// loadTickMsg fires a moment after the list's cursor stops, so holding an
// arrow key does not start a listing per item passed.
type loadTickMsg struct {
	to
	token uint64
}

// relistTickMsg fires once after jobs land, to list the places they landed
// in again once rather than once per job.
type relistTickMsg struct{ to }

const (
	loadDelay   = 120 * time.Millisecond
	relistDelay = 200 * time.Millisecond
)

type dirtyKey[K comparable] struct {
	place int
	item  K
}

// base is what a view does whatever it compares: its places and which are
// compared, its list of items and its grid, and the listings of the item
// shown, loaded when it is chosen and again after jobs land (gh-dash's
// section BaseModel, for views).
type base[K comparable, V holding] struct {
	sh     *shell
	kind   viewKind
	noun   string // a place: "mirror", "place"
	item   string // what the list lists: "provider", "module"
	places []place
	list   list.Model[K]
	grid   grid.Model
	load   loader[K, V]
	// rebuild recomputes the grid from the listings: the view's own.
	rebuild func()
	// hint names the command that lists a place's warnings about an item.
	hint func(i int, item K) string
	// note shows an item's newest version in the list (SetNote, unless the
	// view keeps its own account).
	note func(item K, newest backends.Version)
	// onLoaded, when set, is told of every listing filed.
	onLoaded func(item K)

	current    K
	hasCurrent bool
	cache      map[K][]*listing[V]
	dirty      map[dirtyKey[K]]bool
	gen        uint64
	loadToken  uint64
	// loadCtx is the listings of loadItem under way; loadCancel ends them.
	loadCtx    context.Context
	loadItem   K
	loadCancel context.CancelFunc
}

func newBase[K comparable, V holding](sh *shell, kind viewKind, noun, item string, ps []place, l list.Model[K], g grid.Model) base[K, V] {
	return base[K, V]{sh: sh, kind: kind, noun: noun, item: item, places: ps, list: l, grid: g,
		cache: map[K][]*listing[V]{}, dirty: map[dirtyKey[K]]bool{}, loadCancel: func() {}}
}

// compared is the indices of the compared places.
func (b *base[K, V]) compared() []int {
	var out []int
	for i, p := range b.places {
		if p.compared {
			out = append(out, i)
		}
	}
	return out
}

// order is every place, the compared ones first, so Details' reference is
// the grid's.
func (b *base[K, V]) order() []int {
	out := b.compared()
	for i, p := range b.places {
		if !p.compared {
			out = append(out, i)
		}
	}
	return out
}

func (b *base[K, V]) header() []place { return b.places }

// placeIndex finds a place by the name the engine reports it by.
func (b *base[K, V]) placeIndex(name string) int {
	name = placeName(name)
	for i, p := range b.places {
		if p.name == name {
			return i
		}
	}
	return -1
}

// toggleCompared takes place number num in or out of the comparison.
func (b *base[K, V]) toggleCompared(num int) {
	i := -1
	for k, p := range b.places {
		if p.num == num {
			i = k
		}
	}
	if i < 0 {
		return
	}
	if b.places[i].compared && len(b.compared()) == 1 {
		b.sh.setStatus(statusWarn, "at least one "+b.noun+" stays in the comparison")
		return
	}
	b.places[i].compared = !b.places[i].compared
	b.rebuild()
}

func (b *base[K, V]) setSize(l layout) {
	b.list.SetSize(l.leftW-2, l.provH-2)
	b.grid.SetSize(l.rightW-2, l.matrixH-2)
}

func (b *base[K, V]) typing(p pane) bool {
	return p == paneProviders && b.list.Typing() || p == paneMatrix && b.grid.Typing()
}

func (b *base[K, V]) helpKeys(p pane) help.KeyMap {
	if p == paneProviders {
		return b.list.HelpKeys()
	}
	return b.grid.HelpKeys()
}

// key moves through the list, showing the item the cursor rests on, or
// through the grid.
func (b *base[K, V]) key(p pane, k tea.KeyPressMsg) tea.Cmd {
	var cmd tea.Cmd
	if p == paneMatrix {
		b.grid, cmd = b.grid.Update(k)
		return cmd
	}
	b.list, cmd = b.list.Update(k)
	return tea.Batch(cmd, b.showSelected(false))
}

// showSelected shows the item under the list's cursor where it is not the
// one shown: now, or once the cursor rests.
func (b *base[K, V]) showSelected(now bool) tea.Cmd {
	if item, ok := b.list.Selected(); ok && (!b.hasCurrent || item != b.current) {
		return b.selectItem(item, now)
	}
	return nil
}

// click acts on a click at (x, y) inside the list or the grid: the list
// shows the item clicked at once; the grid moves its cursor, or, where it
// had the focus (focused), selects the cell under it.
func (b *base[K, V]) click(p pane, x, y int, focused bool) tea.Cmd {
	if p == paneMatrix {
		b.grid.Click(x, y, focused)
		return nil
	}
	if b.list.Click(y) {
		return b.showSelected(true)
	}
	return nil
}

// scroll moves the list's or the grid's cursor by n, as the arrows do.
func (b *base[K, V]) scroll(p pane, n int) tea.Cmd {
	if p == paneMatrix {
		b.grid.Scroll(n)
		return nil
	}
	b.list.Scroll(n)
	return b.showSelected(false)
}

func (b *base[K, V]) opens(k tea.KeyPressMsg) bool  { return key.Matches(k, b.list.Keys().Open) }
func (b *base[K, V]) queues(k tea.KeyPressMsg) bool { return key.Matches(k, b.grid.Keys().Queue) }

func (b *base[K, V]) queued() { b.grid.ClearSelection() }

func (b *base[K, V]) shutdown() { b.loadCancel() }

// reload forgets every listing (what a place held may have changed behind
// the UI's back: a sync from another shell) and lists the item shown
// again, in commands.
func (b *base[K, V]) reload() tea.Cmd {
	b.forget()
	if !b.hasCurrent {
		return nil
	}
	return b.startLoad(b.current)
}

// forget drops every listing and cancels those under way; results still
// on their way find no listing to fill and are dropped.
func (b *base[K, V]) forget() {
	b.loadCancel()
	b.loadCtx = nil
	clear(b.cache)
	clear(b.dirty)
}

// update handles the messages every view gets: listings and ticks.
func (b *base[K, V]) update(msg viewMsg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg[K, V]:
		b.updateLoaded(msg)
	case loadTickMsg:
		if msg.token == b.loadToken && b.hasCurrent {
			return b.startLoad(b.current)
		}
	case relistTickMsg:
		return b.relist()
	}
	return nil
}

// selectItem shows item, listing it now or, while the cursor is still
// moving, a moment later.
func (b *base[K, V]) selectItem(item K, now bool) tea.Cmd {
	b.current, b.hasCurrent = item, true
	b.grid.Reset()
	b.rebuild()
	// A tick on its way is for an item the cursor has left.
	b.loadToken++
	if b.loaded(item) {
		return nil
	}
	if now {
		return b.startLoad(item)
	}
	tick := loadTickMsg{to(b.kind), b.loadToken}
	return tea.Tick(loadDelay, func(time.Time) tea.Msg { return tick })
}

// listingOf returns place i's listing of item, nil when none was asked for.
func (b *base[K, V]) listingOf(item K, i int) *listing[V] {
	if ls := b.cache[item]; i < len(ls) {
		return ls[i]
	}
	return nil
}

// shown returns place i's listing of the item shown, once it is in.
func (b *base[K, V]) shown(i int) (V, bool) { return b.listingOf(b.current, i).loaded() }

// loaded reports whether every place's listing of item is in or on its way.
func (b *base[K, V]) loaded(item K) bool {
	ls := b.cache[item]
	if ls == nil {
		return false
	}
	for _, l := range ls {
		if l == nil {
			return false
		}
	}
	return true
}

func (b *base[K, V]) loadCmd(ctx context.Context, i int, item K) tea.Cmd {
	b.gen++
	msg := loadedMsg[K, V]{to: to(b.kind), gen: b.gen, place: i, item: item}
	load := b.load
	return func() tea.Msg {
		msg.data, msg.warnings, msg.err = load(ctx, i, item)
		return msg
	}
}

// startLoad lists item in every place that has not, cancelling what is
// still being listed for the item shown before (never item's own).
func (b *base[K, V]) startLoad(item K) tea.Cmd {
	if b.loadCtx == nil || b.loadItem != item {
		b.loadCancel()
		b.loadCtx, b.loadCancel = context.WithCancel(b.sh.ctx)
		b.loadItem = item
	}
	ctx := b.loadCtx
	ls := b.cache[item]
	if ls == nil {
		ls = make([]*listing[V], len(b.places))
		b.cache[item] = ls
	}
	var cmds []tea.Cmd
	for i := range b.places {
		if ls[i] == nil {
			cmds = append(cmds, b.loadCmd(ctx, i, item))
			ls[i] = &listing[V]{state: stateLoading, gen: b.gen}
		}
	}
	b.rebuild()
	return tea.Batch(cmds...)
}

func (b *base[K, V]) updateLoaded(msg loadedMsg[K, V]) {
	ls := b.cache[msg.item]
	if ls == nil || ls[msg.place] == nil || ls[msg.place].gen != msg.gen {
		return // overtaken by a newer listing
	}
	l, num := ls[msg.place], b.places[msg.place].num
	l.refreshing = false
	switch {
	case errors.Is(msg.err, context.Canceled):
		if l.state == stateLoading {
			ls[msg.place] = nil // list again when the item is shown again
		}
		return
	case msg.err != nil && l.state == stateLoaded:
		// A refresh failed: keep what was listed, say why it is stale.
		b.sh.problem(statusBad, fmt.Sprintf("[%d] %v", num, msg.err), "")
	case msg.err != nil:
		l.state, l.err = stateFailed, msg.err
		if !msg.quiet {
			b.sh.problem(statusBad, fmt.Sprintf("[%d] %v", num, msg.err), "")
		}
	default:
		l.state, l.err, l.data = stateLoaded, nil, msg.data
	}
	if !msg.quiet {
		b.sh.warn(num, msg.warnings, b.hint(msg.place, msg.item))
	}
	b.noteNewest(msg.item)
	if b.hasCurrent && msg.item == b.current {
		b.rebuild()
	}
	if b.onLoaded != nil {
		b.onLoaded(msg.item)
	}
}

// noteNewest shows an item's newest version beside it in the list.
func (b *base[K, V]) noteNewest(item K) {
	var newest backends.Version
	for _, l := range b.cache[item] {
		d, ok := l.loaded()
		if !ok {
			continue
		}
		for _, v := range d.versions() {
			if newest == nil || backends.CompareVersions(v, newest) > 0 {
				newest = v
			}
		}
	}
	switch {
	case newest != nil && b.note != nil:
		b.note(item, newest)
	case newest != nil:
		b.list.SetNote(item, newest.String())
	}
}

// markDirty asks for place i's listing of item to be refreshed shortly.
func (b *base[K, V]) markDirty(i int, item K) tea.Cmd {
	if i < 0 {
		return nil
	}
	first := len(b.dirty) == 0
	b.dirty[dirtyKey[K]{i, item}] = true
	if !first {
		return nil // the tick is on its way
	}
	tick := relistTickMsg{to(b.kind)}
	return tea.Tick(relistDelay, func(time.Time) tea.Msg { return tick })
}

// relist refreshes the listings jobs changed, keeping what is shown until
// the new listing arrives so cells do not flicker.
func (b *base[K, V]) relist() tea.Cmd {
	var cmds []tea.Cmd
	for k := range b.dirty {
		ls := b.cache[k.item]
		if ls == nil {
			continue // never shown: it is listed afresh when it is
		}
		cmds = append(cmds, b.loadCmd(b.sh.ctx, k.place, k.item))
		if ls[k.place] == nil {
			ls[k.place] = &listing[V]{state: stateLoading}
		}
		ls[k.place].gen = b.gen
		ls[k.place].refreshing = true
	}
	clear(b.dirty)
	return tea.Batch(cmds...)
}

// loading reports whether a compared place is still listing the item shown,
// or listing it again.
func (b *base[K, V]) loading() bool {
	if !b.hasCurrent {
		return false
	}
	for _, i := range b.compared() {
		if l := b.listingOf(b.current, i); l == nil || l.state == stateLoading || l.refreshing {
			return true
		}
	}
	return false
}

// busy reports whether listings are under way: of the item shown, in any
// place, or after jobs landed.
func (b *base[K, V]) busy() bool {
	if len(b.dirty) > 0 {
		return true
	}
	if !b.hasCurrent {
		return false
	}
	for i := range b.places {
		if l := b.listingOf(b.current, i); l == nil || l.state == stateLoading || l.refreshing {
			return true
		}
	}
	return false
}

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
