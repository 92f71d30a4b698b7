package backends

import (
	"context"
	"errors"
	"io"

	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"golang.org/x/sync/errgroup"
)

// Sentinel errors. Backends wrap them with the place and the package.
var (
	// ErrNotFound: the place does not have the provider, version or package.
	ErrNotFound = errors.New("not found")
	// ErrNoCatalogue: the place cannot list its providers; the caller must
	// name them (selection flags or a lock file).
	ErrNoCatalogue = errors.New("this place cannot list its providers")
	// ErrUnauthorized: the place refused the credentials (or their absence).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrConflict: the destination holds a different archive for the package.
	ErrConflict = errors.New("conflict: the destination holds a different archive")
	// ErrUnpackedOnly: the place holds only an unpacked directory, so the
	// original zip cannot be reproduced byte for byte.
	ErrUnpackedOnly = errors.New("only an unpacked directory is present; the original release zip is needed")
	// ErrUsage: what the user asked for cannot be done as written (a place,
	// a template, a selection); the command line exits 2 for it.
	ErrUsage = errors.New("usage")
)

// Kind is a kind of place. The clients check each kind's archives against
// different hashes, so some operations (lock checks) depend on it.
type Kind string

// The kinds of place.
const (
	KindFS        Kind = "fs"
	KindNetMirror Kind = "net"
	KindRegistry  Kind = "registry"
	KindOCI       Kind = "oci"
	KindS3        Kind = "s3"
	KindBundle    Kind = "bundle"
	// KindRelease: a provider's release directory (goreleaser's dist/),
	// read-only.
	KindRelease Kind = "release"
)

// Reader is what every place offers: listing and opening packages.
type Reader interface {
	// String names the place in messages, as the user wrote it.
	String() string
	// Providers lists the providers the place holds, sorted. Places that
	// cannot list them return ErrNoCatalogue.
	Providers(ctx context.Context) ([]Provider, error)
	// Versions lists the versions the place holds for p, newest first.
	Versions(ctx context.Context, p Provider) ([]Version, error)
	// Archives lists the packages the place holds for p at v, sorted by
	// platform, with what the place states about each.
	Archives(ctx context.Context, p Provider, v Version) ([]Archive, error)
	// Open streams the archive's zip bytes. Readers of places that can
	// authenticate content (a registry's signature) do so before returning.
	Open(ctx context.Context, a Archive) (io.ReadCloser, error)
}

// Writer is the write capability of a place, detected by type assertion on a
// Reader. Read-only places (network mirrors, origin registries) lack it.
type Writer interface {
	Reader
	// Stage opens an invisible staging area for one package's zip. The caller
	// writes the bytes, checks them, then commits or aborts.
	Stage(ctx context.Context, pkg Package) (Staged, error)
	// Flush publishes index documents for p after its archives have landed.
	// Engines call it once per provider, not once per archive.
	Flush(ctx context.Context, p Provider) error
}

// ProviderChecker is implemented by writers that can hold only some sets
// of providers together: an OCI mirror whose repository template leaves
// out part of the provider address holds one value of that part. Sync
// calls it, through CheckProviders, with the providers a plan or a batch of
// jobs is about to write, before anything is written.
type ProviderChecker interface {
	// CheckProviders returns an error that wraps ErrUsage, naming what
	// the place cannot tell apart, when it cannot hold ps together with
	// the providers earlier calls accepted. It does no I/O.
	CheckProviders(ps []Provider) error
}

// CheckProviders asks r, when it is a ProviderChecker, whether it can hold
// ps; other places can hold any providers.
func CheckProviders(r Reader, ps []Provider) error {
	if c, ok := r.(ProviderChecker); ok && len(ps) > 0 {
		return c.CheckProviders(ps)
	}
	return nil
}

// ClientConfigurer is implemented by writers whose clients need telling
// how to install from them: an OCI mirror, which only OpenTofu's
// oci_mirror reads. ClientConfig returns the provider_installation block
// that installs ps from the place, and notes on anything that would stop
// it working (what `tfmirror push` prints). It does no I/O.
type ClientConfigurer interface {
	ClientConfig(ps []Provider) (block string, notes []string)
}

