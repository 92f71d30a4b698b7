package ui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/events"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/queue"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// view is one kind of thing the UI compares across places: providers (the
// platform matrix) or modules (a table of versions). The root draws the
// frame (header, boxes, Details, jobs, status, help), routes keys and
// messages, and owns the engine; a view owns its places, its list, its grid
// and what each place holds of the item shown. Both views embed base, which
// does for either what does not depend on what is compared.
//
// A view is composed of small roles, as gh-dash composes its sections: each
// part of the root asks for the role it uses. Two roles are optional and
// asked for by type assertion: detailer (a view with nothing to show in
// Details leaves the pane empty) and jobWatcher (a view that no job can
// change ignores the engine).
type view interface {
	lifecycle
	drawer
	keyer
	pointer
	chooser
}

// lifecycle is a view's listing: started, fed its own messages, asked
// again, and stopped.
type lifecycle interface {
	Init() tea.Cmd
	// update handles one of the view's own messages.
	update(msg viewMsg) tea.Cmd
	// reload lists every place again (ctrl+r: after a sync from elsewhere),
	// in commands.
	reload() tea.Cmd
	// busy: a listing is under way (the spinner turns).
	busy() bool
	shutdown()
}

// drawer is what a view draws into the frame the root lays out.
type drawer interface {
	setSize(l layout)
	// words name the view in titles, help and messages.
	words() viewWords
	header() []place
	listBox() (title string, lines []string)
	gridBox() (title string, lines []string)
}

// keyer handles the keys of the list and the grid.
type keyer interface {
	// key handles a key for the list or the grid, but for the keys that
	// open the grid and the queue dialog, which are the root's.
	key(p pane, k tea.KeyPressMsg) tea.Cmd
	// opens and queues say whether k is the view's key that opens the
	// grid (in the list) or the queue dialog (in the grid).
	opens(k tea.KeyPressMsg) bool
	queues(k tea.KeyPressMsg) bool
	// typing: the pane takes every key (a filter is being typed).
	typing(p pane) bool
	helpKeys(p pane) help.KeyMap
}

// pointer is the mouse in the list or the grid: a click at (x, y) inside
// the pane (focused: it had the focus), the wheel moving the cursor by n.
type pointer interface {
	click(p pane, x, y int, focused bool) tea.Cmd
	scroll(p pane, n int) tea.Cmd
}

// chooser is what the user picks: the places compared, and the selection
// the queue dialog queues.
type chooser interface {
	toggleCompared(num int)
	// queue says what the dialog would queue, or why nothing can be.
	queue() (queue.Request, bool)
	// queued clears the selection the dialog queued.
	queued()
}

// detailer shows the grid's cell under the cursor in Details (optional).
type detailer interface {
	// cursor is the cell under the grid's cursor, if an item is shown.
	cursor() (grid.Cell, bool)
	showDetails(d *details.Model, c grid.Cell)
}

// jobWatcher is told of every engine event, with the job it is about
// (optional): a landed job changes what a place holds.
type jobWatcher interface {
	jobEvent(j *engine.TrackedJob, ev engine.Event) tea.Cmd
}

// Every view plays every role: the Modules view, and the three Providers
// views (plain, on a spec, on lock files) over one providersView.
var (
	_ view       = (*providersView)(nil)
	_ view       = (*specView)(nil)
	_ view       = (*lockView)(nil)
	_ view       = (*modulesView)(nil)
	_ detailer   = (*providersView)(nil)
	_ detailer   = (*specView)(nil)
	_ detailer   = (*lockView)(nil)
	_ detailer   = (*modulesView)(nil)
	_ jobWatcher = (*providersView)(nil)
	_ jobWatcher = (*specView)(nil)
	_ jobWatcher = (*lockView)(nil)
	_ jobWatcher = (*modulesView)(nil)
)

// viewWords are what the frame says of a view.
type viewWords struct {
	places string // header: " ─ mirrors: "
	list   string // help: "Providers"
	item   string // help: "provider"
	// listNote explains what the list says beside each item, in help.
	listNote  string
	grid      string // help: "Matrix"
	jobsEmpty string // the jobs pane with no jobs
	// marks is what one mark stands for ("mirror"); legend explains
	// every mark the view draws.
	marks  string
	legend []grid.LegendItem
}

type viewKind int

const (
	viewProviders viewKind = iota
	viewModules
	numViews
)

// viewMsg is a message for one view; the root hands it over.
type viewMsg interface{ target() viewKind }

// to addresses a message to a view.
type to viewKind

func (t to) target() viewKind { return viewKind(t) }

// shell is what the root lends its views: the context, the styles, the
// status line, the log of events and the spinner's frame.
type shell struct {
	ctx    context.Context
	styles *theme.Styles
	status status
	// log keeps every problem in full, for the events pane: the status
	// line has room for one cut line of the latest.
	log  *events.Log
	spin string
	// versions narrows every view's versions.
	versions backends.VersionConstraint
}

func (sh *shell) setStatus(kind statusKind, text string) {
	sh.status = status{text: backends.Printable(text), kind: kind}
}

// problem shows a failure or a warning in the status line and records it,
// in full where full is given, in the log.
func (sh *shell) problem(kind statusKind, text, full string) {
	sh.setStatus(kind, text)
	if full == "" {
		full = text
	}
	if kind == statusBad {
		sh.log.Add(events.Failure, full)
	} else {
		sh.log.Add(events.Warning, full)
	}
}

// warn records every one of a place's warnings and shows the first, unless
// a failure is shown.
func (sh *shell) warn(num int, warnings []string, hint string) {
	for _, w := range warnings {
		sh.log.Add(events.Warning, fmt.Sprintf("[%d] %s", num, w))
	}
	if len(warnings) > 0 && sh.status.kind != statusBad {
		sh.setStatus(statusWarn, fmt.Sprintf("[%d] %d warning(s), first: %s (%s lists them)", num, len(warnings), warnings[0], hint))
	}
}

// place is one place a view compares, as the header numbers it.
type place struct {
	num        int
	name, kind string
	compared   bool
	writable   bool // jobs can write to it
}
