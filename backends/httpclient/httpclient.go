package httpclient

import (
	"context"
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

// Defaults for Client's zero fields: one set for every network place.
const (
	// DefaultTimeout bounds a document request from start to the last
	// byte, and an archive download's wait for its next bytes. It is three
	// times the clients' own registry timeout (10 s), so a server they can
	// use answers well within it.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRedirects is how many redirects a request follows: what the
	// clients follow (Go's default, which OpenTofu and Terraform keep), so
	// whatever they install through, tfmirror can read through.
	DefaultMaxRedirects = 10
	// DefaultMaxDocument bounds a document (JSON, SHA256SUMS, a signature,
	// an X-Terraform-Get page). Real ones are a few KiB; the largest, a
	// registry's versions list for a provider with hundreds of releases,
	// stays well under 1 MiB. Eight documents in flight stay within 32 MiB.
	DefaultMaxDocument int64 = 4 << 20
	// DefaultRetries is how many more times a document request is tried
	// after a transient failure (5xx, 429, a timeout, a reset connection),
	// as the clients' own HTTP clients retry; a brief outage of a mirror
	// should not end a sync at its planning stage.
	DefaultRetries = 2
	// DefaultRetryBackoff is the wait before the first retry; it doubles
	// for each one after (backends.DefaultRetry).
	DefaultRetryBackoff = 250 * time.Millisecond
)

// Client makes GET requests. The zero value is usable; its fields are the
// options every network place shares (New fills HTTP from a CA file).
type Client struct {
	// HTTP supplies the transport (TLS trust, proxies). Its CheckRedirect,
	// Timeout and Jar are not used. Nil means http.DefaultTransport, which
	// trusts the system pool (SSL_CERT_FILE, SSL_CERT_DIR).
	HTTP         *http.Client
	Timeout      time.Duration
	MaxRedirects int
	MaxDocument  int64
	UserAgent    string
	// Retries bounds the extra tries of a request (Get, JSON, Document,
	// and Open until the response's headers) after a transient failure: 0
	// means DefaultRetries, negative none. A download cut off mid-body is
	// not retried here: the sync engine retries the whole job.
	Retries int
	// RetryBackoff is the first wait between tries; 0 means
	// DefaultRetryBackoff.
	RetryBackoff time.Duration
	// Debug, when set, gets one line per request attempt (see Wrap).
	Debug io.Writer
}

// Auth is a bearer token and the one host (comparison form: lowercase, with
// the port unless it is the scheme's default) it may be sent to, over https.
type Auth struct {
	Host  string
	Token string
}

// AuthFor returns the token creds hold for host (comparison form) as an
// Auth, or nil when there is none.
func AuthFor(creds backends.Credentials, host string) *Auth {
	if creds == nil {
		return nil
	}
	tok, ok := creds.Token(host)
	if !ok || tok == "" {
		return nil
	}
	return &Auth{Host: host, Token: tok}
}

// Allows reports whether the token may be sent to u: https, and u's host
// and port are the token's.
func (a *Auth) Allows(u *url.URL) bool {
	return a != nil && a.Token != "" && u.Scheme == "https" && HostKey(u) == a.Host
}

// HostKey is the comparison form of a URL's host: lowercase, without the
// scheme's default port.
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

// MaxDocumentSize is the largest document Get, JSON and Document accept.
func (c *Client) MaxDocumentSize() int64 {
	if c.MaxDocument > 0 {
		return c.MaxDocument
	}
	return DefaultMaxDocument
}

// Retry is the policy of c's requests: Retries and RetryBackoff over
// backends.DefaultRetry.
func (c *Client) Retry() backends.RetryPolicy {
	p := backends.DefaultRetry
	p.Attempts = c.tries()
	if c.RetryBackoff > 0 {
		p.Base = c.RetryBackoff
		p.Max = max(p.Max, c.RetryBackoff)
	}
	return p
}

// retry runs one request until it succeeds, fails permanently, or has
// been tried as c.Retry allows (backends.RetryPolicy.Do). Its last failure
// after several tries says how many ("(3 attempts)"), and is not tried
// again by the sync engine around it.
func (c *Client) retry(ctx context.Context, do func(ctx context.Context) error) error {
	return c.Retry().Do(ctx, do)
}

// httpClient returns a client for one request, with the redirect policy
// (see checkRedirect), auth's token rule, and the transport wrapped (see
// Wrap).
func (c *Client) httpClient(auth *Auth) *http.Client {
	var rt http.RoundTripper
	if c.HTTP != nil {
		rt = c.HTTP.Transport
	}
	max := c.maxRedirects()
	return &http.Client{
		Transport: Wrap(rt, c.Debug),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return checkRedirect(req, via, max, auth)
		},
	}
}

// StatusError is an answer with a status other than 2xx. It wraps
// backends.ErrNotFound for 404 and 410 and backends.ErrUnauthorized for 401
// and 403, and reports 5xx, 408 and 429 as transient.
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
	case http.StatusNotFound, http.StatusGone:
		return backends.ErrNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return backends.ErrUnauthorized
	}
	return nil
}

