package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

var _ backends.ProvenanceWriter = (*Mirror)(nil)

// Provenance reads p's provenance at v: the layer of the referrer manifest
// (artifactType provenance.ArtifactType) whose subject is the index the
// version's tag names, found through the registry's referrers API or,
// where the registry has none, the referrers tag (sha256-DIGEST) oras-go
// keeps for it. A version without one is backends.ErrNotFound.
func (m *Mirror) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	r, addr, err := m.repo(p)
	if err != nil {
		return nil, err
	}
	label := p.String() + " " + v.String()
	tag := m.tagFor(addr, v)
	index, err := r.Resolve(ctx, tag)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: no tag %q: %w", m.name, addr, label, tag, backends.ErrNotFound)
		}
		return nil, classify(err, fmt.Sprintf("resolve tag %q", tag), m.name, addr, label)
	}
	docs, err := m.provenanceOf(ctx, r, addr, index, label)
	if err != nil {
		return nil, err
	}
	var found *provenance.Provenance
	for _, d := range docs {
		if d.doc.Provider != p.String() || d.doc.Version != v.String() {
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: referrer %s: %w: it is about %s %s", m.name, addr, label, d.manifest.Digest, provenance.ErrFormat, d.doc.Provider, d.doc.Version)
		}
		if found != nil && !found.Equal(d.doc) {
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: the index %s has several different provenance referrers; which one is the release's cannot be told", m.name, addr, label, index.Digest)
		}
		found = d.doc
	}
	if found == nil {
		return nil, fmt.Errorf("oci mirror %s: repository %s: %s: no provenance refers to index %s: %w", m.name, addr, label, index.Digest, backends.ErrNotFound)
	}
	return found, nil
}

// referrer is one provenance referrer of an index: its manifest, its layer
// and what the layer holds.
type referrer struct {
	manifest ocispec.Descriptor
	layer    ocispec.Descriptor
	doc      *provenance.Provenance
}

// provenanceOf lists index's provenance referrers and reads each.
func (m *Mirror) provenanceOf(ctx context.Context, r *remote.Repository, addr Repository, index ocispec.Descriptor, label string) ([]referrer, error) {
	var descs []ocispec.Descriptor
	err := r.Referrers(ctx, index, provenance.ArtifactType, func(rs []ocispec.Descriptor) error {
		descs = append(descs, rs...)
		return nil
	})
	if err != nil && !isNotFound(err) {
		return nil, classify(err, "list referrers of index "+index.Digest.String(), m.name, addr, label)
	}
	out := make([]referrer, 0, len(descs))
	for _, d := range descs {
		ref, err := readReferrer(ctx, r, d)
		if err != nil {
			if isContentError(err) || errors.Is(err, provenance.ErrFormat) {
				return nil, fmt.Errorf("oci mirror %s: repository %s: %s: provenance referrer %s: %w", m.name, addr, label, d.Digest, err)
			}
			return nil, classify(err, "fetch provenance referrer "+d.Digest.String(), m.name, addr, label)
		}
		out = append(out, ref)
	}
	return out, nil
}

// readReferrer fetches a provenance referrer's manifest and its layer,
// each checked against its digest and bounded in size.
func readReferrer(ctx context.Context, r *remote.Repository, d ocispec.Descriptor) (referrer, error) {
	b, err := fetchManifest(ctx, r, d)
	if err != nil {
		return referrer{}, err
	}
	var man ocispec.Manifest
	if err := unmarshalManifest(b, &man); err != nil {
		return referrer{}, err
	}
	var layer *ocispec.Descriptor
	for i, l := range man.Layers {
		if l.MediaType == provenance.MediaType {
			if layer != nil {
				return referrer{}, fmt.Errorf("%w: more than one %s layer", provenance.ErrFormat, provenance.MediaType)
			}
			layer = &man.Layers[i]
		}
	}
	switch {
	case layer == nil:
		return referrer{}, fmt.Errorf("%w: no %s layer", provenance.ErrFormat, provenance.MediaType)
	case layer.Size < 0 || layer.Size > provenance.MaxSize:
		return referrer{}, fmt.Errorf("%w: layer of %d bytes", provenance.ErrFormat, layer.Size)
	}
	rc, err := r.Blobs().Fetch(ctx, *layer)
	if err != nil {
		return referrer{}, err
	}
	defer func() { _ = rc.Close() }() // read only
	raw, err := content.ReadAll(rc, *layer)
	if err != nil {
		if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) || errors.Is(err, io.ErrUnexpectedEOF) {
			return referrer{}, fmt.Errorf("%w: layer %s: %v", ErrDigestMismatch, layer.Digest, err)
		}
		return referrer{}, err
	}
	doc, err := provenance.Parse(raw)
	if err != nil {
		return referrer{}, err
	}
	return referrer{manifest: d, layer: *layer, doc: doc}, nil
}

