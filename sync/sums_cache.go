package sync

import (
	"context"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// SumsCache remembers the sums HashArchive computed, per place and
// archive, so that checking several lock files that lock the same
// packages reads and hashes each archive once. A failure is not
// remembered.
type SumsCache struct {
	mu gosync.Mutex
	m  map[sumsKey]hashing.Sums
}

type sumsKey struct {
	place    string
	pkg      backends.PackageKey
	layout   backends.Layout
	location string
}

// NewSumsCache returns an empty cache.
func NewSumsCache() *SumsCache { return &SumsCache{m: map[sumsKey]hashing.Sums{}} }

// Hash is HashArchive through the cache; a nil cache hashes every time.
func (c *SumsCache) Hash(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options) (hashing.Sums, error) {
	if c == nil {
		return HashArchive(ctx, r, a, opts)
	}
	k := sumsKey{place: r.String(), pkg: a.Key(), layout: a.Layout, location: a.Location}
	c.mu.Lock()
	sums, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return sums, nil
	}
	sums, err := HashArchive(ctx, r, a, opts)
	if err != nil {
		return sums, err
	}
	c.mu.Lock()
	c.m[k] = sums
	c.mu.Unlock()
	return sums, nil
}
