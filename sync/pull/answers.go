package pull

import (
	"context"
	"errors"
	"fmt"
	"net"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/hashing"
)

// UpstreamError is the upstream failing what the mirror asked of it. Its
// message is the failure's, for the server's log; a client is answered
// HTTPStatus with PublicMessage, which names no local path and no secret.
type UpstreamError struct {
	// Upstream names the upstream to clients: an origin's hostname, or
	// "the upstream".
	Upstream string
	Err      error
}

func (e *UpstreamError) Error() string { return e.Err.Error() }
func (e *UpstreamError) Unwrap() error { return e.Err }

// timedOut reports whether err is a request that ran out of time.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

// HTTPStatus is 504 when the upstream did not answer in time, 502 for
// any other failure.
func (e *UpstreamError) HTTPStatus() int {
	if timedOut(e.Err) {
		return 504
	}
	return 502
}

// PublicMessage is the answer's body: what happened and what to do.
func (e *UpstreamError) PublicMessage() string {
	var refused *httpclient.RefusedAddressError
	switch {
	case errors.As(e.Err, &refused):
		return fmt.Sprintf("502 upstream refused: this mirror does not connect to %s: it is not a public address and not a host the mirror's operator allows (serve --allow-host)", backends.Printable(refused.Host))
	case timedOut(e.Err):
		return fmt.Sprintf("504 upstream timed out: %s did not answer in time; try again later (the mirror's log has the details)", e.Upstream)
	case errors.Is(e.Err, hashing.ErrHashMismatch):
		return fmt.Sprintf("502 upstream archive refused: what %s sent does not match its hashes, so it was not served; the mirror tries again later", e.Upstream)
	}
	return fmt.Sprintf("502 upstream failed: %s could not be reached or answered with an error; try again later (the mirror's log has the details)", e.Upstream)
}

// upstreamErr wraps err, the upstream's failure for p, as an
// *UpstreamError (not a not-found: that is an answer).
func (m *Mirror) upstreamErr(p backends.Provider, err error) error {
	var ue *UpstreamError
	if err == nil || errors.Is(err, backends.ErrNotFound) || errors.Is(err, context.Canceled) || errors.As(err, &ue) {
		return err
	}
	name := "the upstream"
	if m.opts.Origin {
		name = "the origin registry " + backends.Printable(p.Hostname)
	}
	return &UpstreamError{Upstream: name, Err: err}
}

// DefaultRefusedTTL is how long an archive the mirror refused (it did not
// match its hashes) is answered from memory before it is fetched again.
const DefaultRefusedTTL = 5 * time.Minute

// refusal is an archive fetched and refused, and when.
type refusal struct {
	at  time.Time
	err error
}

// refusedRecently returns the refusal of key younger than the TTL, if any.
func (m *Mirror) refusedRecently(key backends.PackageKey) error {
	ttl := m.opts.RefusedTTL
	if ttl <= 0 {
		ttl = DefaultRefusedTTL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.refused[key]
	if !ok {
		return nil
	}
	if time.Since(r.at) >= ttl {
		delete(m.refused, key)
		return nil
	}
	m.opts.Metrics.refusedHit()
	return r.err
}

// refuse remembers a fetch of key that failed: the archive did not match
// its hashes (another fetch would only fetch it again, at a client's will).
func (m *Mirror) refuse(key backends.PackageKey, err error) {
	if !errors.Is(err, hashing.ErrHashMismatch) {
		return
	}
	m.mu.Lock()
	m.refused[key] = refusal{at: time.Now(), err: err}
	m.mu.Unlock()
}

// health is what /healthz says of the upstream and the fetches.
type health struct {
	mu               gosync.Mutex
	lastOK, lastFail time.Time
	landed, failed   int
}

func (h *health) upstream(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.lastOK = time.Now()
	} else if !errors.Is(err, context.Canceled) {
		h.lastFail = time.Now()
	}
}

func (h *health) fetched(landed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if landed {
		h.landed++
		h.lastOK = time.Now()
	} else {
		h.failed++
	}
}

// Health is the mirror's state as /healthz reports it.
type Health struct {
	// Upstream is "offline", "unknown" (not asked yet), "ok" or "failing"
	// (its last answer was a failure).
	Upstream string `json:"upstream"`
	// LastOK and LastFailure are when the upstream last answered, and
	// last failed (absent when never).
	LastOK      *time.Time `json:"upstream_last_ok,omitempty"`
	LastFailure *time.Time `json:"upstream_last_failure,omitempty"`
	// Fetches are the archives fetched and landed since the start,
	// FetchFailures those that failed, Fetching those under way.
	Fetches       int `json:"fetches"`
	FetchFailures int `json:"fetch_failures"`
	Fetching      int `json:"fetching"`
	// Refused are the archives answered from memory as refused.
	Refused int `json:"refused_archives"`
}

// Health reports the upstream's state and the fetches' counts.
func (m *Mirror) Health() Health {
	// The flights first: a fetch is counted before its flight ends, so a
	// fetch no longer running is always among the counts read after.
	m.mu.Lock()
	fetching, refused := len(m.flights), len(m.refused)
	m.mu.Unlock()
	m.health.mu.Lock()
	h := Health{Fetches: m.health.landed, FetchFailures: m.health.failed, Upstream: "unknown"}
	ok, fail := m.health.lastOK, m.health.lastFail
	m.health.mu.Unlock()
	switch {
	case m.Offline():
		h.Upstream = "offline"
	case !fail.IsZero() && fail.After(ok):
		h.Upstream = "failing"
	case !ok.IsZero():
		h.Upstream = "ok"
	}
	if !ok.IsZero() {
		h.LastOK = &ok
	}
	if !fail.IsZero() {
		h.LastFailure = &fail
	}
	h.Fetching, h.Refused = fetching, refused
	return h
}
