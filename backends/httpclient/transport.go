package httpclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

// CertHint is what to do about a TLS certificate that is not trusted, the
// same for every kind of place.
const CertHint = "trust the CA that issued it with --ca-cert FILE (tfmirror) and SSL_CERT_FILE (Terraform, OpenTofu)"

// CertError is a TLS certificate the client did not accept. Its message
// names the host and says what to do; backends.IsTransient takes it for
// permanent, since the server presents the same certificate on every try.
type CertError struct {
	// Host is the host (and port) the request was for.
	Host string
	// Err is the verification error (x509's, within crypto/tls's).
	Err error
}

func (e *CertError) Error() string {
	reason := e.Err.Error()
	var verify *tls.CertificateVerificationError
	if errors.As(e.Err, &verify) && verify.Err != nil {
		reason = verify.Err.Error()
	}
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(e.Err, &hostname):
		return fmt.Sprintf("the TLS certificate of %s does not name it (%s): reach the server by a name its certificate holds, or have it serve one issued for %s (trusting another CA does not help)", e.Host, reason, hostname.Host)
	case errors.As(e.Err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf("the TLS certificate of %s has expired or is not valid yet (%s): the server needs a current certificate, or this machine's clock is wrong", e.Host, reason)
	}
	return fmt.Sprintf("the TLS certificate of %s is not trusted (%s): %s", e.Host, reason, CertHint)
}

func (e *CertError) Unwrap() error { return e.Err }

// Wrap returns the one wrapper every network client's transport goes
// through (network mirrors, registries, module sources, OCI registries,
// under oras's retries): a TLS certificate that is not accepted becomes a
// *CertError, and with debug set each request attempt is written to it as
// one line (see logf). Lines are written with one Write each; a
// writer shared by goroutines must take concurrent writes (os.Stderr
// does). rt nil means http.DefaultTransport.
func Wrap(rt http.RoundTripper, debug io.Writer) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &transport{base: rt, debug: debug}
}

type transport struct {
	base  http.RoundTripper
	debug io.Writer
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	ctx := req.Context()
	attempt := attemptOf(ctx)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		if backends.IsCertificateError(err) {
			err = &CertError{Host: req.URL.Host, Err: err}
		}
		if t.debug != nil {
			t.logf(req, attempt, "-> error after %s: %v", elapsed(start), err)
		}
		return resp, err
	}
	if t.debug == nil {
		return resp, nil
	}
	status := fmt.Sprint(resp.StatusCode)
	if loc, err := resp.Location(); err == nil && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		status += " to " + RedactURL(loc)
	}
	if resp.Body == nil || resp.Body == http.NoBody || req.Method == http.MethodHead {
		t.logf(req, attempt, "-> %s, 0 B, %s", status, elapsed(start))
		return resp, nil
	}
	lb := &loggedBody{rc: resp.Body, t: t, req: req, attempt: attempt, status: status, start: start, size: resp.ContentLength}
	if streaming(ctx) && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		lb.streaming = true
		t.logf(req, attempt, "-> %s, headers after %s, %s to come", status, elapsed(start), sizeOrUnknown(resp.ContentLength))
	}
	resp.Body = lb
	return resp, nil
}

// logf writes one debug line: "debug: METHOD URL <what> (attempt N)", the
// URL without credentials (see RedactURL). Headers are never written.
func (t *transport) logf(req *http.Request, attempt int, format string, args ...any) {
	sent := ""
	if req.ContentLength > 0 {
		sent = " (" + formatBytes(req.ContentLength) + " sent)"
	}
	line := fmt.Sprintf("debug: %s %s%s %s (attempt %d)\n", req.Method, RedactURL(req.URL), sent, fmt.Sprintf(format, args...), attempt)
	_, _ = io.WriteString(t.debug, line) // the --debug trace, as fmt.Fprint to stderr
}

// loggedBody writes the request's line when its body is done: at its end,
// on an error, or when it is closed before either.
type loggedBody struct {
	rc        io.ReadCloser
	t         *transport
	req       *http.Request
	attempt   int
	status    string
	start     time.Time
	size      int64 // Content-Length, or -1
	streaming bool
	n         atomic.Int64
	once      sync.Once
}

func (b *loggedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	if err != nil {
		b.done(err)
	}
	return n, err
}

