package pull

import (
	"context"
	"fmt"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

var _ backends.Presigner = (*Mirror)(nil)

// PresignArchive answers a zip CACHE holds with a URL of CACHE's own (when
// CACHE presigns: a bucket), counted as a hit: a client then downloads it
// from the object store. A zip CACHE does not hold (or holds as another
// zip than the one listed) is ErrNotFound: it is streamed, from CACHE or a
// fetch, as without redirects.
func (m *Mirror) PresignArchive(ctx context.Context, a backends.Archive, ttl time.Duration) (string, error) {
	p, ok := m.opts.Cache.(backends.Presigner)
	if !ok {
		return "", fmt.Errorf("%s: %s: %w", m, a.Package, backends.ErrNotFound)
	}
	c, ok := m.cachedCopy(ctx, a)
	if !ok {
		return "", fmt.Errorf("%s: %s: not in the cache: %w", m, a.Package, backends.ErrNotFound)
	}
	url, err := p.PresignArchive(ctx, c, ttl)
	if err == nil {
		m.opts.Metrics.hit(true)
	}
	return url, err
}

// cachedCopy returns CACHE's archive of a: a itself when listed from
// CACHE, else the one CACHE lists now (landed since a was listed) when it
// states the zh: a was listed with.
func (m *Mirror) cachedCopy(ctx context.Context, a backends.Archive) (backends.Archive, bool) {
	m.mu.Lock()
	inCache := m.cached[a.Location]
	m.mu.Unlock()
	if inCache {
		return a, true
	}
	as, err := m.opts.Cache.Archives(ctx, a.Provider, a.Version)
	if err != nil {
		return backends.Archive{}, false
	}
	want := zhOf(a.Evidence)
	for _, c := range as {
		if c.Layout == backends.Packed && c.Platform == a.Platform && want != "" && zhOf(c.Evidence) == want {
			return c, true
		}
	}
	return backends.Archive{}, false
}

// zhOf is the one zh: evidence states, or "" when it states none or
// several.
func zhOf(evs []hashing.Evidence) hashing.Hash {
	var zh hashing.Hash
	for _, e := range evs {
		for _, h := range e.Hashes {
			if h.Scheme() != hashing.SchemeZip {
				continue
			}
			if zh != "" && zh != h {
				return ""
			}
			zh = h
		}
	}
	return zh
}
