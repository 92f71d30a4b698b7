package s3

import (
	"context"
	"fmt"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

var _ backends.ProvenanceWriter = (*Store)(nil)

// provenanceKey is where the bucket keeps p's provenance at v, as a
// directory does: PREFIX/HOST/NAMESPACE/TYPE/.tfmirror-provenance/VERSION.json.
// The clients, reading the bucket as a network mirror, ask only for
// index.json, VERSION.json and the archives those name, so they never
// meet it; listings skip its folder.
func (s *Store) provenanceKey(p backends.Provider, v backends.Version) string {
	return s.providerPrefix(p) + provenance.DirName + "/" + provenance.FileName(v.String())
}

// isProvenanceFolder reports whether a folder under a provider's prefix is
// where the provenance documents are.
func isProvenanceFolder(rel string) bool { return rel == provenance.DirName+"/" }

// Provenance reads p's provenance at v, checking that it is about p at v
// (not its signature: the caller does that). A version without one is
// backends.ErrNotFound.
func (s *Store) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	key := s.provenanceKey(p, v)
	d, err := s.getDoc(ctx, key)
	if err != nil {
		return nil, err
	}
	if !d.exists {
		return nil, fmt.Errorf("mirror %s: %s %s: no provenance (%s): %w", s.name, p, v, s.location(key), backends.ErrNotFound)
	}
	pr, err := provenance.Parse(d.body)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", s.name, s.location(key), err)
	}
	if pr.Provider != p.String() || pr.Version != v.String() {
		return nil, fmt.Errorf("mirror %s: %s: %w: it is about %s %s, not %s %s", s.name, s.location(key), provenance.ErrFormat, pr.Provider, pr.Version, p, v)
	}
	return pr, nil
}

// WriteProvenance writes pr as p's provenance at v, unless the bucket
// holds those very bytes: conditionally on what was read (If-Match, or
// If-None-Match: *), again when another writer wrote it meanwhile, and
// signed with its SHA-256 so that a write cut short leaves the old one.
func (s *Store) WriteProvenance(ctx context.Context, p backends.Provider, v backends.Version, pr *provenance.Provenance) error {
	body, err := provenance.Marshal(pr)
	if err != nil {
		return fmt.Errorf("mirror %s: %s %s: provenance: %w", s.name, p, v, err)
	}
	key := s.provenanceKey(p, v)
	for attempt := 0; attempt < maxAttempts; attempt++ {
		old, err := s.getDoc(ctx, key)
		if err != nil {
			return err
		}
		if old.sameBytes(body) {
			return nil
		}
		err = s.putDoc(ctx, old, body)
		if !isPrecondition(err) {
			if err != nil {
				return fmt.Errorf("mirror %s: %s: %w", s.name, s.location(key), err)
			}
			return nil
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
	return backends.Transient(fmt.Errorf("mirror %s: %s: other writers kept rewriting it", s.name, s.location(key)))
}
