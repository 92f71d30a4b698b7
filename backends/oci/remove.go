package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

var _ backends.Remover = (*Mirror)(nil)

// Remove takes archives of p out of the registry, version by version: the
// version's index is pushed again without their platforms, or, when none
// is left, deleted (by digest, so the tag goes only if it still names the
// index that was read), under the repository's lock (LockTag), as Flush
// pushes. The tag is then read back: a writer that does not take the lock
// may have re-added the platforms, and they are removed again. Only
// then are the platforms' manifests deleted, those no tag of the
// repository references. A platform whose zip is not the one listed
// (another writer pushed a different one) is left. Registries that refuse
// deletes (HTTP 405, UNSUPPORTED) keep the manifests, unreferenced, which
// Notes say; a version that loses every platform there stays whole, as
// Left says, since its tag cannot be deleted. Zip blobs go with the
// registry's garbage collection.
func (m *Mirror) Remove(ctx context.Context, p backends.Provider, as []backends.Archive) (backends.Removal, error) {
	var out backends.Removal
	r, addr, err := m.repo(p)
	if err != nil {
		return out, err
	}
	byVersion := map[string][]backends.Archive{}
	var versions []string
	for _, a := range as {
		v := a.Version.String()
		if byVersion[v] == nil {
			versions = append(versions, v)
		}
		byVersion[v] = append(byVersion[v], a)
	}
	if len(versions) == 0 {
		return out, nil
	}
	sort.Strings(versions)
	lk, err := m.lock(ctx, r, addr, p.String())
	if err != nil {
		return out, err
	}
	defer lk.release()
	var doomed []ocispec.Descriptor
	var errs []error
	for _, v := range versions {
		vr := &versionRemoval{m: m, r: r, lk: lk, addr: addr, p: p, version: byVersion[v][0].Version, as: byVersion[v]}
		ds, err := vr.run(ctx)
		out.Removed = append(out.Removed, vr.removed...)
		out.Left = append(out.Left, vr.left...)
		out.Notes = append(out.Notes, vr.notes...)
		doomed = append(doomed, ds...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(doomed) > 0 && ctx.Err() == nil {
		out.Notes = append(out.Notes, m.deleteManifests(ctx, r, addr, doomed)...)
	}
	return out, errors.Join(errs...)
}

// versionRemoval takes platforms out of one version's index.
type versionRemoval struct {
	m       *Mirror
	r       *remote.Repository
	lk      *repoLock
	addr    Repository
	p       backends.Provider
	version backends.Version
	tag     string
	as      []backends.Archive

	// doomed are the manifests of the platforms to take out, by platform.
	doomed  map[backends.Platform]ocispec.Descriptor
	removed []backends.Package
	left    []backends.Left
	notes   []string
}

func (vr *versionRemoval) label() string { return vr.p.String() + " " + vr.version.String() }

func (vr *versionRemoval) leave(pkg backends.Package, format string, args ...any) {
	vr.left = append(vr.left, backends.Left{Package: pkg, Reason: fmt.Sprintf(format, args...)})
}

// run takes the platforms out and returns the manifests it unlisted.
func (vr *versionRemoval) run(ctx context.Context) ([]ocispec.Descriptor, error) {
	vr.tag = vr.m.tagFor(vr.addr, vr.version)
	desc, idx, err := vr.read(ctx)
	if err != nil {
		return nil, err
	}
	if idx == nil {
		if len(vr.left) == 0 {
			for _, a := range vr.as {
				vr.removed = append(vr.removed, a.Package) // no such version any more
			}
		}
		return nil, nil
	}
	if err := vr.pick(ctx, idx); err != nil || len(vr.doomed) == 0 {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if err := vr.unlist(ctx, desc, idx); err != nil {
			return nil, vr.refused(err)
		}
		if desc, idx, err = vr.read(ctx); err != nil {
			return nil, err
		}
		again := vr.listed(idx)
		if len(again) == 0 {
			return vr.done(nil), nil
		}
		if attempt >= indexRetry.Tries() {
			return vr.done(again), nil
		}
		if err := indexRetry.Wait(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// refused turns a registry's refusal to delete the version's index into
// Left rows: the version stays whole.
func (vr *versionRemoval) refused(err error) error {
	if !errors.Is(err, ErrDeletesRefused) {
		return err
	}
	for _, a := range vr.as {
		if _, ok := vr.doomed[a.Platform]; ok {
			vr.leave(a.Package, "%v; until then tag %q stays, and version %s whole", err, vr.tag, vr.version)
		}
	}
	return nil
}

// read resolves the tag and reads its index: nil when the tag is gone, or
// holds something else than this provider's index (it then lists none of
// this provider's platforms); the archives asked for are then left.
func (vr *versionRemoval) read(ctx context.Context) (ocispec.Descriptor, *ocispec.Index, error) {
	desc, err := vr.r.Resolve(ctx, vr.tag)
	if err != nil && isNotFound(err) {
		return desc, nil, nil
	}
	if err != nil {
		return desc, nil, classify(err, fmt.Sprintf("resolve tag %q", vr.tag), vr.m.name, vr.addr, vr.label())
	}
	idx, err := readIndex(ctx, vr.r, desc)
	if err == nil {
		if owner, annotated, aerr := annotatedProvider(idx); aerr != nil || annotated && owner != vr.p {
			err = fmt.Errorf("%w: it is not the index of %s", ErrOtherProvider, vr.p)
		}
	}
	switch {
	case err != nil && (isContentError(err) || errors.Is(err, ErrOtherProvider)):
		if vr.doomed == nil {
			for _, a := range vr.as {
				vr.leave(a.Package, "tag %q of repository %s holds something else than this provider's index (%v); left", vr.tag, vr.addr, err)
			}
			vr.doomed = map[backends.Platform]ocispec.Descriptor{}
		}
		return desc, nil, nil
	case err != nil:
		return desc, nil, classify(err, "fetch index "+desc.Digest.String(), vr.m.name, vr.addr, vr.label())
	}
	return desc, idx, nil
}

// pick finds, for each archive asked for, its platform's manifest in idx,
// and keeps it to remove when its zip is the one listed; a platform no
// longer listed counts as removed.
func (vr *versionRemoval) pick(ctx context.Context, idx *ocispec.Index) error {
	targets, _, err := providerTargets(idx)
	if err != nil {
		return err
	}
	byPlat := map[backends.Platform]ocispec.Descriptor{}
	for _, t := range targets {
		byPlat[t.Platform] = t.Desc
	}
	vr.doomed = map[backends.Platform]ocispec.Descriptor{}
	for _, a := range vr.as {
		d, ok := byPlat[a.Platform]
		if !ok {
			vr.removed = append(vr.removed, a.Package)
			continue
		}
		b, err := fetchManifest(ctx, vr.r, d)
		var layer ocispec.Descriptor
		if err == nil {
			_, layer, err = parseImageManifest(b, a.Platform)
		}
		if err != nil && !isContentError(err) {
			return classify(err, "fetch manifest "+d.Digest.String(), vr.m.name, vr.addr, a.Package.String())
		}
		if err != nil || vr.addr.String()+"@"+layer.Digest.String() != a.Location {
			vr.leave(a.Package, "tag %q lists another zip for %s than when the plan was made (another writer pushed it); left", vr.tag, a.Platform)
			continue
		}
		vr.doomed[a.Platform] = d
	}
	return nil
}

// listed returns the doomed platforms idx references with their doomed
// manifest (nil idx: none).
func (vr *versionRemoval) listed(idx *ocispec.Index) map[backends.Platform]bool {
	out := map[backends.Platform]bool{}
	if idx == nil {
		return out
	}
	for _, d := range idx.Manifests {
		if d.Platform == nil {
			continue
		}
		plat := backends.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}
		if want, ok := vr.doomed[plat]; ok && d.Digest == want.Digest {
			out[plat] = true
		}
	}
	return out
}

// unlist pushes idx (which the tag named as desc) without the doomed
// platforms, or deletes it when no platform would be left.
func (vr *versionRemoval) unlist(ctx context.Context, desc ocispec.Descriptor, idx *ocispec.Index) error {
	kept := withoutPlatforms(idx, vr.doomed)
	if _, _, err := providerTargets(kept); err != nil {
		return vr.lk.push(ctx, vr.label(), func() error {
			err := vr.r.Delete(ctx, desc)
			if err == nil || isNotFound(err) {
				return nil
			}
			return classify(err, fmt.Sprintf("delete index %s (tag %q)", desc.Digest, vr.tag), vr.m.name, vr.addr, vr.label())
		})
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	nd := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, b)
	err = vr.lk.push(ctx, vr.label(), func() error {
		if err := retryRace(ctx, func() error { return vr.r.PushReference(ctx, nd, bytes.NewReader(b), vr.tag) }); err != nil {
			return classify(err, fmt.Sprintf("push index %s as tag %q", nd.Digest, vr.tag), vr.m.name, vr.addr, vr.label())
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The kept platforms are still the signed release's.
	if err := vr.m.carryProvenance(ctx, vr.r, vr.addr, desc.Digest, nd, vr.label()); err != nil {
		vr.m.warnf("repository %s: %s: the provenance of the index before the removal was not carried over: %v", vr.addr, vr.label(), err)
	}
	return nil
}

// done records the outcome once the tag has settled: the doomed platforms
// still listed are left, the others removed; it returns the manifests of
// the removed ones.
func (vr *versionRemoval) done(still map[backends.Platform]bool) []ocispec.Descriptor {
	var ds []ocispec.Descriptor
	for _, a := range vr.as {
		d, ok := vr.doomed[a.Platform]
		switch {
		case !ok:
		case still[a.Platform]:
			vr.leave(a.Package, "other writers listed it again in tag %q %d times; run prune again once they are done", vr.tag, indexRetry.Tries())
		default:
			vr.removed = append(vr.removed, a.Package)
			ds = append(ds, d)
		}
	}
	return ds
}

// withoutPlatforms is idx without the entries of the doomed platforms
// that name the doomed manifests; its annotations are kept.
func withoutPlatforms(idx *ocispec.Index, doomed map[backends.Platform]ocispec.Descriptor) *ocispec.Index {
	out := &ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: idx.ArtifactType, Annotations: idx.Annotations, Manifests: []ocispec.Descriptor{}}
	for _, d := range idx.Manifests {
		if d.Platform != nil {
			if want, ok := doomed[backends.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}]; ok && d.Digest == want.Digest {
				continue
			}
		}
		out.Manifests = append(out.Manifests, d)
	}
	return out
}

// deleteManifests deletes the manifests of removed platforms that no tag
// of the repository references (the same zip can be another version's),
// and returns notes on what it could not delete.
func (m *Mirror) deleteManifests(ctx context.Context, r *remote.Repository, addr Repository, ds []ocispec.Descriptor) []string {
	referenced, err := referencedManifests(ctx, r)
	if err != nil {
		return []string{fmt.Sprintf("oci mirror %s: repository %s: the manifests of the removed platforms are left, since the repository's tags could not be read to see that none references them: %v",
			m.name, addr, classify(err, "list references", m.name, addr, ""))}
	}
	var notes []string
	for _, d := range ds {
		if referenced[d.Digest] {
			continue
		}
		err := r.Manifests().Delete(ctx, d)
		if err == nil || isNotFound(err) {
			continue
		}
		err = classify(err, "delete manifest "+d.Digest.String(), m.name, addr, "")
		if errors.Is(err, ErrDeletesRefused) {
			return append(notes, fmt.Sprintf("%v; until then the manifests of the removed platforms stay in repository %s, referenced by no tag, so no client sees them", err, addr))
		}
		notes = append(notes, fmt.Sprintf("%v: left in the registry, referenced by no tag", err))
	}
	return notes
}

// referencedManifests returns every manifest a tag of r names, directly or
// through its index.
func referencedManifests(ctx context.Context, r *remote.Repository) (map[digest.Digest]bool, error) {
	var tags []string
	if err := r.Tags(ctx, "", func(ts []string) error { tags = append(tags, ts...); return nil }); err != nil && !isNotFound(err) {
		return nil, err
	}
	sets := make([][]digest.Digest, len(tags))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchParallelism)
	for i, tag := range tags {
		g.Go(func() error {
			desc, err := r.Resolve(gctx, tag)
			if err != nil {
				if isNotFound(err) {
					return nil // deleted meanwhile
				}
				return err
			}
			sets[i] = []digest.Digest{desc.Digest}
			if desc.MediaType != ocispec.MediaTypeImageIndex {
				return nil
			}
			b, err := fetchManifest(gctx, r, desc)
			if err != nil {
				if isNotFound(err) || isContentError(err) {
					return nil
				}
				return err
			}
			var idx ocispec.Index
			if err := json.Unmarshal(b, &idx); err != nil {
				return nil // not an index after all: it names nothing else
			}
			for _, d := range idx.Manifests {
				sets[i] = append(sets[i], d.Digest)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := map[digest.Digest]bool{}
	for _, set := range sets {
		for _, d := range set {
			out[d] = true
		}
	}
	return out, nil
}
