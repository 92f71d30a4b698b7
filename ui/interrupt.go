package ui

import (
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Ctrl-C with work under way (jobs queued or running, or the index
// documents of what landed still being written) interrupts it: the UI
// cancels the jobs, waits for the engine to stop, and Run returns an
// *Interrupted naming what was cancelled, which the command prints to
// stderr once the terminal is back, exiting 130 as the other commands do
// on Ctrl-C. With nothing under way, Ctrl-C quits as q does.

// Interrupted is what Run returns when the user interrupted work under way
// (Ctrl-C) or a signal cancelled its context: what that cancelled, and what
// the session did before.
type Interrupted struct {
	// Canceled names each job the interrupt cancelled: its package and
	// destination.
	Canceled []string
	// Done and Failed count the session's jobs that landed and failed.
	Done, Failed int
	// Indexing: the index documents of what landed were still being
	// written, and may not have been.
	Indexing bool
}

// maxCanceledLines bounds the jobs Error names one per line.
const maxCanceledLines = 20

func (e *Interrupted) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ui: interrupted: %d job(s) cancelled, %d done, %d failed", len(e.Canceled), e.Done, e.Failed)
	if e.Indexing {
		b.WriteString("; the index documents of what landed were being written (tfmirror verify, or sync again, checks them)")
	}
	for i, c := range e.Canceled {
		if i == maxCanceledLines {
			fmt.Fprintf(&b, "\n  … and %d more cancelled", len(e.Canceled)-i)
			break
		}
		b.WriteString("\n  cancelled: " + c)
	}
	return b.String()
}

// interruption is what was under way when the user pressed Ctrl-C.
type interruption struct {
	unfinished []engine.JobID
	indexing   bool
}

// interrupt notes what Ctrl-C interrupts, if anything, before the engine
// is stopped.
func (m *Model) interrupt() {
	if m.interrupted != nil {
		return // a second Ctrl-C: the first said what was under way
	}
	tr := m.jobs.Tracker()
	in := unfinishedJobs(tr)
	in.indexing = m.queueActive && !tr.Unfinished()
	if len(in.unfinished) > 0 || in.indexing {
		m.interrupted = in
	}
}

// interruptedBy sums up, once the engine has stopped, what an interrupt
// cancelled: in's jobs that ended cancelled, and the session's counts.
func interruptedBy(in *interruption, tr *engine.Tracker) *Interrupted {
	e := &Interrupted{Indexing: in.indexing}
	for _, id := range in.unfinished {
		j := tr.Jobs[id]
		if j == nil || j.State == engine.Done || j.State == engine.Failed {
			continue // it ended on its own before the engine stopped
		}
		e.Canceled = append(e.Canceled, backends.PrintableLine(j.Info.Label()+" -> "+j.Info.Dst))
	}
	c := tr.Counts()
	e.Done, e.Failed = c[engine.Done], c[engine.Failed]
	return e
}

// unfinishedJobs is every job queued or running.
func unfinishedJobs(tr *engine.Tracker) *interruption {
	in := &interruption{}
	for _, id := range tr.Order {
		if st := tr.Jobs[id].State; st == engine.Queued || st == engine.Running {
			in.unfinished = append(in.unfinished, id)
		}
	}
	return in
}
