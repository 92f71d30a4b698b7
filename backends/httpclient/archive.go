package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Download is an archive being downloaded.
type Download struct {
	io.ReadCloser
	// Size is the Content-Length, or -1.
	Size int64
	// URL is the final URL after redirects.
	URL *url.URL
	// Encoding is the Content-Encoding the server sent despite being asked
	// for identity ("" when it sent none, or identity). The body is the
	// bytes on the wire all the same: they are never decoded here.
	Encoding string
}

// StreamSize is the Content-Length, or -1 (backends.SizedReader).
func (d *Download) StreamSize() int64 { return d.Size }

// Open starts downloading u. auth, when not nil, rides only where its rule
// allows; accept is the Accept header ("" for none). The deadline applies
// to the wait for the response and then to each wait for more bytes, so a
// large archive on a slow link is fine and a stalled one is not.
//
// An archive is read exactly as sent: the request asks for identity
// encoding, which also keeps Go's transport from asking for gzip and
// inflating the answer behind the caller's back (a megabyte on the wire
// could become a gigabyte on disk). What the caller reads is therefore
// never more than the Content-Length the server stated: the transport ends
// the body there.
func (c *Client) Open(ctx context.Context, u *url.URL, auth *Auth, accept string) (*Download, error) {
	ctx, cancel := context.WithCancelCause(Streaming(ctx))
	d := c.timeout()
	timer := time.AfterFunc(d, func() { cancel(errTimeout) })
	resp, err := c.do(ctx, u, auth, map[string]string{"Accept": accept, "Accept-Encoding": "identity"})
	if err != nil {
		timer.Stop()
		cancel(nil)
		if errors.Is(context.Cause(ctx), errTimeout) {
			return nil, transient{fmt.Errorf("GET %s: no answer within %s", RedactURL(u), d)}
		}
		return nil, err
	}
	timer.Reset(d)
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc == "identity" {
		enc = ""
	}
	body := &stallReader{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, d: d, url: resp.Request.URL, size: resp.ContentLength}
	return &Download{ReadCloser: body, Size: resp.ContentLength, URL: resp.Request.URL, Encoding: enc}, nil
}

// stallReader cancels the request when no bytes arrive for d.
type stallReader struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	d      time.Duration
	url    *url.URL
	n      int64 // bytes read so far
	size   int64 // Content-Length, or -1
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	s.n += int64(n)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	if err != nil && err != io.EOF {
		if errors.Is(context.Cause(s.ctx), errTimeout) {
			return n, transient{fmt.Errorf("GET %s: no data for %s", RedactURL(s.url), s.d)}
		}
		if s.ctx.Err() == nil {
			// Say how far it got: "unexpected EOF" alone reads like a
			// bug rather than a dropped connection.
			of := ""
			if s.size >= 0 {
				of = fmt.Sprintf(" of %d", s.size)
			}
			err = transient{fmt.Errorf("GET %s: the connection broke after %d%s bytes: %w", RedactURL(s.url), s.n, of, err)}
		}
	}
	return n, err
}

func (s *stallReader) Close() error {
	s.timer.Stop()
	err := s.rc.Close()
	s.cancel(nil)
	return err
}
