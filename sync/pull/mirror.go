package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/backends/ttlcache"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/audit"
)

// Source opens the upstream place that offers provider p: one place for
// every provider, or each provider's own origin registry. The mirror calls
// it once per hostname and keeps the reader; when a listing of it expires,
// a reader that remembers its listings (backends.Refresher: a registry) is
// refreshed, not opened anew.
type Source func(ctx context.Context, p backends.Provider) (backends.Reader, error)

// DefaultTTL is how long an upstream listing is reused unless
// Options.TTL says otherwise.
const DefaultTTL = 5 * time.Minute

// Options configure a Mirror.
type Options struct {
	// Cache is where fetched archives land, and what is served first.
	Cache backends.Writer
	// Upstream is where archives CACHE lacks come from; nil serves CACHE
	// alone (offline).
	Upstream Source
	// UpstreamName names the upstream in messages ("origin", a place).
	UpstreamName string
	// Policy says what may be pulled through; nil allows everything.
	Policy *Policy
	// Trust is the signature policy every fetched version must pass, as
	// sync applies it (sync.CheckProvenance).
	Trust   *trust.Policy
	Hashing hashing.Options
	// TTL is how long an upstream listing is reused; zero means DefaultTTL.
	TTL time.Duration
	// Logger gets the mirror's troubles and fetches; nil discards them.
	Logger *log.Logger
	// Audit, when set, records each landing and refusal.
	Audit *audit.Log
	// Metrics, when set, counts hits, misses, fetches and failures.
	Metrics *Metrics
	// Attempts bounds the tries of one fetch; zero means 3.
	Attempts int
	// PrefetchJobs bounds the prefetches of a policy's platforms running
	// at once (see prefetch.go); zero means DefaultPrefetchJobs, negative
	// prefetches nothing.
	PrefetchJobs int
	// Origin: Upstream is each provider's origin registry, named to
	// clients by its hostname.
	Origin bool
	// Reach, when set, says why a provider's hostname may not be asked
	// of the upstream ("" when it may): checked before any request.
	Reach func(host string) string
	// RefusedTTL is how long an archive that did not match its hashes is
	// answered as refused without fetching it again; zero means
	// DefaultRefusedTTL.
	RefusedTTL time.Duration
}

// Mirror is a pull-through mirror, read as a place (see the package
// documentation). Close it once nothing serves it any more.
type Mirror struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     gosync.WaitGroup // running fetches

	mu      gosync.Mutex
	flights map[backends.PackageKey]*flight
	landed  map[backends.PackageKey]bool // by this process, since it started
	cached  map[string]bool              // locations CACHE listed
	// verified are the zh: of CACHE's files this process landed or read
	// whole, by the file's identity (see verified.go).
	verified map[fileID]hashing.Hash
	// upstreams are the upstream readers, by hostname (upstreamOf).
	upstreams map[string]backends.Reader
	// versionsUp and releases are the upstream's listings, by key.
	versionsUp ttlcache.Cache[[]backends.Version]
	releases   ttlcache.Cache[*release]
	// prefetched are the versions whose prefetch started (prefetch.go),
	// and prefetchSlots bounds the prefetches running.
	prefetched    map[string]bool
	prefetchSlots chan struct{}
	queued        int                             // prefetches waiting for a slot
	refused       map[backends.PackageKey]refusal // archives refused lately
	health        health
	fleet         fleet // the fetch leases it holds in CACHE (fleet.go)
}

var _ backends.Reader = (*Mirror)(nil)

// New returns a pull-through mirror. Its fetches run until Close.
func New(opts Options) *Mirror {
	ctx, cancel := context.WithCancel(context.Background())
	ttl := orDefaultTTL(opts.TTL)
	return &Mirror{opts: opts, ctx: ctx, cancel: cancel,
		flights: map[backends.PackageKey]*flight{}, landed: map[backends.PackageKey]bool{},
		cached: map[string]bool{}, verified: map[fileID]hashing.Hash{}, upstreams: map[string]backends.Reader{},
		versionsUp: ttlcache.Cache[[]backends.Version]{TTL: ttl}, releases: ttlcache.Cache[*release]{TTL: ttl},
		refused: map[backends.PackageKey]refusal{}}
}

// orDefaultTTL is ttl, or DefaultTTL for zero.
func orDefaultTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return DefaultTTL
	}
	return ttl
}

