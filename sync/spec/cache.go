package spec

import (
	"context"
	"slices"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
)

// listCache remembers the archives each source listed, per provider
// version, for the destinations of one Wanted: every destination wants the
// same packages from the same sources, and listing them is the costly part
// of planning (an origin registry answers one download-metadata request per
// package). A failed listing is not remembered, so the next destination
// tries again. Nothing expires: a Wanted is one run's view of its sources.
type listCache struct {
	mu gosync.Mutex
	m  map[listKey][]backends.Archive
}

type listKey struct {
	source   string // the place, as written
	provider backends.Provider
	version  string
}

func newListCache() *listCache { return &listCache{m: map[listKey][]backends.Archive{}} }

// list is backends.ListArchives through the cache: only the versions not
// listed yet are asked of src, together, so a place that lists several
// versions at once (backends.VersionsLister) still does.
func (c *listCache) list(ctx context.Context, src backends.Reader, p backends.Provider, versions []backends.Version) ([]backends.Archive, error) {
	key := func(v string) listKey { return listKey{source: src.String(), provider: p, version: v} }
	c.mu.Lock()
	var missing []backends.Version
	for _, v := range versions {
		if _, ok := c.m[key(v.String())]; !ok {
			missing = append(missing, v)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		listed, err := backends.ListArchives(ctx, src, p, missing)
		if err != nil {
			return nil, err
		}
		byVersion := map[string][]backends.Archive{}
		for _, v := range missing {
			byVersion[v.String()] = []backends.Archive{} // listed, perhaps with no package
		}
		for _, a := range listed {
			byVersion[a.Version.String()] = append(byVersion[a.Version.String()], a)
		}
		c.mu.Lock()
		for v, as := range byVersion {
			c.m[key(v)] = as
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []backends.Archive
	for _, v := range versions {
		for _, a := range c.m[key(v.String())] {
			// Each plan appends its own evidence (a lock file's) to an
			// archive: it must not write into the slice the cache keeps.
			a.Evidence = slices.Clip(a.Evidence)
			out = append(out, a)
		}
	}
	return out, nil
}
