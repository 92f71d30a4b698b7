package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
)

// Run shows the UI until the user quits or ctx is cancelled, then stops
// cfg.Engine (cancelling any jobs still running) and waits for it to end.
func Run(ctx context.Context, cfg Config, opts ...tea.ProgramOption) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, cfg)
	defer m.Shutdown()
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx)}, opts...)...)
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return context.Canceled
	}
	return err
}
