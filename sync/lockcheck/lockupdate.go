package lockcheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// LockedFromFile turns a lock file into the selection's Locked map; source
// names the file in messages.
func LockedFromFile(f *lockfile.File, source string) map[backends.Provider]sync.Locked {
	out := map[backends.Provider]sync.Locked{}
	for _, l := range f.Providers() {
		out[l.Addr] = sync.Locked{Version: l.Version, Hashes: l.Hashes, Source: source, Malformed: l.Malformed}
	}
	return out
}

// LockRequest says which packages UpdateLock hashes.
type LockRequest struct {
	// Selection's Providers limit the update to matching providers (locked
	// or new); its Versions choose the version of providers not yet locked
	// (newest match; "latest" when empty) and move a locked provider whose
	// version does not match.
	Selection sync.Selection
	// Platforms to hash, as `providers lock -platform=...`. Empty: the
	// platforms the lock is about (check's rule, LockTies.About), each
	// provider's own, tied through the place; see aboutTargets.
	Platforms []backends.Platform
	Hashing   hashing.Options
	// Download hashes every package, even where the place states its
	// hashes without a download (backends.StatedHashLister).
	Download bool
	// Required, when set, is what one configuration requires, and the
	// update is the one `terraform providers lock` run in it makes (see
	// RequiredLock); Selection is then not consulted.
	Required []RequiredLock
}

// LockHash is a hash UpdateLock added, with the platform it came from.
type LockHash struct {
	Hash hashing.Hash
	// Platform is the package's the hash is of; zero for a signed
	// SHA256SUMS line that names no package of the provider version.
	Platform backends.Platform
}

// LockUpdate is what UpdateLock did to one provider's lock.
type LockUpdate struct {
	Provider backends.Provider
	Version  backends.Version
	// OldVersion is the version locked before, when the update moved the
	// lock to another version (its hashes were then replaced, since they
	// vouch for other packages); nil otherwise.
	OldVersion backends.Version
	New        bool
	Added      []LockHash
	// Platforms are those locked: the request's, or those the lock is
	// about. Of them, Assumed were tied only by a signed SHA256SUMS
	// (AssumedNote), and FromFile says they are the rest of the file's,
	// the lock holding no evidence for this provider.
	Platforms []backends.Platform
	Assumed   []backends.Platform
	FromFile  bool
	// Unplaced counts the locked h1: hashes no package in the place is
	// known for: platforms not told, so not locked (without --platform).
	Unplaced int
	// NoH1 are the platforms the place stated only zh: hashes for: the
	// lock holds no h1: of their packages from this update.
	NoH1 []backends.Platform
	// constraints, when set, replace the entry's (canonical form).
	constraints *string
}

