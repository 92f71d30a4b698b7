package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/singleflight"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/readers"
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
	locks map[localKey]*sync.Mutex
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
		locks:    map[localKey]*sync.Mutex{},
	}
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
	_ = s.f.Close() // discarded: removed below
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
	defer func() { _ = s.Abort() }() // removes the local spool only
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
		zh, err := hashing.ZipZH(s.path)
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
		}{readers.OnRead(f, func(n int64) { s.sent.Add(n) }), f}, nil
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
	actual, err := hashing.ZipZH(s.path)
	if err != nil {
		return s.errorf("%v", err)
	}
	if actual != stated {
		return &IntegrityError{Path: s.path, Stated: stated, Actual: actual, Refused: refused}
	}
	return nil
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
