package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

type versionKey struct {
	provider backends.Provider
	version  string
}

// pendingVersion is one version's index as it will be pushed: what the
// registry had (base) plus the platforms committed since (added). Its mutex
// serialises the read-merge-write of the index; uploads run outside it, so
// platforms of one version upload in parallel.
type pendingVersion struct {
	mu       sync.Mutex
	provider backends.Provider
	version  backends.Version
	addr     Repository
	tag      string
	loaded   bool
	base     *ocispec.Index // nil: no usable index in the registry
	// baseDigest is the digest the tag named when base was read.
	baseDigest digest.Digest
	layers     map[backends.Platform]digest.Digest
	added      map[backends.Platform]ocispec.Descriptor
	dirty      bool
	// owned are the indexes found to belong to provider.
	owned map[digest.Digest]bool
}

// version returns the pending state of pkg's version, creating it.
func (w *writeState) version(pkg backends.Package, addr Repository) *pendingVersion {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := versionKey{pkg.Provider, pkg.Version.String()}
	pv, ok := w.versions[k]
	if !ok {
		pv = &pendingVersion{provider: pkg.Provider, version: pkg.Version, addr: addr, tag: versionTag(pkg.Version),
			layers: map[backends.Platform]digest.Digest{}, added: map[backends.Platform]ocispec.Descriptor{},
			owned: map[digest.Digest]bool{}}
		w.versions[k] = pv
	}
	return pv
}

// existingLayer returns the digest of the zip the registry (or an earlier
// Commit) holds for pkg's platform, or "" when there is none.
func (pv *pendingVersion) existingLayer(ctx context.Context, m *Mirror, r *remote.Repository, pkg backends.Package, force bool) (digest.Digest, error) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if !pv.loaded {
		if err := pv.load(ctx, m, r, pkg, force); err != nil {
			return "", err
		}
	}
	if d, ok := pv.layers[pkg.Platform]; ok {
		return d, nil
	}
	if pv.base == nil {
		return "", nil
	}
	targets, _, err := providerTargets(pv.base)
	if err != nil {
		return "", nil // load accepted it under force; it is replaced whole
	}
	for _, t := range targets {
		if t.Platform != pkg.Platform {
			continue
		}
		b, err := fetchManifest(ctx, r, t.Desc)
		if err == nil {
			var layer ocispec.Descriptor
			if _, layer, err = parseImageManifest(b, pkg.Platform); err == nil {
				pv.layers[pkg.Platform] = layer.Digest
				return layer.Digest, nil
			}
		}
		if !isContentError(err) {
			return "", classify(err, "fetch manifest "+t.Desc.Digest.String(), m.name, pv.addr, pkg.String())
		}
		// A broken manifest for the platform: any zip differs from it.
		return t.Desc.Digest, nil
	}
	return "", nil
}

// load reads the version's index from the registry, if the tag exists.
func (pv *pendingVersion) load(ctx context.Context, m *Mirror, r *remote.Repository, pkg backends.Package, force bool) error {
	label := pkg.String()
	desc, err := r.Resolve(ctx, pv.tag)
	switch {
	case err != nil && isNotFound(err):
		pv.loaded = true
		return nil
	case err != nil:
		return classify(err, fmt.Sprintf("resolve tag %q", pv.tag), m.name, pv.addr, label)
	}
	idx, err := readIndex(ctx, r, desc)
	switch {
	case err == nil:
		if err := pv.checkOwner(ctx, m, r, desc.Digest, idx, label); err != nil {
			return err
		}
		pv.base, pv.baseDigest = idx, desc.Digest
	case !isContentError(err):
		return classify(err, "fetch index "+desc.Digest.String(), m.name, pv.addr, label)
	case !force:
		return fmt.Errorf("oci mirror %s: repository %s: %s: %w: tag %q holds something else: %v", m.name, pv.addr, label, backends.ErrConflict, pv.tag, err)
	default:
		pv.baseDigest = desc.Digest // forced: replaced, nothing of it kept
	}
	pv.loaded = true
	return nil
}

