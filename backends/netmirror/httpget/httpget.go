// Package httpget makes the GET requests of tfmirror's HTTP places (network
// mirrors and origin registries) with the rules they share: a deadline on
// every request, a bounded number of redirects, bounded JSON documents that
// must be application/json, a bearer token sent to one host only and dropped
// on any redirect away from it, and statuses mapped to backends' sentinels.
package httpget

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

// Defaults for Client's zero fields.
const (
	// DefaultTimeout bounds a metadata request from start to the last byte,
	// and an archive download's wait for its next bytes.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRedirects is what the clients allow before calling it a loop.
	DefaultMaxRedirects = 5
	// DefaultMaxDocument bounds a JSON document (or SHA256SUMS, a signature).
	// Real ones are a few KiB; the largest, a registry's versions list for a
	// provider with hundreds of releases, stays well under 1 MiB.
	DefaultMaxDocument int64 = 4 << 20
	// DefaultRetries is how many more times a metadata request is tried
	// after a transient failure (5xx, 429, a timeout, a reset connection),
	// as the clients' own HTTP clients retry; a brief outage of a mirror
	// should not end a sync at its planning stage.
	DefaultRetries = 2
	// DefaultRetryBackoff is the wait before the first retry; it doubles
	// for each one after.
	DefaultRetryBackoff = 250 * time.Millisecond
)

// NewTransport returns a transport for HTTP places: http.DefaultTransport's
// settings, trusting roots (nil: the system pool, which honours
// SSL_CERT_FILE and SSL_CERT_DIR), and keeping enough idle connections per
// host for concurrent metadata requests; the default of 2 would make most of
// them pay for a new TLS handshake.
func NewTransport(roots *x509.CertPool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32
	if roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return t
}

// Client makes GET requests. The zero value is usable.
type Client struct {
	// HTTP supplies the transport (TLS trust, proxies). Its CheckRedirect,
	// Timeout and Jar are not used. Nil means http.DefaultClient's transport,
	// which trusts the system pool (SSL_CERT_FILE, SSL_CERT_DIR).
	HTTP         *http.Client
	Timeout      time.Duration
	MaxRedirects int
	MaxDocument  int64
	UserAgent    string
	// Retries bounds the extra tries of a metadata request (JSON,
	// Document) after a transient failure: 0 means DefaultRetries, negative
	// none. Archive downloads (Open) are not retried here: the sync engine
	// retries the whole job.
	Retries int
	// RetryBackoff is the first wait between tries; 0 means
	// DefaultRetryBackoff.
	RetryBackoff time.Duration
}

// Auth is a bearer token and the one host (comparison form: lowercase, port
// unless 443) it may be sent to.
type Auth struct {
	Host  string
	Token string
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) maxRedirects() int {
	if c.MaxRedirects > 0 {
		return c.MaxRedirects
	}
	return DefaultMaxRedirects
}

func (c *Client) tries() int {
	switch {
	case c.Retries < 0:
		return 1
	case c.Retries == 0:
		return 1 + DefaultRetries
	}
	return 1 + c.Retries
}

// retry runs one metadata request until it succeeds, fails permanently, or
// has been tried c.tries() times, waiting longer before each try.
func (c *Client) retry(ctx context.Context, do func() error) error {
	delay := c.RetryBackoff
	if delay <= 0 {
		delay = DefaultRetryBackoff
	}
	tries := c.tries()
	for n := 1; ; n++ {
		err := do()
		if err == nil || n >= tries || !backends.IsTransient(err) || ctx.Err() != nil {
			if err != nil && n > 1 {
				err = &triedError{err: err, tries: n}
			}
			return err
		}
		select {
		case <-ctx.Done():
			if n > 1 {
				err = &triedError{err: err, tries: n}
			}
			return err
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// triedError is the last failure of a request tried several times.
type triedError struct {
	err   error
	tries int
}

func (e *triedError) Error() string { return fmt.Sprintf("%v (%d attempts)", e.err, e.tries) }
func (e *triedError) Unwrap() error { return e.err }

// MaxDocumentSize is the largest document JSON and Document accept.
func (c *Client) MaxDocumentSize() int64 {
	if c.MaxDocument > 0 {
		return c.MaxDocument
	}
	return DefaultMaxDocument
}

// HostKey is the comparison form of a URL's host: lowercase, without the
// default port.
func HostKey(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || (port == "443" && u.Scheme == "https") || (port == "80" && u.Scheme == "http") {
		return host
	}
	return host + ":" + port
}

// httpClient returns a client for one request. The token rides on the
// request only while every hop stays on auth.Host over https; the standard
// library would keep it for subdomains too.
func (c *Client) httpClient(auth *Auth) *http.Client {
	var rt http.RoundTripper
	if c.HTTP != nil {
		rt = c.HTTP.Transport
	}
	max := c.maxRedirects()
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > max {
				return &RedirectError{URL: via[0].URL.String(), Max: max}
			}
			if auth != nil {
				for _, r := range append(via, req) {
					if !auth.allows(r.URL) {
						req.Header.Del("Authorization")
						break
					}
				}
			}
			return nil
		},
	}
}

func (a *Auth) allows(u *url.URL) bool {
	return a != nil && a.Token != "" && u.Scheme == "https" && HostKey(u) == a.Host
}

// RedirectError is returned when a request is redirected more than the
// allowed number of times.
type RedirectError struct {
	URL string
	Max int
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("GET %s: more than %d redirects (a redirect loop?)", e.URL, e.Max)
}

// StatusError is an answer with a status other than 200. It wraps
// backends.ErrNotFound for 404 and backends.ErrUnauthorized for 401 and 403,
// and reports 5xx, 408 and 429 as transient.
type StatusError struct {
	URL    string
	Status int
	Body   string // a short excerpt, for the message
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

func (e *StatusError) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return backends.ErrNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return backends.ErrUnauthorized
	}
	return nil
}

