package httpclient

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrRedirectLoop is matched when a server redirects back to a URL already
// visited.
var ErrRedirectLoop = errors.New("redirect loop")

// RedirectError is a redirect the policy refused: a loop, too many hops, or
// a step down from https to plain http. It is permanent: retrying meets it
// again.
type RedirectError struct {
	// URL is the URL first asked for (redacted).
	URL  string
	msg  string
	loop bool
}

func (e *RedirectError) Error() string { return e.msg }

// Is makes a loop match ErrRedirectLoop.
func (e *RedirectError) Is(target error) bool { return e.loop && target == ErrRedirectLoop }

// checkRedirect is the one redirect policy: at most max redirects, a clear
// error for a loop instead of going round until the count runs out, never
// from https down to plain http (whatever arrives that way, a document or
// an archive, could have been changed on the way: the trust https gave is
// gone), and auth's token only on hops it allows, dropped for good once one
// hop left its host, port or https. The standard library alone would keep
// the token for another port of the same host, for subdomains, and over
// http.
func checkRedirect(req *http.Request, via []*http.Request, max int, auth *Auth) error {
	first, last := RedactURL(via[0].URL), RedactURL(via[len(via)-1].URL)
	for _, prev := range via {
		if prev.URL.String() == req.URL.String() {
			return &RedirectError{URL: first, loop: true, msg: fmt.Sprintf("GET %s: redirect loop: %s redirects back to %s", first, last, RedactURL(req.URL))}
		}
	}
	if len(via) > max {
		return &RedirectError{URL: first, msg: fmt.Sprintf("GET %s: more than %d redirects", first, max)}
	}
	if req.URL.Scheme != "https" {
		for _, prev := range via {
			if prev.URL.Scheme == "https" {
				return &RedirectError{URL: first, msg: fmt.Sprintf("GET %s: %s redirects to %s: refusing to leave https for plain http", first, last, RedactURL(req.URL))}
			}
		}
	}
	if auth != nil {
		for _, r := range append(via, req) {
			if !auth.Allows(r.URL) {
				req.Header.Del("Authorization")
				break
			}
		}
	}
	return nil
}
