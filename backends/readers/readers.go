// Package readers holds the small io.Reader wrappers every layer uses:
// one that stops once its context is done, and one that reports each
// read's size (for progress bars and byte counts).
package readers

import (
	"context"
	"io"
)

// WithContext returns r, stopping with ctx's error at the first read after
// ctx is done: a copy of a stream that does not watch ctx itself (a file,
// a pipe) ends when the run is cancelled.
func WithContext(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx: ctx, r: r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// OnRead returns r, calling fn with the number of bytes of each read that
// returned some: a progress bar's callback, or a count (fn adds to it).
func OnRead(r io.Reader, fn func(n int64)) io.Reader { return &onRead{r: r, fn: fn} }

type onRead struct {
	r  io.Reader
	fn func(int64)
}

func (o *onRead) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if n > 0 {
		o.fn(int64(n))
	}
	return n, err
}
