package pull

import (
	"context"
	"errors"
	"fmt"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

var (
	_ backends.ProvenanceReader = (*Mirror)(nil)
	_ backends.ProvenanceLister = (*Mirror)(nil)
)

// Provenance is the provenance CACHE keeps of p at v, or else the one the
// upstream offers, checked as a fetch checks it (the version the mirror
// would fetch): the registry protocols hand it to the clients. A version
// neither has, or one the policy refuses, is ErrNotFound saying why.
func (m *Mirror) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	if pr, ok := m.opts.Cache.(backends.ProvenanceReader); ok {
		doc, err := pr.Provenance(ctx, p, v)
		if err == nil || !errors.Is(err, backends.ErrNotFound) {
			return doc, err
		}
	}
	notFound := func(why string) error {
		return fmt.Errorf("%s %s: %s: %w", p, v, why, backends.ErrNotFound)
	}
	if m.Offline() {
		return nil, notFound("the cache keeps no signed SHA256SUMS of it, and the mirror serves offline")
	}
	if why := m.refuses(p); why != "" {
		return nil, notFound(why)
	}
	rel, err := m.release(ctx, p, v)
	switch {
	case err != nil:
		return nil, err
	case rel.refused != nil:
		return nil, notFound(fmt.Sprintf("refused: %v", rel.refused))
	case rel.signed == nil:
		return nil, notFound("neither the cache nor the upstream keeps a signed SHA256SUMS of it")
	}
	return rel.signed.Provenance, nil
}

// ProvenanceVersions is the versions of p CACHE keeps provenance of, and,
// where the upstream keeps provenance (an origin registry, a mirror
// tfmirror wrote), every version it offers: Provenance fetches and checks
// that one when a client asks for it.
func (m *Mirror) ProvenanceVersions(ctx context.Context, p backends.Provider) (map[string]bool, error) {
	out := map[string]bool{}
	switch c := m.opts.Cache.(type) {
	case backends.ProvenanceLister:
		have, err := c.ProvenanceVersions(ctx, p)
		if err != nil && !errors.Is(err, backends.ErrNotFound) {
			return nil, err
		}
		for v := range have {
			out[v] = true
		}
	case backends.ProvenanceReader:
		vs, _ := m.opts.Cache.Versions(ctx, p)
		for _, v := range vs {
			if _, err := c.Provenance(ctx, p, v); err == nil {
				out[v.String()] = true
			}
		}
	}
	if m.Offline() || m.refuses(p) != "" {
		return out, nil
	}
	r, err := m.upstreamOf(ctx, p)
	if err != nil {
		m.logf("warning: %s: the upstream %s failed (%v); offering what the cache holds", p, m.opts.UpstreamName, err)
		return out, nil
	}
	if _, ok := r.(backends.ProvenanceReader); !ok {
		return out, nil
	}
	up, err := m.upstreamVersions(ctx, p)
	if err != nil {
		return out, nil // listed from the cache alone, as Versions does
	}
	for _, v := range m.opts.Policy.versions(p, up, m.firstSeen(ctx, p, up)) {
		out[v.String()] = true
	}
	return out, nil
}