// Staged is one archive on its way into a place. Nothing of it is visible to
// readers of the place until Commit returns.
type Staged interface {
	io.Writer
	// Path is a local file holding the bytes written so far, for hashing.
	Path() string
	// Commit makes the archive visible, recording sums (which the caller has
	// verified). With force it replaces a different archive; without, it
	// returns ErrConflict.
	Commit(ctx context.Context, sums hashing.Sums, force bool) error
	// Abort discards the staged bytes. It is safe after Commit.
	Abort() error
}

// FileStager is implemented by writers that can take an archive from a
// local file as it is, without a staging copy: an OCI registry uploads the
// blob straight from the file a local source holds. The caller reads the
// file to hash and check it, writes nothing to the Staged, and commits.
type FileStager interface {
	StageFile(ctx context.Context, pkg Package, path string) (Staged, error)
}

// DigestChecker is implemented by a Staged whose Commit makes sure that
// what lands is exactly the archive the zh: it is given names, and that
// the file is that archive: an OCI registry computes the digest of every
// blob it receives and refuses one that differs, and where it holds the
// blob already (so nothing is sent), Commit hashes the file before a new
// manifest names it. A caller holding a zh: that evidence states may then
// commit it without reading the file first. Where ChecksDigest is true and
// the file's bytes differ from zh:, Commit fails with an error wrapping
// hashing.ErrHashMismatch that names the file and both hashes; only a
// package the destination lists with that very zh: already is left as it
// is, and its file unread (nothing lands).
type DigestChecker interface {
	ChecksDigest() bool
}

// SentCounter is implemented by a Staged whose Commit uploads the archive:
// Sent returns how many of its bytes the running upload has sent, safe to
// call from another goroutine while Commit runs.
type SentCounter interface {
	Sent() int64
}

// Warner is implemented by places that tolerate junk (stray files, bad
// names) and report it instead of failing.
type Warner interface {
	Warnings() []string
}

// Lister is implemented by places that can list every archive of a provider
// more cheaply than version by version. The slice returned is the
// caller's to change.
type Lister interface {
	AllArchives(ctx context.Context, p Provider) ([]Archive, error)
}

// UnsizedLister is implemented by places that list a provider's archives
// more cheaply without their sizes (each Size -1): a filesystem mirror then
// reads no zip's metadata. A plan needs no size of what its destination
// holds (ListUnsized).
type UnsizedLister interface {
	AllArchivesUnsized(ctx context.Context, p Provider) ([]Archive, error)
}

// VersionsLister is implemented by places that list several versions'
// archives faster together than one after another (network places, which
// fetch them concurrently). ListArchives prefers it to Lister, which would
// read every version when only a few are wanted.
type VersionsLister interface {
	ArchivesAt(ctx context.Context, p Provider, versions []Version) ([]Archive, error)
}

// SignedHashLister is implemented by places that vouch for the hashes of
// every platform of a provider version at once: an origin registry's signed
// SHA256SUMS lists each release zip's SHA-256. The clients record all of
// them (as zh:) when they lock from such a place, so that a lock written on
// one platform lets init check the package on any other.
type SignedHashLister interface {
	SignedHashes(ctx context.Context, p Provider, v Version) ([]hashing.Hash, error)
}

// ProvenanceReader is implemented by places that keep, or can fetch, the
// provenance of a provider version: the signed SHA256SUMS, its signature
// and the signing key (package provenance). An origin registry has it for
// every signed release; a mirror tfmirror wrote keeps what its source had.
type ProvenanceReader interface {
	// Provenance returns what the place keeps for p at v, as stored: the
	// caller checks the signature (Provenance.Check). A version without
	// provenance is ErrNotFound.
	Provenance(ctx context.Context, p Provider, v Version) (*provenance.Provenance, error)
}