// Transient reports whether the request is worth retrying.
func (e *StatusError) Transient() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout
}

// ContentTypeError is a JSON document served with another media type.
type ContentTypeError struct {
	URL         string
	ContentType string
}

func (e *ContentTypeError) Error() string {
	ct := e.ContentType
	if ct == "" {
		ct = "no Content-Type"
	}
	return fmt.Sprintf("GET %s: served as %q, want application/json", e.URL, ct)
}

// transient marks network-level failures as worth retrying.
type transient struct{ err error }

func (t transient) Error() string   { return t.err.Error() }
func (t transient) Unwrap() error   { return t.err }
func (t transient) Transient() bool { return true }

// do sends a GET and returns the response, its status checked. The caller
// closes the body.
func (c *Client) do(ctx context.Context, u *url.URL, auth *Auth, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "tfmirror"
	}
	req.Header.Set("User-Agent", ua)
	if auth.allows(u) {
		req.Header.Set("Authorization", "Bearer "+auth.Token)
	}
	resp, err := c.httpClient(auth).Do(req)
	if err != nil {
		var re *RedirectError
		if errors.As(err, &re) {
			return nil, re
		}
		if ctx.Err() != nil {
			if errors.Is(context.Cause(ctx), errTimeout) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, transient{fmt.Errorf("GET %s: no answer within %s", u.Redacted(), c.timeout())}
			}
			return nil, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, transient{fmt.Errorf("GET %s: %w", u.Redacted(), err)}
	}
	if resp.StatusCode != http.StatusOK {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		resp.Body.Close()
		return nil, &StatusError{URL: resp.Request.URL.Redacted(), Status: resp.StatusCode, Body: cleanExcerpt(excerpt)}
	}
	return resp, nil
}

var errTimeout = errors.New("timeout")

func cleanExcerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// JSON fetches a JSON document into v and returns the final URL after
// redirects, against which relative URLs in the document resolve.
func (c *Client) JSON(ctx context.Context, u *url.URL, auth *Auth, v any) (*url.URL, error) {
	var final *url.URL
	err := c.retry(ctx, func() (err error) {
		final, err = c.json(ctx, u, auth, v)
		return err
	})
	return final, err
}

func (c *Client) json(ctx context.Context, u *url.URL, auth *Auth, v any) (*url.URL, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout(), errTimeout)
	defer cancel()
	resp, err := c.do(ctx, u, auth, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	ct := resp.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return nil, &ContentTypeError{URL: final.Redacted(), ContentType: ct}
	}
	body, err := c.readAll(ctx, final, resp.Body)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("GET %s: not a valid document: %v", final.Redacted(), err)
	}
	return final, nil
}

// Document fetches a small document of any type (SHA256SUMS, a signature).
func (c *Client) Document(ctx context.Context, u *url.URL, auth *Auth) ([]byte, *url.URL, error) {
	var body []byte
	var final *url.URL
	err := c.retry(ctx, func() (err error) {
		body, final, err = c.document(ctx, u, auth)
		return err
	})
	return body, final, err
}

func (c *Client) document(ctx context.Context, u *url.URL, auth *Auth) ([]byte, *url.URL, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout(), errTimeout)
	defer cancel()
	resp, err := c.do(ctx, u, auth, "")
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := c.readAll(ctx, resp.Request.URL, resp.Body)
	return body, resp.Request.URL, err
}

func (c *Client) readAll(ctx context.Context, u *url.URL, r io.Reader) ([]byte, error) {
	max := c.MaxDocumentSize()
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), errTimeout):
		return nil, transient{fmt.Errorf("GET %s: body not complete within %s", u.Redacted(), c.timeout())}
	case err != nil:
		return nil, transient{fmt.Errorf("GET %s: reading body: %w", u.Redacted(), err)}
	case int64(len(body)) > max:
		return nil, fmt.Errorf("GET %s: document larger than %d bytes; refusing it", u.Redacted(), max)
	}
	return body, nil
}

// Download is an archive being downloaded.
type Download struct {
	io.ReadCloser
	// Size is the Content-Length, or -1.
	Size int64
	// URL is the final URL after redirects.
	URL *url.URL
}

// Open starts downloading u, without credentials. The deadline applies to the
// wait for the response and then to each wait for more bytes, so a large
// archive on a slow link is fine and a stalled one is not.
func (c *Client) Open(ctx context.Context, u *url.URL) (*Download, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	d := c.timeout()
	timer := time.AfterFunc(d, func() { cancel(errTimeout) })
	resp, err := c.do(ctx, u, nil, "")
	if err != nil {
		timer.Stop()
		cancel(nil)
		if errors.Is(context.Cause(ctx), errTimeout) {
			return nil, transient{fmt.Errorf("GET %s: no answer within %s", u.Redacted(), d)}
		}
		return nil, err
	}
	timer.Reset(d)
	body := &stallReader{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, d: d, url: resp.Request.URL, size: resp.ContentLength}
	return &Download{ReadCloser: body, Size: resp.ContentLength, URL: resp.Request.URL}, nil
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
			return n, transient{fmt.Errorf("GET %s: no data for %s", s.url.Redacted(), s.d)}
		}
		if s.ctx.Err() == nil {
			// Say how far it got: "unexpected EOF" alone reads like a
			// bug rather than a dropped connection.
			of := ""
			if s.size >= 0 {
				of = fmt.Sprintf(" of %d", s.size)
			}
			err = transient{fmt.Errorf("GET %s: the connection broke after %d%s bytes: %w", s.url.Redacted(), s.n, of, err)}
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
