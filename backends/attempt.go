package backends

import (
	"context"
	"time"
)

type attemptKey struct{}

// WithAttempt records in ctx that the work done with it is try n of
// something retried (a sync job, a document request), so what it sends can
// say so (the --debug log of HTTP requests).
func WithAttempt(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptKey{}, n)
}

// Attempt is the try WithAttempt recorded in ctx, or 1.
func Attempt(ctx context.Context) int {
	if n, ok := ctx.Value(attemptKey{}).(int); ok && n > 0 {
		return n
	}
	return 1
}

// Sleep waits d, or until ctx is done (its error then): the pause between
// the tries of writers that met, whose jitter the caller chooses.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type waitingKey struct{}

// WithWaiting records in ctx what to call when the work done with it is
// about to wait on something shared that its own worker does not speed up:
// a group sync making many writers' files durable at once. The engine
// then lets another job start meanwhile, so the next group holds more.
func WithWaiting(ctx context.Context, waiting func()) context.Context {
	return context.WithValue(ctx, waitingKey{}, waiting)
}

// Waiting tells ctx's job runner (WithWaiting) that the caller is about
// to wait on something shared; it does nothing where no runner listens.
func Waiting(ctx context.Context) {
	if w, ok := ctx.Value(waitingKey{}).(func()); ok && w != nil {
		w()
	}
}
