package list

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/ui/filterline"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// KeyMap is a list's keys. Open is carried out by the root, which moves the
// focus; it is here so help lists it with the list.
type KeyMap struct {
	Nav
	Filter, Open key.Binding
	Typing       filterline.KeyMap
}

// DefaultKeyMap returns a list's keys; open names what enter opens in help
// ("open matrix").
func DefaultKeyMap(open string) KeyMap {
	return KeyMap{
		Nav:    DefaultNav("first", "last"),
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Open:   key.NewBinding(key.WithKeys("enter", "right", "l"), key.WithHelp("enter", open)),
		Typing: filterline.DefaultKeyMap(),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Filter, k.Open} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Bindings(), {k.Filter, k.Open}}
}

// Item is one row of a list.
type Item[K comparable] struct {
	Key K
	// Label is how the list names it: its short name, or the full one where
	// two items share the short name.
	Label string
	// Note is shown beside the label where there is room (the newest
	// version, once known).
	Note string
	// Badge is what the list says of the item at the right end of its row,
	// in full and short (for a narrow pane): "2 missing" and "○2".
	Badge [2]string
	// BadgeKind styles the badge: 0 plain, 1 a warning, 2 a failure.
	BadgeKind int
	// search is what the filter matches.
	search string
	// span is the part of Label that tells it apart from the others, kept
	// where a narrow pane cuts it.
	span theme.Span
}

// Options make a list.
type Options[K comparable] struct {
	// Name heads the pane ("Providers").
	Name string
	Keys KeyMap
	// Short and Full name an item; Full is also what the filter matches.
	Short, Full func(K) string
	// NoMatch is said when the filter hides every item; Empty when there
	// are none.
	NoMatch, Empty string
	// Start, if set, picks where the cursor rests until the user moves
	// it: the first shown item it accepts, else the first row.
	Start func(K) bool
}

// Model is a list of named items, filtered as the user types.
type Model[K comparable] struct {
	opts   Options[K]
	styles *theme.Styles
	items  []Item[K]
	shown  []int // indices into items that pass the filter
	cur    Cursor
	filter filterline.Model
	w, h   int
	// held: the user moved the cursor or opened its item; until then the
	// cursor stays on the first row as items arrive.
	held bool
}

// New returns an empty list.
func New[K comparable](styles *theme.Styles, opts Options[K]) Model[K] {
	return Model[K]{opts: opts, styles: styles, filter: filterline.New(styles, "filter")}
}

// Keys returns the list's key bindings.
func (m Model[K]) Keys() KeyMap { return m.opts.Keys }

// HelpKeys returns the keys in effect, for help.
func (m Model[K]) HelpKeys() help.KeyMap {
	if m.filter.Typing() {
		return m.opts.Keys.Typing
	}
	return m.opts.Keys
}

// Typing reports whether the filter is being edited.
func (m Model[K]) Typing() bool { return m.filter.Typing() }

// SetSize sets the area the list draws in.
func (m *Model[K]) SetSize(w, h int) {
	m.w, m.h = w, h
	m.filter.SetWidth(max(1, w-3))
	m.clamp()
}

// SetItems replaces the list, keeping the notes already known, and the
// cursor on the same item once the user has moved it or opened its item
// (Hold); until then on the first row (or the first item Options.Start
// accepts), whatever arrived above it.
func (m *Model[K]) SetItems(keys []K) {
	at, ok := m.Selected()
	notes := map[K]string{}
	badges := map[K]Item[K]{}
	for _, it := range m.items {
		notes[it.Key] = it.Note
		badges[it.Key] = it
	}
	short := map[string]int{}
	for _, k := range keys {
		short[m.opts.Short(k)]++
	}
	m.items = make([]Item[K], len(keys))
	for i, k := range keys {
		label, full := m.opts.Short(k), m.opts.Full(k)
		if short[label] > 1 {
			label = full
		}
		b := badges[k]
		m.items[i] = Item[K]{Key: k, Label: label, Note: notes[k], Badge: b.Badge, BadgeKind: b.BadgeKind, search: full}
	}
	labels := make([]string, len(m.items))
	for i, it := range m.items {
		labels[i] = it.Label
	}
	for i, sp := range theme.Spans(labels) {
		m.items[i].span = sp
	}
	m.refilter()
	switch {
	case !m.held:
		m.cur = Cursor{}
		m.rest()
	case ok:
		m.moveTo(at)
	}
	m.clamp()
}