// readIndex fetches and checks a provider version's index.
func readIndex(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor) (*ocispec.Index, error) {
	if err := checkIndexDescriptor(desc); err != nil {
		return nil, err
	}
	b, err := fetchManifest(ctx, r, desc)
	if err != nil {
		return nil, err
	}
	idx, err := parseIndex(b)
	if err != nil {
		return nil, err
	}
	if _, _, err := providerTargets(idx); err != nil {
		return nil, err
	}
	return idx, nil
}

func (pv *pendingVersion) add(plat backends.Platform, desc ocispec.Descriptor, layer digest.Digest) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.added[plat] = desc
	pv.layers[plat] = layer
	pv.dirty = true
}

// Flush pushes, for every version of p that Commits changed, the version's
// image index, tagged with the version ("+" written as "_"): the platforms
// the registry had, with the committed ones added or replaced. It holds the
// repository's lock (LockTag) meanwhile, so that concurrent writers merge
// onto each other's indexes rather than over them; a version whose push
// found another writer holding the lock is flushed again under a new one.
func (m *Mirror) Flush(ctx context.Context, p backends.Provider) error {
	m.w.mu.Lock()
	var keys []versionKey
	for k, pv := range m.w.versions {
		if k.provider == p {
			pv.mu.Lock()
			if pv.dirty {
				keys = append(keys, k)
			}
			pv.mu.Unlock()
		}
	}
	m.w.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].version < keys[j].version })
	r, addr, err := m.repo(p)
	if err != nil {
		return err
	}
	for turn := 1; ; turn++ {
		errs := m.flushLocked(ctx, r, addr, p, keys)
		var lost []versionKey
		for i, err := range errs {
			if errors.Is(err, errLockLost) && ctx.Err() == nil {
				lost = append(lost, keys[i])
			}
		}
		if len(lost) == 0 || turn == lockAttempts {
			return errors.Join(errs...)
		}
		keys = lost
	}
}

// flushLocked takes the repository's lock and flushes the versions keys
// name under it, each version's error at its index.
func (m *Mirror) flushLocked(ctx context.Context, r *remote.Repository, addr Repository, p backends.Provider, keys []versionKey) []error {
	errs := make([]error, len(keys))
	pvs := make([]*pendingVersion, len(keys))
	m.w.mu.Lock()
	for i, k := range keys {
		pvs[i] = m.w.versions[k]
	}
	m.w.mu.Unlock()
	lk, err := m.lock(ctx, r, addr, p.String())
	if err != nil {
		for i, pv := range pvs {
			pv.mu.Lock()
			errs[i] = pv.unlisted(err)
			pv.mu.Unlock()
		}
		return errs
	}
	defer lk.release()
	// Versions have tags of their own: their indexes are pushed and read
	// back side by side.
	var g errgroup.Group
	g.SetLimit(fetchParallelism)
	for i, k := range keys {
		pv := pvs[i]
		g.Go(func() error {
			label := p.String() + " " + k.version
			pv.mu.Lock()
			before := pv.baseDigest
			pv.mu.Unlock()
			if errs[i] = pv.flush(ctx, m, r, lk, label); errs[i] == nil {
				errs[i] = m.provenanceAfterFlush(ctx, r, pv, before, label)
			}
			return nil
		})
	}
	_ = g.Wait() // every job returns nil: its error is in errs[i]
	return errs
}

// provenanceAfterFlush carries the provenance that referred to the index
// the tag named before the flush (before) over to the one it names now.
func (m *Mirror) provenanceAfterFlush(ctx context.Context, r *remote.Repository, pv *pendingVersion, before digest.Digest, label string) error {
	if before == "" {
		return nil // no index before, so no provenance to carry
	}
	now, err := r.Resolve(ctx, pv.tag)
	if err != nil {
		return classify(err, fmt.Sprintf("resolve tag %q", pv.tag), m.name, pv.addr, label)
	}
	return m.carryProvenance(ctx, r, pv.addr, before, now, label)
}

