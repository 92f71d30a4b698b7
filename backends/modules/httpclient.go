package modules

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

// MaxRedirects bounds the HTTP redirects one request follows (go-getter and
// OpenTofu's own clients stop at 10 as well).
const MaxRedirects = 10

// ErrRedirectLoop is matched when a server redirects back to a URL already
// visited.
var ErrRedirectLoop = errors.New("redirect loop")

// RedirectError is a redirect CheckRedirect refused: a loop, too many hops,
// or a downgrade from https. It is permanent: retrying meets it again.
type RedirectError struct {
	msg  string
	loop bool
}

func (e *RedirectError) Error() string { return e.msg }

// Is makes a loop match ErrRedirectLoop.
func (e *RedirectError) Is(target error) bool { return e.loop && target == ErrRedirectLoop }

// CheckRedirect is an http.Client redirect policy: at most MaxRedirects
// hops, no https-to-http downgrade, and a clear error for a loop instead of
// going round until the count runs out.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	for _, prev := range via {
		if prev.URL.String() == req.URL.String() {
			return &RedirectError{loop: true, msg: fmt.Sprintf("redirect loop: %s redirects back to %s", via[len(via)-1].URL.Redacted(), req.URL.Redacted())}
		}
	}
	if len(via) >= MaxRedirects {
		return &RedirectError{msg: fmt.Sprintf("%s: more than %d redirects", via[0].URL.Redacted(), MaxRedirects)}
	}
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return &RedirectError{msg: fmt.Sprintf("%s redirects to %s: refusing to leave https", via[len(via)-1].URL.Redacted(), req.URL.Redacted())}
	}
	return nil
}

// NetErr classifies an error from http.Client.Do: cancellation as itself,
// refused redirects as permanent, anything else (resets, timeouts, refused
// connections) as transient.
func NetErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var re *RedirectError
	if errors.As(err, &re) {
		return err
	}
	return backends.Transient(err)
}

// NewHTTPClient returns a client with CheckRedirect that trusts roots (nil:
// the system's roots, which honour SSL_CERT_FILE and SSL_CERT_DIR).
func NewHTTPClient(roots *x509.CertPool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	t.ResponseHeaderTimeout = 2 * time.Minute
	return &http.Client{Transport: t, CheckRedirect: CheckRedirect}
}

// WithRedirectPolicy returns c (nil: a new client) with CheckRedirect as its
// policy, without changing the caller's client.
func WithRedirectPolicy(c *http.Client) *http.Client {
	if c == nil {
		return NewHTTPClient(nil)
	}
	cp := *c
	cp.CheckRedirect = CheckRedirect
	return &cp
}

// StatusErr turns an unexpected HTTP response into an error that wraps the
// sentinel for its class: backends.ErrNotFound for 404 and 410,
// backends.ErrUnauthorized for 401 and 403 (with hint, which says what to
// set), and a backends.StatusError (transient for 5xx) otherwise. It reads
// a short excerpt of the body for the message.
func StatusErr(resp *http.Response, hint string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	body := strings.TrimSpace(string(b))
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	u := resp.Request.URL.Redacted()
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusGone:
		return fmt.Errorf("GET %s: HTTP %d: %w", u, resp.StatusCode, backends.ErrNotFound)
	case http.StatusUnauthorized, http.StatusForbidden:
		msg := fmt.Sprintf("GET %s: HTTP %d", u, resp.StatusCode)
		if hint != "" {
			msg += " (" + hint + ")"
		}
		return fmt.Errorf("%s: %w", msg, backends.ErrUnauthorized)
	}
	return &backends.StatusError{URL: u, Status: resp.StatusCode, Body: body}
}
