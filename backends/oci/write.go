package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// ArtifactTypePackage is the artifactType tfmirror sets on the zip layer, as
// OpenTofu's own fixtures do (OpenTofu does not check it).
const ArtifactTypePackage = "application/vnd.opentofu.providerpkg"

// writeState is what a Mirror remembers between Commit and Flush.
type writeState struct {
	mu       sync.Mutex
	versions map[versionKey]*pendingVersion
	owners   map[Repository]backends.Provider
	config   map[Repository]bool // the empty config blob is known to be there
	// locks are the process's turns at each repository's lock.
	locks map[Repository]*sync.Mutex
	// configs pushes a repository's empty config once for all the jobs
	// that need it at the same moment.
	configs singleflight.Group
	// accepted are the providers CheckProviders accepted.
	accepted []backends.Provider
}

func newWriteState() writeState {
	return writeState{
		versions: map[versionKey]*pendingVersion{},
		owners:   map[Repository]backends.Provider{},
		config:   map[Repository]bool{},
		locks:    map[Repository]*sync.Mutex{},
	}
}

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

// Outcome says what a Commit did.
type Outcome int

const (
	// Uploaded: the zip was sent and a manifest pushed for the platform.
	Uploaded Outcome = iota + 1
	// BlobExisted: the registry already had the zip's blob (another
	// version or repository mount shares it); only manifests were pushed.
	BlobExisted
	// Unchanged: the registry already lists this very zip for the
	// platform; nothing was sent.
	Unchanged
)

func (o Outcome) String() string {
	switch o {
	case Uploaded:
		return "uploaded"
	case BlobExisted:
		return "blob existed"
	case Unchanged:
		return "unchanged"
	}
	return "pending"
}

// Stage starts an archive on its way into the registry: the zip is written
// to a local temp file (and hashed on the way), then pushed by Commit.
func (m *Mirror) Stage(ctx context.Context, pkg backends.Package) (backends.Staged, error) {
	addr, err := m.stageRepository(ctx, pkg)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "tfmirror-oci-*.zip")
	if err != nil {
		return nil, fmt.Errorf("oci mirror %s: %s: %w", m.name, pkg, err)
	}
	return &Staged{m: m, pkg: pkg, addr: addr, f: f, path: f.Name()}, nil
}

// stageRepository is the repository pkg goes into, claimed for its
// provider (no other provider's archives in it).
func (m *Mirror) stageRepository(ctx context.Context, pkg backends.Package) (Repository, error) {
	if err := ctx.Err(); err != nil {
		return Repository{}, err
	}
	addr, err := m.Repository(pkg.Provider)
	if err != nil {
		return Repository{}, err
	}
	return addr, m.claim(addr, pkg.Provider)
}

// StageFile starts an archive on its way into the registry from a local
// file as it is: Commit uploads the blob straight from path, with no copy.
// The caller reads the file to hash it and writes nothing to the Staged.
func (m *Mirror) StageFile(ctx context.Context, pkg backends.Package, path string) (backends.Staged, error) {
	addr, err := m.stageRepository(ctx, pkg)
	if err != nil {
		return nil, err
	}
	return &Staged{m: m, pkg: pkg, addr: addr, path: path}, nil
}

// claim records that addr holds p, refusing a second provider in the same
// repository: their version tags would overwrite each other.
func (m *Mirror) claim(addr Repository, p backends.Provider) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if other, ok := m.w.owners[addr]; ok && other != p {
		return fmt.Errorf("oci mirror %s: %s and %s both map to repository %s; their tags would collide: make the template %q use ${hostname}, ${namespace} and ${type}, each as a path segment of its own", m.name, other, p, addr, m.tmpl)
	}
	m.w.owners[addr] = p
	return nil
}

// Staged is one archive on its way into the registry.
type Staged struct {
	m       *Mirror
	pkg     backends.Package
	addr    Repository
	f       *os.File // the temp file written; nil when staged from a file
	path    string   // the zip: the temp file, or the file staged as it is
	n       int64
	done    bool
	sent    atomic.Int64
	outcome Outcome
}

var (
	_ backends.Staged        = (*Staged)(nil)
	_ backends.FileStager    = (*Mirror)(nil)
	_ backends.DigestChecker = (*Staged)(nil)
	_ backends.SentCounter   = (*Staged)(nil)
)