// indexRetry bounds the pushes of one version's index while writers that
// do not take the lock keep moving its tag: 8, waiting as raceRetry does.
var indexRetry = backends.RetryPolicy{Attempts: 8, Base: raceRetry.Base, Jitter: raceRetry.Jitter}

// unlisted makes err a *backends.UnlistedError naming the platforms
// committed since the last flush: their manifests are in the registry, but
// nothing says the index references them. pv.mu is held.
func (pv *pendingVersion) unlisted(err error) error {
	var pkgs []backends.Package
	for _, plat := range sortedPlatforms(pv.added) {
		pkgs = append(pkgs, backends.Package{Provider: pv.provider, Version: pv.version, Platform: plat})
	}
	return &backends.UnlistedError{Packages: pkgs, Err: err}
}

// flush pushes the version's index, under lk. Its error is a
// *backends.UnlistedError (see unlisted).
func (pv *pendingVersion) flush(ctx context.Context, m *Mirror, r *remote.Repository, lk *repoLock, label string) (err error) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if !pv.dirty {
		return nil
	}
	mine := pv.added
	defer func() {
		if err != nil {
			err = pv.unlisted(err)
		}
	}()
	// Under the lock no other tfmirror writer pushes the tag; the index is
	// still read back, and merged onto and pushed again while a writer
	// that does not take the lock (another tool, tfmirror before the lock)
	// has replaced it without the platforms this process wrote.
	for attempt := 1; ; attempt++ {
		// Merge onto what the tag names now, so that what others pushed
		// before this writer took the lock is kept. A tag that cannot be
		// read fails the flush: merging onto what was read before would
		// drop their platforms.
		if _, err := pv.adopt(ctx, m, r, label); err != nil {
			return err
		}
		idx := mergeIndex(pv.base, mine, pv.provider)
		b, err := json.Marshal(idx)
		if err != nil {
			return fmt.Errorf("oci mirror %s: %s: %w", m.name, label, err)
		}
		desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, b)
		err = lk.push(ctx, label, func() error {
			if err := retryRace(ctx, func() error { return r.PushReference(ctx, desc, bytes.NewReader(b), pv.tag) }); err != nil {
				return classify(err, fmt.Sprintf("push index %s as tag %q", desc.Digest, pv.tag), m.name, pv.addr, label)
			}
			return nil
		})
		if err != nil {
			return err
		}
		pv.base, pv.baseDigest = idx, desc.Digest
		pv.owned[desc.Digest] = true
		missing, err := pv.readBack(ctx, m, r, mine, label)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			pv.added, pv.dirty = map[backends.Platform]ocispec.Descriptor{}, false
			return nil
		}
		if attempt >= indexRetry.Tries() {
			return fmt.Errorf("oci mirror %s: repository %s: %s: tag %q: writers that do not take the lock (tag %q: other tools, or tfmirror before it) replaced the index %d times, each time without %s: run again once they are done",
				m.name, pv.addr, label, pv.tag, LockTag, attempt, backends.JoinPlatforms(missing))
		}
		if err := indexRetry.Wait(ctx, attempt); err != nil {
			return err
		}
	}
}