// Hold keeps the cursor on its item as items arrive from now on: the user
// opened it. Moving the cursor (keys, click, wheel) holds it too.
func (m *Model[K]) Hold() { m.held = true }

// Held reports whether the cursor stays on its item as items arrive,
// rather than on the first row.
func (m Model[K]) Held() bool { return m.held }

// SetNote sets the note shown beside k.
func (m *Model[K]) SetNote(k K, note string) {
	for i := range m.items {
		if m.items[i].Key == k {
			m.items[i].Note = note
			return
		}
	}
}

// SetBadge sets what the list says of k at the right end of its row: long
// where it fits beside the label, else short; kind styles it (0 plain, 1 a
// warning, 2 a failure).
func (m *Model[K]) SetBadge(k K, long, short string, kind int) {
	for i := range m.items {
		if m.items[i].Key == k {
			m.items[i].Badge, m.items[i].BadgeKind = [2]string{long, short}, kind
			return
		}
	}
}

// Label is how the list names k: its short name, unless another item
// shares it.
func (m Model[K]) Label(k K) string {
	for _, it := range m.items {
		if it.Key == k {
			return it.Label
		}
	}
	return m.opts.Short(k)
}

// Len is the number of items in the list, before filtering.
func (m Model[K]) Len() int { return len(m.items) }

// Shown is the number of items the filter lets through.
func (m Model[K]) Shown() int { return len(m.shown) }

// Selected returns the item under the cursor.
func (m Model[K]) Selected() (K, bool) {
	if m.cur.Pos < 0 || m.cur.Pos >= len(m.shown) {
		var zero K
		return zero, false
	}
	return m.items[m.shown[m.cur.Pos]].Key, true
}