// ChecksDigest is true for a zip staged from a file: its blob is pushed
// under the digest Commit is given, which the registry checks as it
// receives the bytes (a blob it already holds under that digest is that
// zip), so a zh: evidence states needs no read of the file before.
func (s *Staged) ChecksDigest() bool { return s.f == nil }

func (s *Staged) Write(p []byte) (int, error) {
	if s.f == nil {
		return 0, s.errorf("staged from %s: nothing is written to it", s.path)
	}
	n, err := s.f.Write(p)
	s.n += int64(n)
	return n, err
}

// Path is the local file holding the zip.
func (s *Staged) Path() string { return s.path }

// Sent returns how many zip bytes Commit has uploaded so far; safe to call
// from another goroutine while Commit runs.
func (s *Staged) Sent() int64 { return s.sent.Load() }

// Outcome says what Commit did; valid after it returned nil.
func (s *Staged) Outcome() Outcome { return s.outcome }

// Abort discards the staged zip.
func (s *Staged) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	if s.f == nil {
		return nil // the caller's file
	}
	s.f.Close()
	return os.Remove(s.path)
}

// errorf formats an error about the staged package; %w works as in
// fmt.Errorf.
func (s *Staged) errorf(format string, args ...any) error {
	return fmt.Errorf("oci mirror %s: repository %s: %s: "+format, append([]any{s.m.name, s.addr, s.pkg}, args...)...)
}

