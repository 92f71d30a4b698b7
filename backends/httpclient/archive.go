package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
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
// allows; accept is the Accept header ("" for none). The request is tried
// again (c.Retry) until its headers arrive with a 2xx status; a body cut
// off later is the caller's to retry. The deadline (the stall watchdog,
// Watchdog) applies to the wait for the response and then to each wait
// for more bytes, so a large archive on a slow link is fine and a stalled
// one is not.
//
// An archive is read exactly as sent: the request asks for identity
// encoding, which also keeps Go's transport from asking for gzip and
// inflating the answer behind the caller's back (a megabyte on the wire
// could become a gigabyte on disk). What the caller reads is therefore
// never more than the Content-Length the server stated: the transport ends
// the body there.
func (c *Client) Open(ctx context.Context, u *url.URL, auth *Auth, accept string) (*Download, error) {
	var d *Download
	err := c.retry(Streaming(ctx), func(ctx context.Context) (err error) {
		d, err = c.open(ctx, u, auth, accept)
		return err
	})
	return d, err
}

func (c *Client) open(ctx context.Context, u *url.URL, auth *Auth, accept string) (*Download, error) {
	resp, err := c.doWith(ctx, c.watchedClient(auth), u, auth, map[string]string{"Accept": accept, "Accept-Encoding": "identity"})
	if err != nil {
		return nil, err
	}
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc == "identity" {
		enc = ""
	}
	body := &archiveBody{rc: resp.Body, url: resp.Request.URL, size: resp.ContentLength}
	return &Download{ReadCloser: body, Size: resp.ContentLength, URL: resp.Request.URL, Encoding: enc}, nil
}

// watchedClient is httpClient with the stall watchdog under the debug log.
func (c *Client) watchedClient(auth *Auth) *http.Client {
	hc := c.httpClient(auth)
	var rt http.RoundTripper
	if c.HTTP != nil {
		rt = c.HTTP.Transport
	}
	hc.Transport = Wrap(Watchdog(rt, c.timeout()), c.Debug)
	return hc
}

// archiveBody names the URL and says how far the body got when reading it
// fails.
type archiveBody struct {
	rc   io.ReadCloser
	url  *url.URL
	n    int64 // bytes read so far
	size int64 // Content-Length, or -1
}

func (s *archiveBody) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	s.n += int64(n)
	if err != nil && err != io.EOF {
		var stall *StallError
		switch {
		case errors.As(err, &stall):
			err = transient{fmt.Errorf("GET %s: %w", RedactURL(s.url), err)}
		case !errors.Is(err, context.Canceled):
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

func (s *archiveBody) Close() error { return s.rc.Close() }
