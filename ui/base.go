package ui

import (
	"context"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/list"
)

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

// hoverName is the full name of the item on row y of the list, "" where
// there is none.
func (b *base[K, V]) hoverName(y int) string { return b.list.FullNameAt(y) }

func (b *base[K, V]) opens(k tea.KeyPressMsg) bool  { return key.Matches(k, b.list.Keys().Open) }
func (b *base[K, V]) queues(k tea.KeyPressMsg) bool { return key.Matches(k, b.grid.Keys().Queue) }

func (b *base[K, V]) queued() { b.grid.ClearSelection() }

func (b *base[K, V]) shutdown() { b.loadCancel() }