// Commit pushes the zip as a blob (unless the registry has it), the empty
// config, and an image manifest for the platform; Flush then pushes the
// version's index. A platform the registry already lists with a different
// zip is refused with backends.ErrConflict unless force.
func (s *Staged) Commit(ctx context.Context, sums hashing.Sums, force bool) (err error) {
	defer s.Abort()
	if s.done {
		return s.errorf("commit after abort")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	layer, err := s.layer(sums)
	if err != nil {
		return err
	}
	zh, _ := zipHash(layer.Digest)

	m := s.m
	r, _, err := m.repo(s.pkg.Provider)
	if err != nil {
		return err
	}
	pv := m.w.version(s.pkg, s.addr)
	existing, err := pv.existingLayer(ctx, m, r, s.pkg, force)
	if err != nil {
		return err
	}
	if existing != "" {
		if existing == layer.Digest {
			s.outcome = Unchanged
			return nil
		}
		if !force {
			oldZH, _ := zipHash(existing)
			if oldZH == "" {
				oldZH = hashing.Hash(existing.String())
			}
			return s.errorf("%w (has %s, incoming %s)", backends.ErrConflict, oldZH, zh)
		}
	}

	// The config blob goes up beside the zip, not after it: the manifest
	// needs both. Where both fail, the zip's error is the one told.
	cfg := make(chan error, 1)
	go func() { cfg <- m.ensureConfig(ctx, r, s.addr, s.pkg.String()) }()
	err = s.uploadLayer(ctx, r, layer)
	if cerr := <-cfg; err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	desc, err := s.pushManifest(ctx, r, layer)
	if err != nil {
		return err
	}
	pv.add(s.pkg.Platform, desc, layer.Digest)
	return nil
}

// layer describes the zip's blob: its digest is the zh: the caller
// computed and verified as the bytes went by, or the one evidence states
// (the registry computes it again as it receives them, and refuses a blob
// that differs: checkFile); only a caller that has none makes it read the
// file here. The digest cannot be learnt while uploading instead: oras-go's
// Blobs().Push is a monolithic upload whose PUT names the digest in its URL
// before the body (it offers no PATCH-then-PUT upload), and the checks
// before any upload (the platform's zip already listed, the blob already
// there) need it too.
func (s *Staged) layer(sums hashing.Sums) (ocispec.Descriptor, error) {
	size := s.n
	if s.f != nil {
		if err := s.f.Close(); err != nil {
			return ocispec.Descriptor{}, s.errorf("%v", err)
		}
	} else {
		fi, err := os.Stat(s.path)
		if err != nil {
			return ocispec.Descriptor{}, s.errorf("%v", err)
		}
		size = fi.Size()
	}
	if sums.ZH == "" {
		zh, err := hashing.HashZipFile(s.path)
		if err != nil {
			return ocispec.Descriptor{}, s.errorf("%v", err)
		}
		sums.ZH = zh
	}
	return ocispec.Descriptor{
		MediaType:    MediaTypeZip,
		ArtifactType: ArtifactTypePackage,
		Digest:       digest.NewDigestFromEncoded(digest.SHA256, sums.ZH.Value()),
		Size:         size,
		Annotations:  map[string]string{ocispec.AnnotationTitle: s.pkg.Filename()},
	}, nil
}

// uploadLayer pushes the zip's blob unless the registry has it, and sets
// the outcome.
func (s *Staged) uploadLayer(ctx context.Context, r *remote.Repository, layer ocispec.Descriptor) error {
	s.outcome = Uploaded
	ok, err := r.Blobs().Exists(ctx, layer)
	switch {
	case err != nil:
		return classify(err, "check blob "+layer.Digest.String(), s.m.name, s.addr, s.pkg.String())
	case ok && s.f == nil:
		// Nothing is sent, so the registry checks nothing: a zip staged
		// from a file under a digest its caller may only have been told
		// (a SHA256SUMS line, a mirror's index) is hashed before a
		// manifest names the blob, or a wrong statement would give this
		// package the zip the registry holds (another version's).
		if err := s.checkFile(layer, false); err != nil {
			var ie *IntegrityError
			if errors.As(err, &ie) {
				return s.errorf("%w", backends.Permanent(ie))
			}
			return err
		}
		fallthrough
	case ok:
		s.outcome = BlobExisted
		return nil
	}
	return s.pushBlob(ctx, r, layer)
}

func (s *Staged) pushBlob(ctx context.Context, r *remote.Repository, layer ocispec.Descriptor) error {
	open := func() (io.ReadCloser, error) {
		s.sent.Store(0)
		f, err := os.Open(s.path)
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{&countingReader{r: f, n: &s.sent}, f}, nil
	}
	err := pushBlob(ctx, r, layer, open, func(desc ocispec.Descriptor) error { return s.checkFile(desc, true) })
	var ie *IntegrityError
	if errors.As(err, &ie) {
		return s.errorf("%w", backends.Permanent(ie))
	}
	if err != nil {
		return classify(err, "push blob "+layer.Digest.String(), s.m.name, s.addr, s.pkg.String())
	}
	return nil
}

// IntegrityError is a zip whose bytes are not the ones the zh: it was
// pushed under names (the digest a source stated, or one computed before
// the file changed): the registry refused the blob (DIGEST_INVALID) and
// the file, hashed then, has another SHA-256.
type IntegrityError struct {
	Path           string
	Stated, Actual hashing.Hash
	// Refused: the registry refused the upload; otherwise it holds a
	// blob under the stated digest, which the file is not.
	Refused bool
}

func (e *IntegrityError) Error() string {
	how := "the registry holds another zip under that digest"
	if e.Refused {
		how = "the registry refused the upload, DIGEST_INVALID"
	}
	return fmt.Sprintf("integrity: %s is not the archive its source states: the source states %s, the file's SHA-256 is %s (%s); nothing was pushed for it: replace the file, or the statement (SHA256SUMS, the mirror's index)",
		e.Path, e.Stated, e.Actual, how)
}

// Unwrap makes an IntegrityError a hashing.ErrHashMismatch.
func (e *IntegrityError) Unwrap() error { return hashing.ErrHashMismatch }

// checkFile hashes the file and returns an IntegrityError when its bytes
// are not desc's digest. It is asked when the registry answers
// DIGEST_INVALID to the zip's blob (refused), which it does to a
// concurrent push as well as to bytes that are not the digest's, and
// before a blob the registry holds is taken for a zip staged from a file.
func (s *Staged) checkFile(desc ocispec.Descriptor, refused bool) error {
	stated, _ := zipHash(desc.Digest)
	actual, err := hashing.HashZipFile(s.path)
	if err != nil {
		return s.errorf("%v", err)
	}
	if actual != stated {
		return &IntegrityError{Path: s.path, Stated: stated, Actual: actual, Refused: refused}
	}
	return nil
}

// pushBlob pushes a blob, again while the registry answers as it does when
// another push of the same blob is under way (isPushRace), unless it then
// turns out to hold the blob. Where the answer is DIGEST_INVALID and
// invalid is given, invalid says first whether the bytes are the
// digest's: its error ends the pushes.
func pushBlob(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor, open func() (io.ReadCloser, error), invalid func(ocispec.Descriptor) error) error {
	return retryRace(ctx, func() error {
		rc, err := open()
		if err != nil {
			return err
		}
		defer rc.Close()
		err = r.Blobs().Push(ctx, desc, rc)
		if errors.Is(err, errdef.ErrAlreadyExists) {
			return nil
		}
		if invalid != nil && isDigestInvalid(err) {
			if ierr := invalid(desc); ierr != nil {
				return ierr
			}
		}
		if err != nil && isPushRace(err) {
			if ok, xerr := r.Blobs().Exists(ctx, desc); xerr == nil && ok {
				return nil
			}
		}
		return err
	})
}

// Retries of a push that met another push of the same content: a few,
// soon, since the other push's link is written within moments.
const (
	raceAttempts = 6
	raceBackoff  = 50 * time.Millisecond
)

// retryRace runs push until it succeeds, fails otherwise than by meeting a
// concurrent push (isPushRace), or has been tried raceAttempts times.
func retryRace(ctx context.Context, push func() error) error {
	for attempt := 1; ; attempt++ {
		err := push()
		if err == nil || !isPushRace(err) || attempt == raceAttempts {
			return err
		}
		if err := sleepJittered(ctx, raceBackoff<<(attempt-1)); err != nil {
			return err
		}
	}
}

// sleepJittered waits between d/2 and 3d/2, so that writers that met
// once do not meet again in lockstep.
func sleepJittered(ctx context.Context, d time.Duration) error {
	return backends.Sleep(ctx, d/2+rand.N(d))
}

// pushManifest pushes the platform's image manifest: the empty config, the
// zip as the single archive/zip layer, artifactType provider-target.
func (s *Staged) pushManifest(ctx context.Context, r *remote.Repository, layer ocispec.Descriptor) (ocispec.Descriptor, error) {
	man := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeTarget,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers:       []ocispec.Descriptor{layer},
	}
	b, err := json.Marshal(man)
	if err != nil {
		return ocispec.Descriptor{}, s.errorf("%v", err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b)
	// The registry checks that the layer and config are there; another
	// process pushing the same config at this moment can make it answer
	// that they are not.
	if err := retryRace(ctx, func() error { return r.Manifests().Push(ctx, desc, bytes.NewReader(b)) }); err != nil {
		return ocispec.Descriptor{}, classify(err, "push manifest "+desc.Digest.String(), s.m.name, s.addr, s.pkg.String())
	}
	return ocispec.Descriptor{
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeTarget,
		Digest:       desc.Digest,
		Size:         desc.Size,
		Platform:     &ocispec.Platform{OS: s.pkg.Platform.OS, Architecture: s.pkg.Platform.Arch},
	}, nil
}

// ensureConfig pushes the empty config blob "{}" once per repository: the
// jobs that need it at the same moment wait for one push. Every platform
// manifest names it, and distribution 2.8 answers a manifest naming a blob
// whose link another push is rewriting as if the blob were missing.
func (m *Mirror) ensureConfig(ctx context.Context, r *remote.Repository, addr Repository, label string) error {
	for {
		m.w.mu.Lock()
		known := m.w.config[addr]
		m.w.mu.Unlock()
		if known {
			return nil
		}
		_, err, _ := m.w.configs.Do(addr.String(), func() (any, error) {
			cfg := ocispec.DescriptorEmptyJSON
			ok, err := r.Blobs().Exists(ctx, cfg)
			if err != nil {
				return nil, classify(err, "check config blob", m.name, addr, label)
			}
			if !ok {
				err := pushBlob(ctx, r, cfg, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(cfg.Data)), nil }, nil)
				if err != nil {
					return nil, classify(err, "push config blob", m.name, addr, label)
				}
			}
			m.w.mu.Lock()
			m.w.config[addr] = true
			m.w.mu.Unlock()
			return nil, nil
		})
		// The push ran under the job that started it; when that job was
		// cancelled, another job still wants the config.
		if err != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			continue
		}
		return err
	}
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
	g.Wait()
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

// indexAttempts bounds the pushes of one version's index while writers
// that do not take the lock keep moving its tag.
const indexAttempts = 8

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
		if attempt == indexAttempts {
			return fmt.Errorf("oci mirror %s: repository %s: %s: tag %q: writers that do not take the lock (tag %q: other tools, or tfmirror before it) replaced the index %d times, each time without %s: run again once they are done",
				m.name, pv.addr, label, pv.tag, LockTag, attempt, platformList(missing))
		}
		if err := sleepJittered(ctx, raceBackoff<<(attempt-1)); err != nil {
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
		case !isNotFound(err) || attempt == raceAttempts:
			return nil, classify(err, "fetch index "+desc.Digest.String(), m.name, pv.addr, label)
		}
		if err := sleepJittered(ctx, raceBackoff<<(attempt-1)); err != nil {
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

func platformList(ps []backends.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
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

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
