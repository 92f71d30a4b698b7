package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Run shows the UI until the user quits or ctx is cancelled, then stops
// cfg.Engine (cancelling any jobs still running) and waits for it to end.
func Run(ctx context.Context, cfg Config, opts ...tea.ProgramOption) error {
	// The renderer measures each cell with go-runewidth, whose first look
	// at a character past U+02FF (the frame's box drawing) builds its
	// 2 MiB tables: 10-12 ms of the first frame here. Built now, they are
	// ready by then.
	go ansi.StringWidthWc("─")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, cfg)
	defer m.Shutdown()
	// The program writes to os.Stdout, whose color profile lipgloss
	// detected at start (NO_COLOR and all): Bubble Tea would detect it
	// again, and inside tmux each detection runs `tmux info`, tens of
	// milliseconds before the first frame. A caller giving another output
	// gives its profile too.
	//
	// Signals are the caller's: they cancel ctx, which ends the program
	// (ErrProgramKilled) with what they interrupted said. Bubble Tea's own
	// handler would end it with a plain quit on SIGTERM, exit 0 and
	// nothing said, racing the caller's.
	base := []tea.ProgramOption{tea.WithContext(ctx), tea.WithColorProfile(lipgloss.Writer.Profile), tea.WithoutSignalHandler()}
	p := tea.NewProgram(m, append(base, opts...)...)
	final, err := p.Run()
	killed := errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil
	in := unfinishedJobs(m.jobs.Tracker()) // what a signal interrupts
	if fm, ok := final.(Model); ok && fm.interrupted != nil {
		in, killed = fm.interrupted, true // Ctrl-C, as a key
	}
	// The engine stopped, every job's end is known: what was cancelled.
	m.Shutdown()
	if killed && (len(in.unfinished) > 0 || in.indexing) {
		return interruptedBy(in, m.jobs.Tracker())
	}
	if killed {
		return ctx.Err()
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return context.Canceled
	}
	return err
}