// UpdateLock records in f, as `terraform providers lock` would from a
// mirror, the hashes of every requested platform's package of each provider
// version: the unpacked package's h1: and the zip's zh:, and from a place
// that signs every platform's hashes at once (backends.SignedHashLister, an
// origin registry) all of those zh: too; merged with the hashes already
// locked (none is ever dropped while the version stays) and sorted. The
// constraints already in f are kept.
//
// From a place that states every platform's hashes without a download
// (backends.StatedHashLister: an OpenTofu 1.12 registry's packages field,
// an OCI mirror's layer digests, a network mirror's version documents),
// those are recorded as stated, unless req.Download: no archive is read,
// and an h1: is recorded only where the place states one. A platform it
// states nothing for is downloaded and hashed.
//
// Without req.Platforms, each provider is locked for the platforms its
// lock is about (aboutTargets: check's rule); a lock that says none is a
// *NoPlatformsError. Each LockUpdate names the platforms locked, those
// assumed, and those locked without an h1: (NoH1).
//
// Like `providers lock` it is all or nothing: when any package is missing or
// does not match what the place states, the problems are returned and f is
// left unchanged.
func UpdateLock(ctx context.Context, r backends.Reader, f *lockfile.File, req LockRequest) ([]LockUpdate, []sync.Finding, error) {
	var targets []lockTarget
	var problems []sync.Finding
	var err error
	if req.Required != nil {
		targets, problems, err = requiredTargets(ctx, r, f, req.Required)
	} else {
		targets, problems, err = lockTargets(ctx, r, f, req.Selection)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := aboutTargets(ctx, r, f, targets, req.Platforms); err != nil {
		return nil, nil, err
	}
	var updates []LockUpdate
	for _, t := range targets {
		u, probs, err := hashTarget(ctx, r, f, t, req)
		if err != nil {
			return nil, nil, err
		}
		problems = append(problems, probs...)
		if len(probs) == 0 {
			updates = append(updates, u)
		}
	}
	if len(problems) > 0 {
		return nil, problems, nil
	}
	for _, u := range updates {
		old, ok := f.Provider(u.Provider)
		switch {
		case ok && u.OldVersion == nil && u.constraints == nil:
			f.AddHashes(u.Provider, hashList(u.Added))
		default:
			l := lockfile.Provider{Addr: u.Provider, Version: u.Version, Hashes: hashList(u.Added)}
			if ok {
				l.Constraints = old.Constraints
				if u.OldVersion == nil {
					l.Hashes = append(l.Hashes, old.Hashes...)
				}
			}
			if u.constraints != nil {
				l.Constraints = *u.constraints
			}
			if err := f.Set(l); err != nil {
				return nil, nil, err
			}
		}
	}
	return updates, nil, nil
}

func hashList(lh []LockHash) []hashing.Hash {
	out := make([]hashing.Hash, len(lh))
	for i, h := range lh {
		out[i] = h.Hash
	}
	return out
}

type lockTarget struct {
	provider backends.Provider
	version  backends.Version
	old      backends.Version // set when moving a locked provider
	isNew    bool
	// constraints, when set, replace the entry's.
	constraints *string
	// platforms to lock, set by aboutTargets, with what it found.
	platforms, assumed []backends.Platform
	fromFile           bool
	unplaced           int
	// h1Tied are the platforms a kept locked h1: is tied to; h1Unplaced
	// counts the kept h1: tied to none (each may be any platform's).
	h1Tied     []backends.Platform
	h1Unplaced int
}

// lockTargets picks the provider versions to hash.
func lockTargets(ctx context.Context, r backends.Reader, f *lockfile.File, sel sync.Selection) ([]lockTarget, []sync.Finding, error) {
	sel = sel.OnHost(r) // NAMESPACE/TYPE on a registry is on its host
	wanted := func(p backends.Provider) bool {
		if len(sel.Providers) == 0 {
			return true
		}
		for _, flt := range sel.Providers {
			if flt.Matches(p) {
				return true
			}
		}
		return false
	}
	var out []lockTarget
	var problems []sync.Finding
	done := map[backends.Provider]bool{}
	for _, l := range f.Providers() {
		if !wanted(l.Addr) {
			continue
		}
		done[l.Addr] = true
		keep := sel.Versions.IsZero() || (!sel.Versions.Latest && sel.Versions.Constraints.Check(l.Version))
		if keep && backends.Unspecified(l.Version) {
			problems = append(problems, sync.Finding{Package: backends.Package{Provider: l.Addr, Version: l.Version}, Status: sync.StatusError,
				Detail: fmt.Sprintf("%s: %v: not adding hashes to it; move the lock to a released version with -p %s -v CONSTRAINT", l.Addr, lockfile.ErrUnspecified, l.Addr)})
			continue
		}
		if keep {
			out = append(out, lockTarget{provider: l.Addr, version: l.Version})
			continue
		}
		v, prob, err := newestIn(ctx, r, l.Addr, sel.Versions)
		if err != nil {
			return nil, nil, err
		}
		if prob != nil {
			problems = append(problems, *prob)
			continue
		}
		t := lockTarget{provider: l.Addr, version: v}
		if v.String() != l.Version.String() {
			t.old = l.Version
		}
		out = append(out, t)
	}
	if len(sel.Providers) == 0 {
		return out, problems, nil
	}
	added, probs, err := newLockTargets(ctx, r, sel, done)
	if err != nil {
		return nil, nil, err
	}
	return append(out, added...), append(problems, probs...), nil
}

// newLockTargets picks the providers sel names that the lock does not hold
// (done lists those it does), each at its newest version sel allows, and
// reports each of sel's filters that matches no provider at all. It is a
// step of its own because only named providers are ever added to a lock:
// without -p an update touches only what is locked already.
func newLockTargets(ctx context.Context, r backends.Reader, sel sync.Selection, done map[backends.Provider]bool) ([]lockTarget, []sync.Finding, error) {
	var out []lockTarget
	var problems []sync.Finding
	listed, err := sync.Selection{Providers: sel.Providers}.ProvidersIn(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	for _, flt := range sel.Providers {
		matched := false
		for _, p := range listed {
			if flt.Matches(p) {
				matched = true
			}
		}
		for p := range done {
			if flt.Matches(p) {
				matched = true
			}
		}
		if !matched {
			problems = append(problems, sync.Finding{Status: sync.StatusMissing, Detail: fmt.Sprintf("%s holds no provider matching %s", r, flt)})
		}
	}
	for _, p := range listed {
		if done[p] {
			continue
		}
		done[p] = true
		v, prob, err := newestIn(ctx, r, p, sel.Versions)
		if err != nil {
			return nil, nil, err
		}
		if prob != nil {
			problems = append(problems, *prob)
			continue
		}
		out = append(out, lockTarget{provider: p, version: v, isNew: true})
	}
	return out, problems, nil
}

// newestIn picks the newest version of p in r that c selects ("latest" when
// c is empty).
func newestIn(ctx context.Context, r backends.Reader, p backends.Provider, c backends.VersionConstraint) (backends.Version, *sync.Finding, error) {
	vs, err := r.Versions(ctx, p)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, nil, err
	}
	if c.IsZero() {
		c.Latest = true
	}
	match := c.ProviderVersions(vs)
	if len(match) == 0 {
		what := "no version of " + p.String()
		if s := c.String(); s != "" && s != "latest" {
			what += " matching " + s
		}
		for _, v := range vs {
			if backends.Unspecified(v) {
				what += " (its 0.0.0 is OpenTofu's unspecified version, which is never locked)"
				break
			}
		}
		return nil, &sync.Finding{Status: sync.StatusMissing, Detail: fmt.Sprintf("%s holds %s", r, what)}, nil
	}
	return match[0], nil, nil
}
