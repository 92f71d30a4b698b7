package pull

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// Prefetching. A client installs one platform's package, and the clients
// lock, from a network mirror, the hashes its version document states: for
// a platform the mirror has not fetched that is the signed zh: alone, so a
// lock written from it lacks that platform's h1:, which a filesystem mirror
// and `init -lockfile=readonly` need. With a policy that names platforms,
// the first request for a version (its version document) therefore starts
// the fetch of every policy platform of it that CACHE lacks, in the
// background: each verified and landed as an on-demand fetch is (a flight,
// which a client asking for it meanwhile joins), a few at a time
// (Options.PrefetchJobs), stopped by Close. Each landing of such a
// provider computes the package's h1: (hashingFor), so from then on the
// document states each platform's h1: beside its zh:, computed once for
// everyone who locks through the mirror.

// DefaultPrefetchJobs is how many prefetches run at once when
// Options.PrefetchJobs is zero.
const DefaultPrefetchJobs = 2

// platforms are the platforms the policy allows of p; nil when it names
// none (it allows every one then).
func (pol *Policy) platforms(p backends.Provider) []backends.Platform {
	if pol == nil {
		return nil
	}
	if b := pol.block(p); b != nil && len(b.Platforms) > 0 {
		return b.Platforms
	}
	return pol.Spec.Platforms
}

// hashingFor is how a fetch of a hashes: where the policy names its
// provider's platforms, or where the upstream states its h1: (a registry's
// packages field, unsigned), the landing computes the package's h1: too
// (the signed zh: alone would verify it): to check the statement, and so
// that CACHE's index, and the version document, state both.
func (m *Mirror) hashingFor(a backends.Archive) hashing.Options {
	o := m.opts.Hashing
	statesH1 := slices.ContainsFunc(a.Hashes(), func(h hashing.Hash) bool { return h.Scheme() == hashing.SchemeH1 })
	if statesH1 || len(m.opts.Policy.platforms(a.Provider)) > 0 {
		o.AllHashes = true
	}
	return o
}

// prefetchVersion starts the prefetch of p at v, once per version in this
// process, where the policy names platforms.
func (m *Mirror) prefetchVersion(p backends.Provider, v backends.Version) {
	if m.Offline() || m.opts.PrefetchJobs < 0 || len(m.opts.Policy.platforms(p)) == 0 {
		return
	}
	key := p.String() + "\x00" + v.String()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.prefetched[key] || m.ctx.Err() != nil {
		return
	}
	if m.prefetched == nil {
		n := m.opts.PrefetchJobs
		if n == 0 {
			n = DefaultPrefetchJobs
		}
		m.prefetched, m.prefetchSlots = map[string]bool{}, make(chan struct{}, n)
	}
	m.prefetched[key] = true
	m.queued++ // until it knows what it fetches: Flights counts it
	m.wg.Add(1)
	go m.prefetch(p, v, key)
}

// prefetch fetches the policy platforms of p at v that CACHE lacks, at
// most PrefetchJobs at a time across the mirror.
func (m *Mirror) prefetch(p backends.Provider, v backends.Version, key string) {
	defer m.wg.Done()
	ctx := m.ctx
	as, rel, err := m.prefetchable(ctx, p, v)
	if err != nil {
		if ctx.Err() == nil {
			m.logf("warning: %s %s: not prefetching the policy's platforms: %v", p, v, err)
		}
		m.mu.Lock()
		m.queued--
		delete(m.prefetched, key) // the next request tries again
		m.mu.Unlock()
		return
	}
	if len(as) > 0 {
		names := make([]string, len(as))
		for i, a := range as {
			names[i] = a.Platform.String()
		}
		m.logf("prefetching %s %s for %s (the policy's platforms CACHE lacks)", p, v, strings.Join(names, ", "))
	}
	m.mu.Lock()
	m.queued += len(as) - 1 // each counts until it starts
	m.mu.Unlock()
	for i, a := range as {
		select {
		case m.prefetchSlots <- struct{}{}:
		case <-ctx.Done():
			m.mu.Lock()
			m.queued -= len(as) - i
			m.mu.Unlock()
			return
		}
		f := m.claim(a.Package)
		if f == nil {
			<-m.prefetchSlots
			continue
		}
		go func() {
			m.fetch(f, rel, a)
			<-m.prefetchSlots
		}()
	}
}

// prefetchable returns the archives of p at v the upstream offers and the
// policy allows that CACHE lacks, with the release they are fetched from.
func (m *Mirror) prefetchable(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, *release, error) {
	offered, err := m.offered(ctx, p, v)
	if err != nil || len(offered) == 0 {
		return nil, nil, err
	}
	rel, err := m.release(ctx, p, v)
	if err != nil {
		return nil, nil, err
	}
	cached, err := m.opts.Cache.Archives(ctx, p, v)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, nil, err
	}
	held := map[backends.Platform]bool{}
	for _, c := range cached {
		if c.Layout == backends.Packed {
			held[c.Platform] = true
		}
	}
	var out []backends.Archive
	for _, a := range offered {
		if !held[a.Platform] {
			out = append(out, a)
		}
	}
	return out, rel, nil
}

// claim starts a queued prefetch of pkg, a flight without a client: nil
// when one is under way (a client's, which then needs no prefetch), when
// this process landed pkg already, or when the mirror is closing.
func (m *Mirror) claim(pkg backends.Package) *flight {
	key := pkg.Key()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queued--
	if m.flights[key] != nil || m.landed[key] || m.ctx.Err() != nil {
		return nil
	}
	f := newFlight(key)
	m.flights[key] = f
	m.wg.Add(1)
	return f
}
