package lockcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// A lock file names hashes, not platforms. `terraform providers lock`
// records, from an origin registry, the h1: of each platform it was asked
// for and the zh: of every line of the release's signed SHA256SUMS, which
// also lists files that are no package (HashiCorp's
// terraform-provider-NAME_VERSION_manifest.json). A locked hash proves that
// a package is missing only where it can be tied to a package: one rule,
// for `check` on every kind of place and for the UI's lock view.
//
//   - A hash an archive states or hashes to is that archive's platform's
//     (an archive of any place: the one checked, a compared mirror, the
//     provider's origin registry).
//   - A zh: that a signed SHA256SUMS (kept as provenance, or the origin
//     registry's) lists for terraform-provider-TYPE_VERSION_OS_ARCH.zip is
//     OS_ARCH's package.
//   - An h1: that matches nothing above is still a package (h1: is only
//     ever a package's hash), of a platform no place holds: init on that
//     platform would fail, though which platform cannot be told.
//   - Any other hash is untied: the zh: of a file that is no package, or
//     of nothing any place knows. It is reported, never a gap.
//   - A malformed h1: or zh: (bad base64, 63 hex digits) is no package's:
//     it is reported as malformed, with where the file states it, never a
//     gap (the clients pass over it).
//
// The platforms a lock is about are those its hashes are tied to, or,
// where --platform names platforms, those. One rule for check, sync
// --from/--lock and the lock view: a platform the lock is not about is
// never a failure, a mismatch or a job. A platform whose locked hashes
// are all zh: that a signed SHA256SUMS lists (however else they are tied:
// an archive stating it too) is assumed: a registry lock carries the
// signed zh: of every platform, so it cannot say which platforms its team
// uses; messages name the assumed ones and how to narrow (--platform).

// HashTie is what a locked hash is known to be the hash of.
type HashTie struct {
	// Platform is the package's platform; zero for a file that is no
	// package.
	Platform backends.Platform
	// File is the name a signed SHA256SUMS gives the file, when one does.
	File string
	// Signed: tied only by a signed SHA256SUMS, no archive.
	Signed bool
}

// TieIndex gathers, for one provider version, what each hash is the hash
// of: from archives and from signed SHA256SUMS documents. The zero value
// is not usable: use NewTieIndex.
type TieIndex struct {
	p     backends.Provider
	v     backends.Version
	by    map[hashing.Hash]HashTie
	plats map[backends.Platform]bool
	// signed are the zh: a signed SHA256SUMS lists for a package, also
	// where an archive ties them: what a registry lock holds for every
	// platform, whether or not the team runs init there.
	signed map[hashing.Hash]bool
}

// NewTieIndex is an empty index for p at v.
func NewTieIndex(p backends.Provider, v backends.Version) *TieIndex {
	return &TieIndex{p: p, v: v, by: map[hashing.Hash]HashTie{}, plats: map[backends.Platform]bool{}, signed: map[hashing.Hash]bool{}}
}

// AddArchive ties the hashes a's evidence states, and more (what a's bytes
// hash to), to a's platform. Archives of other provider versions are
// ignored.
func (t *TieIndex) AddArchive(a backends.Archive, more ...hashing.Hash) {
	if a.Provider != t.p || a.Version.String() != t.v.String() {
		return
	}
	t.plats[a.Platform] = true
	for _, h := range append(a.Hashes(), more...) {
		if h.Known() {
			t.by[h] = HashTie{Platform: a.Platform}
		}
	}
}

// AddSums ties the zh: of each line of a signed SHA256SUMS: a line naming
// terraform-provider-TYPE_VERSION_OS_ARCH.zip to OS_ARCH, any other line to
// its file, which is no package. A document that cannot be read ties
// nothing. A tie already made from an archive stays.
func (t *TieIndex) AddSums(doc []byte) error {
	lines, err := provenance.ParseSums(doc)
	if err != nil {
		return err
	}
	prefix := strings.ToLower("terraform-provider-" + t.p.Type + "_" + t.v.String() + "_")
	for name, sum := range lines {
		h := hashing.Hash("zh:" + sum)
		tie := HashTie{File: name, Signed: true}
		if rest, ok := strings.CutPrefix(strings.ToLower(name), prefix); ok {
			if osArch, ok := strings.CutSuffix(rest, ".zip"); ok {
				if plat, err := backends.ParsePlatform(osArch); err == nil {
					tie.Platform = plat
					t.signed[h] = true
				}
			}
		}
		if _, ok := t.by[h]; !ok {
			t.by[h] = tie
		}
	}
	return nil
}