// Close stops the fetches still running (nothing of them lands) and waits
// for them to end.
func (m *Mirror) Close() {
	m.cancel()
	m.wg.Wait()
}

// refuses says why p may not be pulled through, or "": its hostname is
// not one the mirror may reach, or the policy refuses it.
func (m *Mirror) refuses(p backends.Provider) string {
	if m.opts.Reach != nil {
		if why := m.opts.Reach(p.Hostname); why != "" {
			return why
		}
	}
	return m.opts.Policy.provider(p)
}

// Flights is how many fetches are running or queued (prefetches waiting
// for their turn).
func (m *Mirror) Flights() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.flights) + m.queued
}

// Offline reports whether the mirror serves CACHE alone.
func (m *Mirror) Offline() bool { return m.opts.Upstream == nil }

func (m *Mirror) String() string { return m.opts.Cache.String() }

func (m *Mirror) logf(format string, args ...any) {
	if m.opts.Logger != nil {
		m.opts.Logger.Printf(format, args...)
	}
}

// Providers lists what CACHE holds: the upstream may have no catalogue.
func (m *Mirror) Providers(ctx context.Context) ([]backends.Provider, error) {
	return m.opts.Cache.Providers(ctx)
}

// Versions lists the versions CACHE holds together with those the upstream
// offers and the policy allows, newest first. When the upstream fails and
// no listing of it is at hand, CACHE's versions are served alone.
func (m *Mirror) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	cached, err := m.opts.Cache.Versions(ctx, p)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, err
	}
	if m.Offline() || m.refuses(p) != "" {
		return cached, nil
	}
	up, err := m.upstreamVersions(ctx, p)
	if err != nil {
		if len(cached) > 0 {
			m.logf("warning: %s: the upstream %s failed (%v); listing what the cache holds", p, m.opts.UpstreamName, err)
			return cached, nil
		}
		return nil, err
	}
	allowed := m.opts.Policy.versions(p, up, m.firstSeen(ctx, p, up))
	return unionVersions(cached, allowed), nil
}

// upstreamVersions lists p's versions upstream, through the listing cache.
func (m *Mirror) upstreamVersions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	return upstream(ctx, m, &m.versionsUp, p, "versions\x00"+p.String(), func(ctx context.Context) ([]backends.Version, error) {
		r, err := m.freshUpstream(ctx, p)
		if err != nil {
			return nil, err
		}
		vs, err := r.Versions(ctx, p)
		if errors.Is(err, backends.ErrNotFound) {
			return []backends.Version(nil), nil // an answer: none
		}
		return vs, err
	})
}

// release is what the upstream offers of one version: the reader that
// listed it (which opens its archives), the archives with the evidence
// the version's checked provenance adds, or why the trust policy refuses
// the version.
type release struct {
	r       backends.Reader
	as      []backends.Archive
	signed  *sync.Signed
	refused error
}

// release lists p at v upstream, through the listing cache, and checks
// the version's provenance as sync does.
func (m *Mirror) release(ctx context.Context, p backends.Provider, v backends.Version) (*release, error) {
	return upstream(ctx, m, &m.releases, p, "archives\x00"+p.String()+"\x00"+v.String(), func(ctx context.Context) (*release, error) {
		r, err := m.freshUpstream(ctx, p)
		if err != nil {
			return nil, err
		}
		as, err := r.Archives(ctx, p, v)
		if errors.Is(err, backends.ErrNotFound) {
			return &release{r: r}, nil
		}
		if err != nil {
			return nil, err
		}
		rel := &release{r: r}
		for _, a := range as {
			if a.Layout == backends.Packed {
				rel.as = append(rel.as, a)
			}
		}
		if rel.signed, rel.refused = sync.CheckProvenance(ctx, r, p, v, m.opts.Trust); rel.refused != nil {
			rel.as = nil
			return rel, nil
		}
		if rel.signed != nil {
			for i := range rel.as {
				if rel.as[i], err = rel.signed.Authenticate(rel.as[i]); err != nil {
					rel.refused = fmt.Errorf("%s: %w", rel.as[i].Package, err)
					rel.as = nil
					break
				}
				rel.as[i].Evidence = signedOnly(rel.as[i].Evidence)
			}
		}
		return rel, nil
	})
}

