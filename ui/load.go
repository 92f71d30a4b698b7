package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// The engine blocks: its events are read, and jobs handed to it, in
// tea.Cmds, never in Update.

// engineEventMsg carries one engine event into Update.
type engineEventMsg struct{ ev engine.Event }

// engineClosedMsg: the engine has stopped and sent its last event.
type engineClosedMsg struct{}

// waitForEvent is the one-shot command that reads the next engine event;
// Update issues it again after each one.
func waitForEvent(events <-chan engine.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-events
		if !ok {
			return engineClosedMsg{}
		}
		return engineEventMsg{ev}
	}
}

// enqueuedMsg reports jobs handed to the engine.
type enqueuedMsg struct {
	ids  []engine.JobID
	jobs string // how the view counts them: "job(s)"
	dest string
}

// enqueueCmd hands tasks to the engine, the copies first authenticated as
// a sync's are (their sources' provenance read and checked, to be written
// beside the index documents once they land). Both read or wait: Enqueue
// sends an event per job and would wait for Update to read them once the
// channel's buffer is full, so neither may run inside Update.
func enqueueCmd(ctx context.Context, eng *engine.Engine, tasks []engine.Task, dest, jobs string) tea.Cmd {
	return func() tea.Msg {
		tasks := sync.AuthenticateTransfers(ctx, tasks, nil)
		return enqueuedMsg{ids: eng.Enqueue(tasks...), jobs: jobs, dest: dest}
	}
}

// jobCmd cancels or retries a job, or stops the engine, outside Update for
// the same reason.
func jobCmd(f func()) tea.Cmd {
	return func() tea.Msg {
		f()
		return nil
	}
}