// AddPlace ties what r holds of the index's provider version: its archives'
// stated hashes, and the signed SHA256SUMS it keeps (provenance) or, for
// an origin registry, signs the release with. A place that holds nothing
// of the version ties nothing; a provenance that does not check ties
// nothing and is returned as the error, after the archives were added.
// It returns the archives r holds of the version.
func (t *TieIndex) AddPlace(ctx context.Context, r backends.Reader, opts provenance.Options) ([]backends.Archive, error) {
	as, err := r.Archives(ctx, t.p, t.v)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, err
	}
	for _, a := range as {
		t.AddArchive(a)
	}
	if len(as) == 0 {
		return nil, nil // an origin registry would only say so more slowly
	}
	signed, err := sync.ReadProvenance(ctx, r, t.p, t.v, opts)
	if err != nil || signed == nil {
		return as, err
	}
	return as, t.AddSums(signed.Provenance.SHA256SUMS)
}

// PlatformOf is the platform h is tied to, where it is tied to one.
func (t *TieIndex) PlatformOf(h hashing.Hash) (backends.Platform, bool) {
	tie, ok := t.by[h]
	return tie.Platform, ok && tie.Platform != (backends.Platform{})
}

// UntiedHash is a locked hash no package is known for.
type UntiedHash struct {
	Hash hashing.Hash
	// File names the file a signed SHA256SUMS lists under it, when one
	// does: a file of the release that is no package.
	File string
}

// Why says what the hash is, for messages.
func (u UntiedHash) Why() string {
	switch {
	case u.File != "":
		return fmt.Sprintf("%s of %s, a file of the release that is no package", u.Hash.Short(), u.File)
	case u.Hash.Scheme() == hashing.SchemeH1:
		return u.Hash.Short() + ", the h1: of a package no place holds (its platform cannot be told)"
	default:
		return u.Hash.Short() + ", which no archive and no signed SHA256SUMS names"
	}
}

// LockTies is a lock entry's hashes tied to platforms.
type LockTies struct {
	Provider backends.Provider
	Version  backends.Version
	// Platforms are the platforms a locked hash is tied to, sorted: the
	// platforms the lock covers, where init must find a package.
	Platforms []backends.Platform
	// Unplaced are the locked h1: hashes tied to no platform: each is a
	// package of a platform no place holds.
	Unplaced []UntiedHash
	// Untied are the other locked hashes tied to no package: never a gap.
	Untied []UntiedHash
	// Assumed are the platforms of Platforms whose locked hashes are all
	// zh: that a signed SHA256SUMS lists: the lock may not be about them
	// (a registry lock carries every platform's), so they are assumed.
	Assumed []backends.Platform
	// H1 are the platforms of Platforms a locked h1: is tied to.
	H1 []backends.Platform
	// Malformed are the locked h1: and zh: hashes that are not of their
	// scheme's form: no package's, never a gap.
	Malformed []hashing.Hash
}

// About is the platforms the lock is about: named, where --platform
// names some, else those its hashes are tied to.
func (lt LockTies) About(named []backends.Platform) []backends.Platform {
	if len(named) > 0 {
		return named
	}
	return lt.Platforms
}

// AssumedNote says, for messages, which platforms were assumed and how to
// narrow them, or "" when none were (AssumedNote).
func (lt LockTies) AssumedNote() string {
	return AssumedNote(lt.Assumed)
}

// Tie ties l's h1: and zh: hashes with what the index holds.
func (t *TieIndex) Tie(l sync.Locked) LockTies {
	out := LockTies{Provider: t.p, Version: t.v}
	seen := map[backends.Platform]bool{}
	signedOnly := map[backends.Platform]bool{}
	for _, h := range l.Hashes {
		if !h.Known() {
			continue
		}
		tie, ok := t.by[h]
		switch {
		case malformed(h):
			out.Malformed = append(out.Malformed, h)
		case ok && tie.Platform != (backends.Platform{}):
			if !seen[tie.Platform] {
				seen[tie.Platform] = true
				signedOnly[tie.Platform] = true
				out.Platforms = append(out.Platforms, tie.Platform)
			}
			if h.Scheme() == hashing.SchemeH1 && !slices.Contains(out.H1, tie.Platform) {
				out.H1 = append(out.H1, tie.Platform)
			}
			// Assumed while every locked hash of the platform is a zh:
			// the signed SHA256SUMS lists, however else it is tied.
			signedOnly[tie.Platform] = signedOnly[tie.Platform] && (tie.Signed || t.signed[h])
		case h.Scheme() == hashing.SchemeH1:
			out.Unplaced = append(out.Unplaced, UntiedHash{Hash: h})
		default:
			out.Untied = append(out.Untied, UntiedHash{Hash: h, File: tie.File})
		}
	}
	backends.SortPlatforms(out.Platforms)
	for _, p := range out.Platforms {
		if signedOnly[p] {
			out.Assumed = append(out.Assumed, p)
		}
	}
	return out
}