// signedOnly keeps, of a signed version's evidence, what the signature
// covers, the signed SHA256SUMS' zh:, and what the registry that signs it
// states beside it of the same zip: OpenTofu 1.12's packages field, whose
// zh: is the signed one and whose h1: is the registry's statement of the
// package's. That h1: is listed, so that a lock written from the mirror
// holds every platform's h1: without a download, and recomputed wherever
// the archive is at hand: on its way to the clients, and when it lands.
// Hashes another kind of place states unsigned beside a signature are not
// listed (a sync does not list them either).
func signedOnly(evs []hashing.Evidence) []hashing.Evidence {
	signed := map[hashing.Hash]bool{}
	for _, e := range evs {
		if e.Source.Kind == hashing.SourceRegistrySigned {
			for _, h := range e.Hashes {
				signed[h] = true
			}
		}
	}
	if len(signed) == 0 {
		return evs
	}
	var out []hashing.Evidence
	for _, e := range evs {
		if e.Source.Kind == hashing.SourceRegistrySigned || e.Source.Kind == hashing.SourceRegistry && sameZip(e.Hashes, signed) {
			out = append(out, e)
		}
	}
	return out
}

// sameZip reports whether hs state a zh: and each of them is in signed.
func sameZip(hs []hashing.Hash, signed map[hashing.Hash]bool) bool {
	n := 0
	for _, h := range hs {
		if h.Scheme() == hashing.SchemeZip {
			if !signed[h] {
				return false
			}
			n++
		}
	}
	return n > 0
}

// upstreamOf returns the upstream reader of p's hostname, opened the
// first time and kept (one registry client and transport per host, not one
// per listing).
func (m *Mirror) upstreamOf(ctx context.Context, p backends.Provider) (backends.Reader, error) {
	m.mu.Lock()
	r, ok := m.upstreams[p.Hostname]
	m.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := m.opts.Upstream(ctx, p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if have, ok := m.upstreams[p.Hostname]; ok {
		return have, nil // another request opened it meanwhile
	}
	m.upstreams[p.Hostname] = r
	return r, nil
}

// freshUpstream is upstreamOf for a listing of p that expired: what the
// reader remembers of p is forgotten (backends.Refresher), so the listing
// asks the upstream again.
func (m *Mirror) freshUpstream(ctx context.Context, p backends.Provider) (backends.Reader, error) {
	r, err := m.upstreamOf(ctx, p)
	if rf, ok := r.(backends.Refresher); ok && err == nil {
		rf.Refresh(p)
	}
	return r, err
}

// upstream returns load's answer for key through c, reusing one younger
// than the TTL; concurrent requests share one load, which outlives the
// request that started it. When load fails, the last answer is served,
// however old.
func upstream[V any](ctx context.Context, m *Mirror, c *ttlcache.Cache[V], p backends.Provider, key string, load func(context.Context) (V, error)) (V, error) {
	v, stale, err := c.Get(ctx, key, func(ctx context.Context) (V, error) {
		m.opts.Metrics.upstreamRequest()
		v, err := load(ctx)
		m.health.upstream(err)
		if err != nil {
			m.opts.Metrics.upstreamError()
			return v, m.upstreamErr(p, err)
		}
		return v, nil
	})
	if err != nil && stale > 0 {
		m.logf("warning: the upstream %s failed (%v); serving its listing of %s ago", m.opts.UpstreamName, err, stale.Round(time.Second))
		return v, nil
	}
	return v, err
}

// Archives lists p's zips at v: those CACHE holds, and those the upstream
// offers of the platforms the policy allows. A zip in both is served from
// CACHE, listed with every hash either states of it.
func (m *Mirror) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	cached, err := m.opts.Cache.Archives(ctx, p, v)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, err
	}
	out := make([]backends.Archive, 0, len(cached))
	m.mu.Lock()
	for _, a := range cached {
		if a.Layout == backends.Packed {
			m.cached[a.Location] = true
			out = append(out, a)
		}
	}
	m.mu.Unlock()
	rel, err := m.offered(ctx, p, v)
	if err != nil {
		if len(out) > 0 {
			m.logf("warning: %s %s: the upstream %s failed (%v); listing what the cache holds", p, v, m.opts.UpstreamName, err)
			return out, nil
		}
		return nil, err
	}
	for _, a := range rel {
		i := slices.IndexFunc(out, func(c backends.Archive) bool { return c.Platform == a.Platform })
		if i < 0 {
			out = append(out, a)
			continue
		}
		out[i].Evidence = agreeing(out[i].Evidence, a.Evidence)
	}
	m.prefetchVersion(p, v)
	slices.SortFunc(out, func(a, b backends.Archive) int { return strings.Compare(a.Platform.String(), b.Platform.String()) })
	return out, nil
}

