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