// ProvenanceLister is implemented by ProvenanceReaders that can say at
// once which versions of a provider they keep provenance for (one
// directory listing), so that a plan of thousands of versions asks only
// about those.
type ProvenanceLister interface {
	// ProvenanceVersions returns the canonical versions of p whose
	// provenance the place keeps (present as a file: Provenance still
	// checks it).
	ProvenanceVersions(ctx context.Context, p Provider) (map[string]bool, error)
}

// ProvenanceWriter is implemented by writable places that keep provenance
// beside the archives, in a form the clients ignore (a sidecar file, an
// OCI referrer). Sync writes a version's provenance once its archives have
// landed and the index documents list them (after Flush).
type ProvenanceWriter interface {
	Writer
	ProvenanceReader
	// WriteProvenance stores pr as p's provenance at v, replacing what
	// the place kept for v. The caller has checked pr's signature and
	// that it authenticates the archives that landed.
	WriteProvenance(ctx context.Context, p Provider, v Version, pr *provenance.Provenance) error
}

// StatedHashLister is implemented by places that state the hashes of every
// platform's package of a provider version without any archive being
// downloaded: an OpenTofu 1.12 registry's packages field (h1: and zh:,
// the zh: checked against the signed SHA256SUMS), an OCI mirror's layer
// digests (zh:), a network mirror's version document. A lock written from
// them records what they state (an h1: only where one is stated), which
// costs a few small requests per version instead of every archive.
type StatedHashLister interface {
	// StatedHashes returns the hashes the place states for each platform's
	// package of p at v. A platform it lacks, or holds without stating a
	// hash, is absent; nil means the place states nothing for v this way
	// (a registry without the packages field), and the caller hashes the
	// archives instead.
	StatedHashes(ctx context.Context, p Provider, v Version) (map[Platform][]hashing.Hash, error)
}

// StatedInListing gives a StatedHashLister's answer for places whose
// Archives listing reads only small documents (an OCI index and its
// manifests, a network mirror's version document): the h1: and zh: each
// listed archive's evidence states.
func StatedInListing(as []Archive) map[Platform][]hashing.Hash {
	out := map[Platform][]hashing.Hash{}
	for _, a := range as {
		for _, h := range a.Hashes() {
			if h.Known() {
				out[a.Platform] = append(out[a.Platform], h)
			}
		}
	}
	return out
}

// NoteKeeper is implemented by writable places that can keep a small
// document of tfmirror's own beside what they hold, safely among several
// writers (a pull-through mirror's record of when it first saw each
// version upstream). UpdateNote reads the note called name (nil when there
// is none), gives it to update, and writes what update returns; when
// another writer changed the note meanwhile, it reads it again and calls
// update again. A note's name is KIND/HOST/NAMESPACE/TYPE/... (or
// KIND/HOST/NAMESPACE/TYPE.json): a place that keeps things per provider
// (an OCI mirror, a repository each) keeps it with that provider.
type NoteKeeper interface {
	UpdateNote(ctx context.Context, name string, update func(old []byte) ([]byte, error)) error
}

// LocalPather is implemented by places whose archives are local files or
// directories, which can be hashed in place instead of copied.
type LocalPather interface {
	LocalPath(a Archive) string
}

// ListArchives returns p's archives at the given versions, using
// VersionsLister or Lister when the place has them.
func ListArchives(ctx context.Context, r Reader, p Provider, versions []Version) ([]Archive, error) {
	if l, ok := r.(VersionsLister); ok {
		return l.ArchivesAt(ctx, p, versions)
	}
	if l, ok := r.(Lister); ok {
		all, err := l.AllArchives(ctx, p)
		if err != nil {
			return nil, err
		}
		return atVersions(all, versions), nil
	}
	var out []Archive
	for _, v := range versions {
		as, err := r.Archives(ctx, p, v)
		if err != nil {
			return nil, err
		}
		out = append(out, as...)
	}
	return out, nil
}