// offered returns the archives of p at v the upstream offers and the
// policy allows: none when offline, or when the policy or the trust
// policy refuses the provider or version (Explain says why).
func (m *Mirror) offered(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	if m.Offline() || m.refuses(p) != "" {
		return nil, nil
	}
	if m.opts.Policy.constrains(p) {
		up, err := m.upstreamVersions(ctx, p)
		if err != nil {
			return nil, err
		}
		if m.opts.Policy.version(p, v, up, m.firstSeen(ctx, p, up)) != "" {
			return nil, nil
		}
	}
	rel, err := m.release(ctx, p, v)
	if err != nil {
		return nil, err
	}
	var out []backends.Archive
	for _, a := range rel.as {
		if m.opts.Policy.platform(p, a.Platform) == "" {
			out = append(out, a)
		}
	}
	return out, nil
}

// agreeing adds to a cached zip's evidence the upstream's, when both
// state the same zh: (the same zip): the version document then lists
// every hash the signed evidence gives too.
func agreeing(cached, up []hashing.Evidence) []hashing.Evidence {
	zh := func(evs []hashing.Evidence) []hashing.Hash {
		var out []hashing.Hash
		for _, e := range evs {
			for _, h := range e.Hashes {
				if h.Scheme() == hashing.SchemeZip {
					out = append(out, h)
				}
			}
		}
		return hashing.SortUnique(out)
	}
	c, u := zh(cached), zh(up)
	if len(c) != 1 || !slices.Equal(c, u) {
		return cached
	}
	return append(slices.Clip(cached), up...)
}

// Open streams a zip: from CACHE when it holds it, otherwise from the
// fetch of it that is under way or that this call starts.
func (m *Mirror) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	key := a.Key()
	m.mu.Lock()
	inCache := m.cached[a.Location]
	f := m.flights[key]
	if f != nil {
		f.ref()
	}
	m.mu.Unlock()
	if f != nil {
		m.opts.Metrics.miss()
		return f.reader(ctx), nil
	}
	if inCache {
		if rc, ok, _ := m.openLocal(a); ok {
			m.opts.Metrics.hit(true)
			return rc, nil
		}
		rc, err := m.opts.Cache.Open(ctx, a)
		if err == nil || !errors.Is(err, backends.ErrNotFound) {
			m.opts.Metrics.hit(err == nil)
			return rc, err
		}
	}
	if rc, ok := m.openCached(ctx, a.Package); ok {
		return rc, nil
	}
	if m.Offline() {
		return nil, fmt.Errorf("%s: %s: %w", m, a.Package, backends.ErrNotFound)
	}
	if err := m.refusedRecently(key); err != nil {
		return nil, m.upstreamErr(a.Provider, err)
	}
	return m.fleetFetch(ctx, a.Package)
}

// openCached opens pkg from CACHE when it holds it (landed since it was
// listed, by this process or another).
func (m *Mirror) openCached(ctx context.Context, pkg backends.Package) (io.ReadCloser, bool) {
	as, err := m.opts.Cache.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		return nil, false
	}
	for _, c := range as {
		if c.Layout == backends.Packed && c.Platform == pkg.Platform {
			if rc, ok, _ := m.openLocal(c); ok {
				m.opts.Metrics.hit(true)
				return rc, true
			}
			if rc, err := m.opts.Cache.Open(ctx, c); err == nil {
				m.opts.Metrics.hit(true)
				return rc, true
			}
		}
	}
	return nil, false
}

// unionVersions is the versions of a and b, once each, newest first.
func unionVersions(a, b []backends.Version) []backends.Version {
	seen := map[string]bool{}
	var out []backends.Version
	for _, v := range append(slices.Clip(a), b...) {
		if !seen[v.String()] {
			seen[v.String()] = true
			out = append(out, v)
		}
	}
	backends.SortVersionsNewestFirst(out)
	return out
}