// adopt reads the version's tag and, where another writer moved it since
// this process last read or pushed it, makes the index it names now the
// base of the next merge, and returns it (nil when the tag is gone, or
// names what a forced push replaces).
// A tag that names something else than a provider index is a conflict; a
// manifest the tag names but the registry does not serve yet (distribution
// 2.8 rewrites its link in place) is asked for again.
func (pv *pendingVersion) adopt(ctx context.Context, m *Mirror, r *remote.Repository, label string) (*ocispec.Index, error) {
	for attempt := 1; ; attempt++ {
		desc, err := r.Resolve(ctx, pv.tag)
		switch {
		case err != nil && isNotFound(err):
			pv.base, pv.baseDigest = nil, ""
			return nil, nil
		case err != nil:
			return nil, classify(err, fmt.Sprintf("resolve tag %q", pv.tag), m.name, pv.addr, label)
		case desc.Digest == pv.baseDigest:
			return pv.base, nil
		}
		idx, err := readIndex(ctx, r, desc)
		switch {
		case err == nil:
			if err := pv.checkOwner(ctx, m, r, desc.Digest, idx, label); err != nil {
				return nil, err
			}
			pv.base, pv.baseDigest = idx, desc.Digest
			return idx, nil
		case isContentError(err):
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: %w: another writer pushed to tag %q meanwhile something else than a provider index: %v", m.name, pv.addr, label, backends.ErrConflict, pv.tag, err)
		case !isNotFound(err) || attempt >= raceRetry.Tries():
			return nil, classify(err, "fetch index "+desc.Digest.String(), m.name, pv.addr, label)
		}
		if err := raceRetry.Wait(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// readBack reads the version's tag and returns the platforms of mine its
// index does not reference, having made what it read the base of the next
// merge. A platform the index references with another manifest than this
// process pushed is a conflict: another writer pushed a different zip for
// it at the same time.
func (pv *pendingVersion) readBack(ctx context.Context, m *Mirror, r *remote.Repository, mine map[backends.Platform]ocispec.Descriptor, label string) ([]backends.Platform, error) {
	pushed := pv.baseDigest
	idx, err := pv.adopt(ctx, m, r, label)
	switch {
	case err != nil:
		return nil, err
	case pv.baseDigest == "":
		return sortedPlatforms(mine), nil // the tag is gone
	case pv.baseDigest == pushed:
		return nil, nil // still the index this process pushed
	}
	listed := map[backends.Platform][]digest.Digest{}
	for _, d := range idx.Manifests {
		if d.ArtifactType == ArtifactTypeTarget && d.Platform != nil {
			plat := backends.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}
			listed[plat] = append(listed[plat], d.Digest)
		}
	}
	var missing []backends.Platform
	for _, plat := range sortedPlatforms(mine) {
		switch ds := listed[plat]; {
		case len(ds) == 0:
			missing = append(missing, plat)
		case len(ds) > 1 || ds[0] != mine[plat].Digest:
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s %s: %w: another writer pushed tag %q at the same time with manifest %s for this platform, not the %s this process pushed; run again to see which zip is there",
				m.name, pv.addr, label, plat, backends.ErrConflict, pv.tag, ds[0], mine[plat].Digest)
		}
	}
	return missing, nil
}

func sortedPlatforms(m map[backends.Platform]ocispec.Descriptor) []backends.Platform {
	out := make([]backends.Platform, 0, len(m))
	for plat := range m {
		out = append(out, plat)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// mergeIndex builds p's version's index: base's entries of other artifact
// types kept first in their order, then the provider-target entries sorted
// by platform, committed ones replacing every base entry for their
// platform. base's annotations are kept, and AnnotationProvider names p.
func mergeIndex(base *ocispec.Index, added map[backends.Platform]ocispec.Descriptor, p backends.Provider) *ocispec.Index {
	idx := &ocispec.Index{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageIndex,
		ArtifactType: ArtifactTypeProvider,
		Manifests:    []ocispec.Descriptor{},
		Annotations:  map[string]string{},
	}
	type entry struct {
		plat string
		d    ocispec.Descriptor
	}
	var targets []entry
	if base != nil {
		maps.Copy(idx.Annotations, base.Annotations)
		for _, d := range base.Manifests {
			if d.ArtifactType != ArtifactTypeTarget || d.Platform == nil {
				idx.Manifests = append(idx.Manifests, d)
				continue
			}
			plat := backends.Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture}
			if _, replaced := added[plat]; replaced {
				continue
			}
			targets = append(targets, entry{plat.String(), d})
		}
	}
	for plat, d := range added {
		targets = append(targets, entry{plat.String(), d})
	}
	idx.Annotations[AnnotationProvider] = p.String()
	sort.SliceStable(targets, func(i, j int) bool { return targets[i].plat < targets[j].plat })
	for _, t := range targets {
		idx.Manifests = append(idx.Manifests, t.d)
	}
	return idx
}