// ArchivesConcurrently lists each of versions' archives through list, at
// most limit at a time, in the order of versions; the first error stops
// it. Network places build their ArchivesAt (VersionsLister) on it.
func ArchivesConcurrently(ctx context.Context, versions []Version, limit int, list func(ctx context.Context, v Version) ([]Archive, error)) ([]Archive, error) {
	per := make([][]Archive, len(versions))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i, v := range versions {
		g.Go(func() error {
			as, err := list(gctx, v)
			per[i] = as
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []Archive
	for _, as := range per {
		out = append(out, as...)
	}
	return out, nil
}

// ListUnsized is ListArchives where the archives' sizes do not matter: a
// place that lists more cheaply without them (UnsizedLister) leaves them
// out.
func ListUnsized(ctx context.Context, r Reader, p Provider, versions []Version) ([]Archive, error) {
	if l, ok := r.(UnsizedLister); ok {
		if _, some := r.(VersionsLister); !some {
			all, err := l.AllArchivesUnsized(ctx, p)
			if err != nil {
				return nil, err
			}
			return atVersions(all, versions), nil
		}
	}
	return ListArchives(ctx, r, p, versions)
}

// atVersions keeps the archives of all (a listing of its caller's own) at
// versions.
func atVersions(all []Archive, versions []Version) []Archive {
	want := make(map[string]bool, len(versions))
	for _, v := range versions {
		want[v.String()] = true
	}
	out := all[:0]
	var key VersionKey
	for _, a := range all {
		if want[key.Of(a.Version)] {
			out = append(out, a)
		}
	}
	return out
}

// HashingReader is implemented by archive streams that compute the zip's
// SHA-256 as they are read (to authenticate it against a signature), so
// that callers need not hash the same bytes a second time.
type HashingReader interface {
	io.Reader
	// ZipHash returns the zh: hash of the bytes read, once the stream has
	// been read to its end; ok is false before that.
	ZipHash() (h hashing.Hash, ok bool)
}

// H1Reader is implemented by archive streams whose zip's h1: is computed
// elsewhere once they have ended (a pull-through's fetch computes it as it
// lands the zip): a server that checks the stream against a stated h1:
// need not spool and hash the same bytes again for every client.
type H1Reader interface {
	io.Reader
	// ZipH1 waits, once the stream has been read to its end, until the
	// h1: is known: "" where it will not be, an error where the zip
	// turned out not to be the one its place states.
	ZipH1() (hashing.Hash, error)
}

// SizedReader is implemented by archive streams that know how many bytes
// they will deliver before the first is read (an HTTP Content-Length),
// where the listing did not say, so progress can show a percentage.
type SizedReader interface {
	io.Reader
	// StreamSize is the number of bytes the stream will deliver, or -1.
	StreamSize() int64
}

// Problem is something wrong with a place's own records, found by Audit.
type Problem struct {
	Package Package // Version is nil when the problem is not about one package
	Missing bool    // an archive the place's index lists is absent
	Detail  string
}

// Auditor is implemented by places that can check their index documents
// against the archives they hold.
type Auditor interface {
	Audit(ctx context.Context, p Provider) []Problem
}

// Remover is the delete capability of a writable place, detected by type
// assertion: prune uses it. Places whose storage cannot delete do not
// implement it, or say so in Removal.Notes.
type Remover interface {
	Writer
	// Remove deletes archives of p, as the place listed them (Archives):
	// it first rewrites the place's index documents without them, then
	// deletes their content, so that at no instant does an index list an
	// archive that is gone. It holds the place's write lock for p, as
	// commits and flushes do, and leaves (in Removal.Left) an archive that
	// changed since it was listed: another writer replaced or re-added it.
	Remove(ctx context.Context, p Provider, as []Archive) (Removal, error)
}

// Removal is what a Remove did.
type Removal struct {
	// Removed are the packages no index lists any more and whose content
	// is gone (or, where the place cannot delete, unreachable: see Notes).
	Removed []Package
	// Left are the packages that were asked for and are still there.
	Left []Left
	// Notes say what the place could not do although the packages are
	// gone from its indexes (a registry that refuses deletes).
	Notes []string
}

// Left is a package Remove did not remove, and why.
type Left struct {
	Package Package
	Reason  string
}
