package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
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
