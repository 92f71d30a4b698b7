package s3

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

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
	held, err := s.provenanceHeld(ctx, p)
	if err != nil {
		return nil, err
	}
	var d doc
	if held[key] {
		if d, err = s.getDoc(ctx, key); err != nil {
			return nil, err
		}
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

// provenanceHeld returns the keys of p's provenance documents, from one
// listing of its provenance folder reused for listingTTL, as a provider's
// listing is (none at all when a fresh listing of p found no such folder):
// ls and sync ask for every version's, and most versions of most mirrors
// have none, which a GET each would find out one request at a time.
func (s *Store) provenanceHeld(ctx context.Context, p backends.Provider) (map[string]bool, error) {
	s.mu.Lock()
	c, listed := s.listings[p]
	held, ok := s.provenance[p]
	s.mu.Unlock()
	switch {
	case listed && time.Since(c.at) < listingTTL && !c.l.hasProvenance:
		return nil, nil
	case ok && time.Since(held.at) < listingTTL:
		return held.keys, nil
	}
	at := time.Now()
	pfx := s.providerPrefix(p) + provenance.DirName + "/"
	keys := map[string]bool{}
	pages := s3api.NewListObjectsV2Paginator(s.client, &s3api.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &pfx})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.errorf(err, "%s: list %s", p, s.location(pfx))
		}
		for _, o := range page.Contents {
			keys[aws.ToString(o.Key)] = true
		}
	}
	s.mu.Lock()
	s.provenance[p] = heldProvenance{at: at, keys: keys}
	s.mu.Unlock()
	return keys, nil
}

var _ backends.ProvenanceLister = (*Store)(nil)

// ProvenanceVersions lists the versions of p whose provenance documents
// are in its provenance folder (one listing, reused as Provenance reuses
// it).
func (s *Store) ProvenanceVersions(ctx context.Context, p backends.Provider) (map[string]bool, error) {
	keys, err := s.provenanceHeld(ctx, p)
	if err != nil {
		return nil, err
	}
	pfx := s.providerPrefix(p) + provenance.DirName + "/"
	out := make(map[string]bool, len(keys))
	for k := range keys {
		if v, ok := strings.CutSuffix(strings.TrimPrefix(k, pfx), provenance.FileName("")); ok && !strings.Contains(v, "/") {
			out[v] = true
		}
	}
	return out, nil
}

// heldProvenance is a listing of a provider's provenance folder.
type heldProvenance struct {
	at   time.Time
	keys map[string]bool
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
	defer s.forget(p)
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
