package sync

import "context"

// Ordered is ordered, for the tests of package sync_test.
func Ordered[T any](ctx context.Context, workers, window, n int, work func(i int) T, done func(i int, r T) error) error {
	return ordered(ctx, workers, window, n, work, done)
}