// malformed reports whether h, an h1: or zh:, is not of its scheme's form.
func malformed(h hashing.Hash) bool {
	_, err := hashing.ParseHash(string(h))
	return err != nil
}

// TieLock ties l (p's lock entry) with what the places hold of p at the
// locked version: their archives and the signed SHA256SUMS they keep or
// sign with. A place that cannot be read ties nothing; its error is
// returned beside what the others tied.
func TieLock(ctx context.Context, p backends.Provider, l sync.Locked, places []backends.Reader, opts provenance.Options) (LockTies, []error) {
	t := NewTieIndex(p, l.Version)
	var errs []error
	for _, r := range places {
		if _, err := t.AddPlace(ctx, r, opts); err != nil {
			if ctx.Err() != nil {
				return LockTies{Provider: p, Version: l.Version}, []error{ctx.Err()}
			}
			errs = append(errs, fmt.Errorf("%s: %w", r, err))
		}
	}
	return t.Tie(l), errs
}

// UntiedNote says, for messages, which of a lock's hashes are tied to no
// package, or "" when all are.
func UntiedNote(us []UntiedHash) string {
	if len(us) == 0 {
		return ""
	}
	var parts []string
	for _, u := range us[:min(len(us), 3)] {
		parts = append(parts, u.Why())
	}
	if len(us) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", len(us)-3))
	}
	return strings.Join(parts, "; ")
}

// AddHashed ties what each archive of as (r's) hashes to, for those whose
// evidence states no h1: (a filesystem mirror without index documents): it
// reads them, so it is for places that can, and for when the stated hashes
// left some locked hash untied.
func (t *TieIndex) AddHashed(ctx context.Context, r backends.Reader, as []backends.Archive, opts hashing.Options) error {
	for _, a := range as {
		stated := false
		for _, h := range a.Hashes() {
			stated = stated || h.Scheme() == hashing.SchemeH1
		}
		if stated {
			continue
		}
		ls, err := PackageLockHashes(ctx, r, a, opts)
		if err != nil {
			return err
		}
		t.AddArchive(a, append(ls.Hashes(), ls.Zip.H1)...)
	}
	return nil
}

// TieRead is TieLock, reading the archives of the local places that state
// no h1: where the stated hashes leave a locked hash untied (a mirror
// `terraform providers mirror` wrote): what the lock view and a sync with
// a lock tie with.
func TieRead(ctx context.Context, p backends.Provider, l sync.Locked, places []backends.Reader) (LockTies, []error) {
	t := NewTieIndex(p, l.Version)
	listed := make([][]backends.Archive, len(places))
	errs := make([]error, len(places))
	for i, r := range places {
		as, err := t.AddPlace(ctx, r, provenance.Options{})
		listed[i] = as
		if err != nil && !errors.Is(err, backends.ErrNoCatalogue) {
			errs[i] = err
		}
	}
	ties := t.Tie(l)
	if len(ties.Unplaced)+len(ties.Untied) == 0 {
		return ties, errs
	}
	for i, r := range places {
		if _, local := r.(backends.LocalPather); local {
			if err := t.AddHashed(ctx, r, listed[i], hashing.Options{}); err != nil && errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return t.Tie(l), errs
}

// AboutLocks sets, where sel names no platform (--platform), each lock's
// Platforms (sel.Locked's, and sel.Pinned's that carry hashes) to the
// platforms it is about, tied through places: a sync then copies those
// and no other platform of the version. A lock none of whose hashes is
// tied keeps Platforms nil (every platform, each checked against it). It
// returns notes naming the platforms assumed (LockTies.AssumedNote).
func AboutLocks(ctx context.Context, sel *sync.Selection, places []backends.Reader) []string {
	if len(sel.Platforms) > 0 {
		return nil
	}
	var notes []string
	about := func(p backends.Provider, l sync.Locked) sync.Locked {
		if len(l.Hashes) == 0 {
			return l
		}
		ties, _ := TieRead(ctx, p, l, places)
		if len(ties.Platforms) > 0 {
			l.Platforms = ties.Platforms
		}
		if n := AssumedLine(p, l.Version, ties.Assumed); n != "" {
			notes = append(notes, n)
		}
		return l
	}
	for p, l := range sel.Locked {
		sel.Locked[p] = about(p, l)
	}
	for p, pins := range sel.Pinned {
		for i, l := range pins {
			pins[i] = about(p, l)
		}
	}
	return notes
}
