package lockcheck

import (
	"context"
	"errors"
	"fmt"
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

// HashTie is what a locked hash is known to be the hash of.
type HashTie struct {
	// Platform is the package's platform; zero for a file that is no
	// package.
	Platform backends.Platform
	// File is the name a signed SHA256SUMS gives the file, when one does.
	File string
}

// TieIndex gathers, for one provider version, what each hash is the hash
// of: from archives and from signed SHA256SUMS documents. The zero value
// is not usable: use NewTieIndex.
type TieIndex struct {
	p     backends.Provider
	v     backends.Version
	by    map[hashing.Hash]HashTie
	plats map[backends.Platform]bool
}

// NewTieIndex is an empty index for p at v.
func NewTieIndex(p backends.Provider, v backends.Version) *TieIndex {
	return &TieIndex{p: p, v: v, by: map[hashing.Hash]HashTie{}, plats: map[backends.Platform]bool{}}
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
		if _, ok := t.by[h]; ok {
			continue
		}
		tie := HashTie{File: name}
		if rest, ok := strings.CutPrefix(strings.ToLower(name), prefix); ok {
			if osArch, ok := strings.CutSuffix(rest, ".zip"); ok {
				if plat, err := backends.ParsePlatform(osArch); err == nil {
					tie.Platform = plat
				}
			}
		}
		t.by[h] = tie
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
}

// Tie ties l's h1: and zh: hashes with what the index holds.
func (t *TieIndex) Tie(l sync.Locked) LockTies {
	out := LockTies{Provider: t.p, Version: t.v}
	seen := map[backends.Platform]bool{}
	for _, h := range l.Hashes {
		if !h.Known() {
			continue
		}
		tie, ok := t.by[h]
		switch {
		case ok && tie.Platform != (backends.Platform{}):
			if !seen[tie.Platform] {
				seen[tie.Platform] = true
				out.Platforms = append(out.Platforms, tie.Platform)
			}
		case h.Scheme() == hashing.SchemeH1:
			out.Unplaced = append(out.Unplaced, UntiedHash{Hash: h})
		default:
			out.Untied = append(out.Untied, UntiedHash{Hash: h, File: tie.File})
		}
	}
	backends.SortPlatforms(out.Platforms)
	return out
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