func (b *loggedBody) Close() error {
	b.done(nil)
	return b.rc.Close()
}

// done writes the line once; err is how reading ended (io.EOF: complete),
// nil when the body was closed.
func (b *loggedBody) done(err error) {
	b.once.Do(func() {
		n := b.n.Load()
		got := formatBytes(n)
		complete := err == io.EOF || (err == nil && b.size >= 0 && n == b.size)
		if !complete {
			// Cut short: say how far it got, and why.
			if b.size >= 0 {
				got += " of " + formatBytes(b.size)
			}
			how, why := "closed", ""
			if err != nil {
				how, why = "failed", ": "+err.Error()
			}
			b.t.logf(b.req, b.attempt, "-> %s, body %s after %s, %s%s", b.status, how, got, elapsed(b.start), why)
			return
		}
		if b.streaming {
			b.t.logf(b.req, b.attempt, "-> %s, body done, %s in %s", b.status, got, elapsed(b.start))
			return
		}
		b.t.logf(b.req, b.attempt, "-> %s, %s, %s", b.status, got, elapsed(b.start))
	})
}

type streamKey struct{}

// Streaming marks requests made with ctx as archive downloads: their debug
// log has a line when the headers arrive, and another when the body is
// done.
func Streaming(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamKey{}, true)
}

func streaming(ctx context.Context) bool {
	s, _ := ctx.Value(streamKey{}).(bool)
	return s
}

type triesKey struct{}

// tries counts the tries of one request a retrying transport below
// CountAttempts makes.
type tries struct {
	base int
	n    atomic.Int32
}

// CountAttempts wraps a transport that retries on its own (oras's
// retry.Transport, which sends the same request again) so that the debug
// log below it numbers each try. attempts is how many tries its policy
// allows, and transient (nil: never) tells a failure worth another try:
// when the last allowed try still failed so, the retry loop around the
// request (a sync job's) is told it gave up (backends.GaveUp), and does not
// multiply the tries.
func CountAttempts(rt http.RoundTripper, attempts int, transient func(*http.Response, error) bool) http.RoundTripper {
	return countAttempts{rt, attempts, transient}
}

type countAttempts struct {
	base      http.RoundTripper
	attempts  int
	transient func(*http.Response, error) bool
}

func (c countAttempts) RoundTrip(req *http.Request) (*http.Response, error) {
	t := &tries{base: backends.Attempt(req.Context())}
	resp, err := c.base.RoundTrip(req.WithContext(context.WithValue(req.Context(), triesKey{}, t)))
	if c.attempts > 1 && int(t.n.Load()) >= c.attempts && c.transient != nil && c.transient(resp, err) {
		backends.GaveUp(req.Context())
	}
	return resp, err
}

// attemptOf numbers a request's try: the attempt of the work it is for
// (backends.WithAttempt: a sync job, a document request tried again), plus
// the tries a retrying transport made of it.
func attemptOf(ctx context.Context) int {
	if t, ok := ctx.Value(triesKey{}).(*tries); ok {
		return t.base + int(t.n.Add(1)) - 1
	}
	return backends.Attempt(ctx)
}

// RedactURL is u as the debug log writes it: without user information,
// and with the values of query parameters that carry credentials
// (X-Amz-Signature, X-Amz-Credential, token=, sig=, key=, ...) replaced by
// REDACTED.
func RedactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User("REDACTED")
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			k, _, ok := strings.Cut(p, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				key = k
			}
			if ok && secretParam(key) {
				parts[i] = k + "=REDACTED"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// secretWords are parts of query parameter names whose values are
// credentials: presigned URLs' signatures, credentials and session tokens
// (S3, GCS, Azure SAS sig=, CloudFront Signature and Policy), and the
// token= and key= of simple download services.
var secretWords = []string{"sig", "token", "credential", "secret", "password", "passwd", "auth", "key", "session", "policy"}

func secretParam(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func elapsed(start time.Time) string {
	d := time.Since(start)
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func sizeOrUnknown(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return formatBytes(n)
}

// formatBytes writes n in decimal units: 512 B, 1.2 kB, 5.3 MB.
func formatBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, unit := range []string{"kB", "MB", "GB"} {
		f /= 1000
		if f < 1000 || unit == "GB" {
			return fmt.Sprintf("%.1f %s", f, unit)
		}
	}
	return ""
}
