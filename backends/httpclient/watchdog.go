package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Watchdog wraps rt with the one stall watchdog of every download (archives
// from network mirrors and registries, OCI blobs, S3 objects): a request
// has d to start answering, and then its body d for each next bytes. A
// large archive on a slow link is fine, a stalled one is not. Sending the
// request's own body counts as progress, so a large upload is not cut off
// while its bytes still go out. What the watchdog ends fails with a
// *StallError; d <= 0 means no watchdog.
func Watchdog(rt http.RoundTripper, d time.Duration) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if d <= 0 {
		return rt
	}
	return &watchdog{base: rt, d: d}
}

// StallError is a request the watchdog ended: no answer, or no more bytes
// of its body, within its timeout. It is a net.Error whose Timeout()
// holds, so every retrying layer (backends.IsTransient) takes it for
// transient.
type StallError struct {
	// Answered is whether the headers had arrived (the body stalled).
	Answered bool
	D        time.Duration
}

func (e *StallError) Error() string {
	if e.Answered {
		return fmt.Sprintf("no data for %s", e.D)
	}
	return fmt.Sprintf("no answer within %s", e.D)
}

func (e *StallError) Timeout() bool   { return true }
func (e *StallError) Temporary() bool { return true }
func (e *StallError) Transient() bool { return true }

// errStalled is the cause of a request the watchdog cancelled.
var errStalled = errors.New("stalled")

type watchdog struct {
	base http.RoundTripper
	d    time.Duration
}

func (w *watchdog) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(w.d, func() { cancel(errStalled) })
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		out.Body = &sendingBody{ReadCloser: req.Body, timer: timer, d: w.d}
	}
	resp, err := w.base.RoundTrip(out)
	if err != nil {
		timer.Stop()
		stalled := errors.Is(context.Cause(ctx), errStalled)
		cancel(nil)
		if stalled {
			return nil, &StallError{D: w.d}
		}
		return nil, err
	}
	timer.Reset(w.d)
	resp.Body = &watchedBody{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, d: w.d}
	return resp, nil
}

// sendingBody resets the watchdog while the request's body is read.
type sendingBody struct {
	io.ReadCloser
	timer *time.Timer
	d     time.Duration
}

func (b *sendingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

// watchedBody resets the watchdog at each read that brings bytes, and
// says so when it ended the body.
type watchedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	d      time.Duration
	once   sync.Once
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), errStalled) {
		err = &StallError{Answered: true, D: b.d}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.once.Do(func() { b.cancel(nil) })
	return err
}