// Update handles the list's keys.
func (m Model[K]) Update(msg tea.Msg) (Model[K], tea.Cmd) {
	if m.filter.Typing() {
		return m, m.filter.Type(msg, m.opts.Keys.Typing, m.reapplyFilter)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	if key.Matches(k, m.opts.Keys.Filter) {
		return m, m.filter.Start()
	}
	if m.opts.Keys.Move(&m.cur, k, len(m.shown), max(1, m.rowsOnScreen())) {
		m.held = true
	}
	m.clamp()
	return m, nil
}

func (m *Model[K]) reapplyFilter() {
	at, ok := m.Selected()
	m.refilter()
	m.cur = Cursor{}
	if ok {
		m.moveTo(at)
	}
	m.clamp()
}

func (m *Model[K]) refilter() {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	m.shown = m.shown[:0]
	for i, it := range m.items {
		if f == "" || strings.Contains(it.search, f) {
			m.shown = append(m.shown, i)
		}
	}
}

// rest puts the cursor, not yet held, on the first shown item
// Options.Start accepts.
func (m *Model[K]) rest() {
	if m.opts.Start == nil {
		return
	}
	for i, j := range m.shown {
		if m.opts.Start(m.items[j].Key) {
			m.cur.Pos = i
			return
		}
	}
}

func (m *Model[K]) moveTo(k K) {
	for i, j := range m.shown {
		if m.items[j].Key == k {
			m.cur.Pos = i
			return
		}
	}
}

func (m Model[K]) rowsOnScreen() int {
	if m.filter.Shown() {
		return m.h - 1
	}
	return m.h
}

func (m *Model[K]) clamp() { m.cur.Clamp(len(m.shown), m.rowsOnScreen()) }

// Title is the pane's title: the filter in use and how many match.
func (m Model[K]) Title() string {
	t := m.opts.Name
	if f := m.filter.Value(); f != "" {
		t += " /" + f
	}
	if len(m.items) > 0 {
		if len(m.shown) != len(m.items) {
			t += " " + strconv.Itoa(len(m.shown)) + "/" + strconv.Itoa(len(m.items))
		} else {
			t += " " + strconv.Itoa(len(m.items))
		}
	}
	return t
}

// View renders the items on screen, with notes where the pane is wide
// enough.
func (m Model[K]) View() string {
	s := m.styles
	if len(m.items) == 0 && m.opts.Empty != "" {
		return s.Dim.Render(m.opts.Empty)
	}
	lines := make([]string, 0, max(0, m.h))
	if m.filter.Shown() {
		lines = append(lines, m.filter.View(s.Dim))
	}
	vis := max(0, m.rowsOnScreen())
	short := m.shortBadges()
	for i := m.cur.Top; i < len(m.shown) && i < m.cur.Top+vis; i++ {
		lines = append(lines, m.row(m.items[m.shown[i]], i == m.cur.Pos, short))
	}
	if len(m.shown) == 0 && len(m.items) > 0 {
		lines = append(lines, s.Dim.Render(m.opts.NoMatch))
	}
	return strings.Join(lines, "\n")
}

// shortBadges reports whether the badges are shown short: where one
// does not fit beside its label in full, all are, so they read alike.
func (m Model[K]) shortBadges() bool {
	for _, it := range m.items {
		if it.Badge[0] != "" && theme.Width(it.Label)+1+theme.Width(it.Badge[0]) > m.w-1 {
			return true
		}
	}
	return false
}

func (m Model[K]) row(it Item[K], cursor, short bool) string {
	s := m.styles
	room := m.w - 1
	badge := it.Badge[0]
	if short {
		badge = it.Badge[1]
	}
	if badge != "" {
		room -= theme.Width(badge) + 1
	}
	note := ""
	// The note (a version) goes before the name is cut: the name is what
	// the row is for.
	if it.Note != "" && m.w >= 28 && room-len(it.Note)-1 >= theme.Width(it.Label) {
		note = it.Note
	}
	if note != "" {
		room -= len(note) + 1
	}
	line := theme.Fit(it.span.Cut(it.Label, room), room)
	if note != "" {
		line += " " + s.Dim.Render(note)
	}
	if badge != "" {
		st := s.Dim
		switch it.BadgeKind {
		case 1:
			st = s.Warn
		case 2:
			st = s.Bad
		}
		line += " " + st.Render(badge)
	}
	if cursor {
		return s.Accent.Render("▸") + s.Bold.Render(line)
	}
	return " " + line
}

// Click puts the cursor on the item drawn on line y of the list's area; it
// reports whether there is one there.
func (m *Model[K]) Click(y int) bool {
	if m.filter.Shown() {
		y-- // the filter's line
	}
	if y < 0 || y >= m.rowsOnScreen() || m.cur.Top+y >= len(m.shown) {
		return false
	}
	m.cur.Pos = m.cur.Top + y
	m.held = true
	m.clamp()
	return true
}

// FullNameAt is the full name of the item on row y of the pane (as Click
// counts rows), "" where there is none.
func (m Model[K]) FullNameAt(y int) string {
	if m.filter.Shown() {
		y--
	}
	if y < 0 || y >= m.rowsOnScreen() || m.cur.Top+y >= len(m.shown) {
		return ""
	}
	return m.opts.Full(m.items[m.shown[m.cur.Top+y]].Key)
}

// Scroll moves the cursor by n items (negative: up), as the arrows do.
func (m *Model[K]) Scroll(n int) {
	m.cur.Pos += n
	m.held = true
	m.clamp()
}

// Items returns the items, before filtering.
func (m Model[K]) Items() []Item[K] { return m.items }