// Transient reports whether the request is worth retrying.
func (e *StatusError) Transient() bool { return backends.TransientStatus(e.Status) }

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

// timeoutError is a request that ran out of time: a net.Error whose
// Timeout holds, so a server passing the failure on can say so (504).
type timeoutError struct{ error }

func (t timeoutError) Unwrap() error   { return t.error }
func (t timeoutError) Timeout() bool   { return true }
func (t timeoutError) Temporary() bool { return true }

// transient marks network-level failures as worth retrying.
type transient struct{ err error }

func (t transient) Error() string   { return t.err.Error() }
func (t transient) Unwrap() error   { return t.err }
func (t transient) Transient() bool { return true }

// do sends a GET with headers and returns the response, its status
// checked. The caller closes the body.
func (c *Client) do(ctx context.Context, u *url.URL, auth *Auth, headers map[string]string) (*http.Response, error) {
	return c.doWith(ctx, c.httpClient(auth), u, auth, headers)
}

// doWith is do through hc.
func (c *Client) doWith(ctx context.Context, hc *http.Client, u *url.URL, auth *Auth, headers map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", RedactURL(u), err)
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "tfmirror"
	}
	req.Header.Set("User-Agent", ua)
	if auth.Allows(u) {
		req.Header.Set("Authorization", "Bearer "+auth.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		var re *RedirectError
		if errors.As(err, &re) {
			return nil, re
		}
		if ctx.Err() != nil {
			if errors.Is(context.Cause(ctx), errTimeout) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, transient{timeoutError{fmt.Errorf("GET %s: no answer within %s", RedactURL(u), c.timeout())}}
			}
			return nil, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, transient{fmt.Errorf("GET %s: %w", RedactURL(u), err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		_ = resp.Body.Close() // an error answer, read for its excerpt
		return nil, &StatusError{URL: RedactURL(resp.Request.URL), Status: resp.StatusCode, Body: cleanExcerpt(excerpt)}
	}
	return resp, nil
}

var errTimeout = errors.New("timeout")

func cleanExcerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return backends.Printable(strings.ToValidUTF8(s, "?"))
}

// Response is a document read whole.
type Response struct {
	// URL is the final URL after redirects, against which relative URLs in
	// the document resolve.
	URL    *url.URL
	Status int
	Header http.Header
	Body   []byte
}

// Get fetches a document (any 2xx status) up to MaxDocumentSize, trying
// again after transient failures. accept is the Accept header ("" for
// none).
func (c *Client) Get(ctx context.Context, u *url.URL, auth *Auth, accept string) (*Response, error) {
	var r *Response
	err := c.retry(ctx, func(ctx context.Context) (err error) {
		r, err = c.get(ctx, u, auth, accept)
		return err
	})
	return r, err
}

func (c *Client) get(ctx context.Context, u *url.URL, auth *Auth, accept string) (*Response, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout(), errTimeout)
	defer cancel()
	resp, err := c.do(ctx, u, auth, map[string]string{"Accept": accept})
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read only
	body, err := c.readAll(ctx, resp.Request.URL, resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{URL: resp.Request.URL, Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// JSON fetches a JSON document served as application/json into v and
// returns the final URL after redirects, against which relative URLs in the
// document resolve.
func (c *Client) JSON(ctx context.Context, u *url.URL, auth *Auth, v any) (*url.URL, error) {
	var final *url.URL
	err := c.retry(ctx, func(ctx context.Context) error {
		r, err := c.get(ctx, u, auth, "application/json")
		if err != nil {
			return err
		}
		final = r.URL
		ct := r.Header.Get("Content-Type")
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &ContentTypeError{URL: RedactURL(final), ContentType: ct}
		}
		if err := json.Unmarshal(r.Body, v); err != nil {
			return fmt.Errorf("GET %s: not a valid document: %v", RedactURL(final), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return final, nil
}

// Document fetches a small document of any type (SHA256SUMS, a signature).
func (c *Client) Document(ctx context.Context, u *url.URL, auth *Auth) ([]byte, *url.URL, error) {
	r, err := c.Get(ctx, u, auth, "")
	if err != nil {
		return nil, nil, err
	}
	return r.Body, r.URL, nil
}

func (c *Client) readAll(ctx context.Context, u *url.URL, r io.Reader) ([]byte, error) {
	max := c.MaxDocumentSize()
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), errTimeout):
		return nil, transient{timeoutError{fmt.Errorf("GET %s: body not complete within %s", RedactURL(u), c.timeout())}}
	case err != nil:
		return nil, transient{fmt.Errorf("GET %s: reading body: %w", RedactURL(u), err)}
	case int64(len(body)) > max:
		return nil, fmt.Errorf("GET %s: document larger than %d bytes; refusing it", RedactURL(u), max)
	}
	return body, nil
}
