package backends

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// RetryPolicy is the one way tfmirror tries something again: how many
// times, how long to wait between tries, and (IsTransient) which failures
// are worth it. The HTTP client's document and download requests, the sync
// engine's jobs, and the retryers of oras-go (OCI) and the AWS SDK (S3)
// all take theirs from one.
//
// Tries nest without multiplying: a failure an inner loop has already
// tried to the end of its policy (Retried) is not tried again by an outer
// one, which therefore retries only what the inner ones cannot (a body
// cut off mid-stream, after its request had succeeded).
type RetryPolicy struct {
	// Attempts is how many times in all something is tried; less than 1
	// means once.
	Attempts int
	// Base is the wait before the first retry; it doubles for each one
	// after.
	Base time.Duration
	// Max caps a wait (0: no cap).
	Max time.Duration
	// Jitter spreads each wait by up to this fraction either way (0.1:
	// ±10%), so that writers that met do not meet again.
	Jitter float64
}

// The policies tfmirror uses where nothing else is configured.
var (
	// DefaultRetry is a request's: 3 tries, 250 ms then 500 ms apart.
	DefaultRetry = RetryPolicy{Attempts: 3, Base: 250 * time.Millisecond, Max: 3 * time.Second, Jitter: 0.1}
)

// Tries is Attempts, at least 1.
func (p RetryPolicy) Tries() int { return max(p.Attempts, 1) }

// Backoff is the wait before retry n (1: the wait after the first try).
func (p RetryPolicy) Backoff(n int) time.Duration {
	d := p.Base
	for i := 1; i < n && (p.Max <= 0 || d < p.Max); i++ {
		d *= 2
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	if p.Jitter > 0 && d > 0 {
		spread := float64(d) * p.Jitter
		d += time.Duration(spread * (2*rand.Float64() - 1))
	}
	return d
}

// Wait waits Backoff(n), or until ctx is done (its error then): the pause
// before retry n of a loop that decides for itself what is worth another
// try (writers that met, a tag read back without what was pushed).
func (p RetryPolicy) Wait(ctx context.Context, n int) error { return Sleep(ctx, p.Backoff(n)) }

// Do runs try until it succeeds, fails in a way not worth retrying, or has
// been tried Attempts times, waiting Backoff between tries; see Run.
func (p RetryPolicy) Do(ctx context.Context, try func(ctx context.Context) error) error {
	return p.Run(ctx, try, nil)
}

// Run is Do that calls retrying (when not nil) before each wait, with the
// try that failed, its error and the wait. Each try gets ctx marked with
// its attempt (WithAttempt), counted on from ctx's own. A try's error is
// retried when IsTransient holds for it, no inner loop has already tried
// it to the end (Retried, GaveUp) and ctx is not done. The error of a
// thing tried more than once, or given up on by an inner loop, is
// returned as a *RetriedError.
func (p RetryPolicy) Run(ctx context.Context, try func(ctx context.Context) error, retrying func(attempt int, err error, wait time.Duration)) error {
	first := Attempt(ctx)
	for n := 1; ; n++ {
		spent := new(atomic.Bool)
		err := try(context.WithValue(WithAttempt(ctx, first+n-1), spentKey{}, spent))
		if err == nil {
			return nil
		}
		innerDone := Retried(err) || spent.Load()
		if ctx.Err() != nil || !IsTransient(err) || innerDone || n >= p.Tries() {
			if n > 1 || innerDone {
				return wrapRetried(err, n)
			}
			return err
		}
		wait := p.Backoff(n)
		if retrying != nil {
			retrying(first+n-1, err, wait)
		}
		if Sleep(ctx, wait) != nil {
			return wrapRetried(err, n)
		}
	}
}

func wrapRetried(err error, n int) error {
	var r *RetriedError
	if errors.As(err, &r) {
		if n == 1 {
			return err
		}
		// The inner loop's count says more than ours: keep its error.
		return &RetriedError{Err: err, Attempts: n, quiet: true}
	}
	return &RetriedError{Err: err, Attempts: n}
}

// RetriedError is the last failure of something tried as often as its
// policy allows (or given up on by an inner loop, GaveUp): no loop around
// it tries it again.
type RetriedError struct {
	Err      error
	Attempts int
	quiet    bool // the message is Err's: it already counts
}

func (e *RetriedError) Error() string {
	if e.Attempts <= 1 || e.quiet {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (%d attempts)", e.Err, e.Attempts)
}

func (e *RetriedError) Unwrap() error { return e.Err }

// Retried reports whether err was already tried as often as a retry loop
// allowed: a loop around that one does not try it again.
func Retried(err error) bool {
	var r *RetriedError
	return errors.As(err, &r)
}

type spentKey struct{}

// GaveUp records, for the try of a Run whose ctx this is, that a retrying
// layer below that speaks only in responses (oras-go's retry.Transport,
// the AWS SDK's retryer) tried a request as often as its policy allows and
// still failed: Run then does not try again what fails with it.
func GaveUp(ctx context.Context) {
	if s, ok := ctx.Value(spentKey{}).(*atomic.Bool); ok {
		s.Store(true)
	}
}

// TransientStatus reports whether an HTTP status is worth retrying: the
// server was busy or broke (5xx, 429 Too Many Requests, 408 Request
// Timeout) rather than refused.
func TransientStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout
}