func unmarshalManifest(b []byte, man *ocispec.Manifest) error {
	if err := json.Unmarshal(b, man); err != nil {
		return fmt.Errorf("%w: manifest: %v", provenance.ErrFormat, err)
	}
	if man.MediaType != ocispec.MediaTypeImageManifest || man.ArtifactType != provenance.ArtifactType {
		return fmt.Errorf("%w: manifest of media type %q and artifactType %q", provenance.ErrFormat, man.MediaType, man.ArtifactType)
	}
	return nil
}

// WriteProvenance attaches pr to the index p's version tag names: its
// document pushed as a blob, and an OCI 1.1 image manifest of artifactType
// provenance.ArtifactType with that blob as its single layer and the index
// as its subject (oras-go's PackManifest, which also keeps the referrers
// tag where the registry has no referrers API). The manifest is the same
// bytes for the same provenance and index, and nothing is pushed when the
// index already has it; a different provenance the index had is replaced
// (its referrer deleted once the new one is there).
func (m *Mirror) WriteProvenance(ctx context.Context, p backends.Provider, v backends.Version, pr *provenance.Provenance) error {
	r, addr, err := m.repo(p)
	if err != nil {
		return err
	}
	label := p.String() + " " + v.String()
	tag := m.tagFor(addr, v)
	index, err := r.Resolve(ctx, tag)
	if err != nil {
		return classify(err, fmt.Sprintf("resolve tag %q", tag), m.name, addr, label)
	}
	return m.attach(ctx, r, addr, index, pr, label)
}

// attach pushes pr as a provenance referrer of index, unless index has it.
func (m *Mirror) attach(ctx context.Context, r *remote.Repository, addr Repository, index ocispec.Descriptor, pr *provenance.Provenance, label string) error {
	b, err := provenance.Marshal(pr)
	if err != nil {
		return fmt.Errorf("oci mirror %s: %s: provenance: %w", m.name, label, err)
	}
	layer := content.NewDescriptorFromBytes(provenance.MediaType, b)
	have, err := m.provenanceOf(ctx, r, addr, index, label)
	if err != nil && !errors.Is(err, provenance.ErrFormat) && !isContentError(err) {
		return err
	}
	for _, h := range have {
		if h.layer.Digest == layer.Digest {
			return nil
		}
	}
	if err := pushBlob(ctx, r, layer, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil); err != nil {
		return classify(err, "push provenance blob "+layer.Digest.String(), m.name, addr, label)
	}
	s, err := pr.Check(provenance.Options{})
	if err != nil {
		return fmt.Errorf("oci mirror %s: repository %s: %s: %w", m.name, addr, label, err)
	}
	// The signature's own time makes the manifest reproducible (oras
	// stamps the current time otherwise).
	created := s.Signed
	if created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	subject := ocispec.Descriptor{MediaType: index.MediaType, Digest: index.Digest, Size: index.Size}
	_, err = oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, provenance.ArtifactType, oras.PackManifestOptions{
		Subject: &subject,
		Layers:  []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{
			ocispec.AnnotationCreated:        created.Format(time.RFC3339),
			provenance.AnnotationKeyID:       s.KeyID,
			provenance.AnnotationFingerprint: s.Fingerprint,
		},
	})
	if err != nil {
		return classify(err, "push provenance referrer of index "+index.Digest.String(), m.name, addr, label)
	}
	return m.dropReferrers(ctx, r, addr, have, label)
}

// dropReferrers deletes the provenance referrers pr replaced: an index with
// several different ones has no provenance a reader can tell (Provenance
// refuses it), so what was written last must be the only one.
func (m *Mirror) dropReferrers(ctx context.Context, r *remote.Repository, addr Repository, replaced []referrer, label string) error {
	for _, h := range replaced {
		err := r.Manifests().Delete(ctx, h.manifest)
		if err == nil || isNotFound(err) {
			continue
		}
		return fmt.Errorf("oci mirror %s: repository %s: %s: the provenance written replaces referrer %s, which could not be deleted, so the version's provenance cannot be told: %w",
			m.name, addr, label, h.manifest.Digest, classify(err, "delete provenance referrer "+h.manifest.Digest.String(), m.name, addr, label))
	}
	return nil
}

// carryProvenance attaches to the index now, which replaced the index
// before (a flush that added platforms, a prune that removed some), the
// provenance that referred to before: the signed SHA256SUMS covers every
// platform, so it proves the new index's as it did the old's.
func (m *Mirror) carryProvenance(ctx context.Context, r *remote.Repository, addr Repository, before digest.Digest, now ocispec.Descriptor, label string) error {
	if before == "" || before == now.Digest {
		return nil
	}
	old := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: before}
	have, err := m.provenanceOf(ctx, r, addr, old, label)
	if err != nil {
		return err
	}
	for _, h := range have {
		if err := m.attach(ctx, r, addr, now, h.doc, label); err != nil {
			return err
		}
	}
	return nil
}
