package backends_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

func TestRetryBackoff(t *testing.T) {
	p := backends.RetryPolicy{Attempts: 6, Base: 100 * time.Millisecond, Max: 350 * time.Millisecond}
	want := []time.Duration{100, 200, 350, 350}
	for i, w := range want {
		if got := p.Backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w*time.Millisecond)
		}
	}
	p.Jitter = 0.1
	for range 100 {
		if d := p.Backoff(2); d < 180*time.Millisecond || d > 220*time.Millisecond {
			t.Fatalf("Backoff(2) with 10%% jitter = %s, want 180ms..220ms", d)
		}
	}
}

func TestRetryDo(t *testing.T) {
	p := backends.RetryPolicy{Attempts: 3, Base: time.Millisecond}
	ctx := context.Background()
	var tries []int
	err := p.Do(ctx, func(ctx context.Context) error {
		tries = append(tries, backends.Attempt(ctx))
		return io.ErrUnexpectedEOF
	})
	if len(tries) != 3 || tries[2] != 3 {
		t.Errorf("tries %v, want 1 2 3", tries)
	}
	if !backends.Retried(err) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasSuffix(err.Error(), "(3 attempts)") {
		t.Errorf("err %v: want the last error, retried, saying 3 attempts", err)
	}
	n := 0
	err = p.Do(ctx, func(context.Context) error { n++; return errors.New("permanent") })
	if n != 1 || backends.Retried(err) || err.Error() != "permanent" {
		t.Errorf("permanent error: %d tries, %v", n, err)
	}
}

// Loops nest without multiplying: an outer loop does not try again what an
// inner one tried to the end (4 x 3 tries before), nor what a retrying
// layer below gave up on (GaveUp), but does try again what the inner one
// could not (a failure after it succeeded).
func TestRetryNestedDoesNotMultiply(t *testing.T) {
	outer := backends.RetryPolicy{Attempts: 4, Base: time.Millisecond}
	inner := backends.RetryPolicy{Attempts: 3, Base: time.Millisecond}
	ctx := context.Background()
	requests := 0
	err := outer.Do(ctx, func(ctx context.Context) error {
		return inner.Do(ctx, func(context.Context) error { requests++; return backends.Transient(errors.New("HTTP 503")) })
	})
	if requests != 3 {
		t.Errorf("%d requests, want the inner policy's 3", requests)
	}
	if !strings.HasSuffix(err.Error(), "HTTP 503 (3 attempts)") {
		t.Errorf("err %q", err)
	}

	requests = 0
	outer.Do(ctx, func(ctx context.Context) error {
		requests += 6 // a retrying transport's tries, to the end
		backends.GaveUp(ctx)
		return backends.Transient(errors.New("HTTP 503"))
	})
	if requests != 6 {
		t.Errorf("%d requests after a layer below gave up, want 6", requests)
	}

	jobs := 0
	outer.Do(ctx, func(ctx context.Context) error {
		jobs++
		if err := inner.Do(ctx, func(context.Context) error { return nil }); err != nil {
			return err
		}
		return io.ErrUnexpectedEOF
	})
	if jobs != 4 {
		t.Errorf("a body cut off after its request succeeded: %d tries, want the outer policy's 4", jobs)
	}
}

func TestRetryStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := backends.RetryPolicy{Attempts: 5, Base: time.Hour}.Do(ctx, func(context.Context) error {
		n++
		cancel()
		return io.ErrUnexpectedEOF
	})
	if n != 1 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%d tries, %v", n, err)
	}
}
