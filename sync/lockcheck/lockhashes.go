package lockcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// hashTarget gathers the lock hashes of every requested platform's package
// of one provider version: those the place states without a download
// (backends.StatedHashLister) where it states any, else those of the
// package, downloaded and hashed.
func hashTarget(ctx context.Context, r backends.Reader, f *lockfile.File, t lockTarget, req LockRequest) (LockUpdate, []sync.Finding, error) {
	u := LockUpdate{Provider: t.provider, Version: t.version, OldVersion: t.old, New: t.isNew, constraints: t.constraints,
		Platforms: t.platforms, Assumed: t.assumed, FromFile: t.fromFile, Unplaced: t.unplaced}
	stated, err := statedLockHashes(ctx, r, t, req)
	if err != nil {
		return u, nil, err
	}
	existing := map[hashing.Hash]bool{}
	if l, ok := f.Provider(t.provider); ok && t.old == nil {
		for _, h := range l.Hashes {
			existing[h] = true
		}
	}
	var problems []sync.Finding
	hashed, listing, err := hashUnstated(ctx, r, t, req, stated)
	if err != nil {
		return u, nil, err
	}
	for i, plat := range t.platforms {
		hs, ok := stated[plat]
		if !ok {
			if p := hashed[i].prob; p != nil {
				if slices.Contains(t.assumed, plat) {
					p.Detail += " (" + AssumedNote(t.assumed) + ")"
				}
				problems = append(problems, *p)
				continue
			}
			hs = hashed[i].hashes
		}
		if !slices.ContainsFunc(hs, func(h hashing.Hash) bool { return h.Scheme() == hashing.SchemeH1 }) && !slices.Contains(t.h1Tied, plat) && t.h1Unplaced == 0 {
			u.NoH1 = append(u.NoH1, plat)
		}
		for _, h := range hs {
			if !existing[h] {
				existing[h] = true
				u.Added = append(u.Added, LockHash{Hash: h, Platform: plat})
			}
		}
	}
	if sh, ok := r.(backends.SignedHashLister); ok && len(problems) == 0 {
		signed, err := signedLockHashes(ctx, sh, t, stated, listing, existing)
		if err != nil {
			return u, nil, err
		}
		u.Added = append(u.Added, signed...)
	}
	return u, problems, nil
}

// platformHashes are one platform's lock hashes, or why there are none.
type platformHashes struct {
	hashes []hashing.Hash
	prob   *sync.Finding
}

// hashUnstated hashes the packages of the requested platforms the place
// states no hashes for, one package per core (HashWorkers), and returns
// them in the order of t.platforms, with t's listing (nil when every
// platform's hashes were stated).
func hashUnstated(ctx context.Context, r backends.Reader, t lockTarget, req LockRequest, stated map[backends.Platform][]hashing.Hash) ([]platformHashes, *versionListing, error) {
	out := make([]platformHashes, len(t.platforms))
	var listing *versionListing
	for _, plat := range t.platforms {
		if _, ok := stated[plat]; !ok {
			var err error
			if listing, err = listVersion(ctx, r, t); err != nil {
				return nil, nil, err
			}
			break
		}
	}
	if listing == nil {
		return out, nil, nil
	}
	sync.Parallel(ctx, sync.HashWorkers(r), len(t.platforms), func(i int) {
		if _, ok := stated[t.platforms[i]]; !ok {
			out[i].hashes, out[i].prob = listing.lockHashes(ctx, t.platforms[i], req)
		}
	})
	return out, listing, ctx.Err()
}

// statedLockHashes are the h1: and zh: a StatedHashLister states for each
// platform of t, sorted; nil for other places, or with Download.
func statedLockHashes(ctx context.Context, r backends.Reader, t lockTarget, req LockRequest) (map[backends.Platform][]hashing.Hash, error) {
	sl, ok := r.(backends.StatedHashLister)
	if !ok || req.Download {
		return nil, nil
	}
	stated, err := sl.StatedHashes(ctx, t.provider, t.version)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, err
	}
	out := map[backends.Platform][]hashing.Hash{}
	for plat, hs := range stated {
		var known []hashing.Hash
		for _, h := range hs {
			if h.Known() {
				known = append(known, h)
			}
		}
		if len(known) > 0 {
			out[plat] = hashing.SortUnique(known)
		}
	}
	return out, nil
}

// versionListing is a provider version's archives in a place, for the
// platforms whose lock hashes are taken from the packages themselves.
type versionListing struct {
	r      backends.Reader
	t      lockTarget
	as     []backends.Archive
	byPlat map[backends.Platform]backends.Archive
	have   []string
}

func listVersion(ctx context.Context, r backends.Reader, t lockTarget) (*versionListing, error) {
	as, err := r.Archives(ctx, t.provider, t.version)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, err
	}
	l := &versionListing{r: r, t: t, as: as, byPlat: map[backends.Platform]backends.Archive{}}
	for _, a := range as {
		l.byPlat[a.Platform] = a
		l.have = append(l.have, a.Platform.String())
	}
	return l, nil
}

// lockHashes hashes plat's package: the unpacked h1: and the zip's zh:,
// checked against what the place states about it.
func (l *versionListing) lockHashes(ctx context.Context, plat backends.Platform, req LockRequest) ([]hashing.Hash, *sync.Finding) {
	r, t := l.r, l.t
	pkg := backends.Package{Provider: t.provider, Version: t.version, Platform: plat}
	a, ok := l.byPlat[plat]
	if !ok {
		held := "no platform"
		if len(l.have) > 0 {
			held = "only " + strings.Join(l.have, ", ")
		}
		return nil, &sync.Finding{Package: pkg, Status: sync.StatusMissing,
			Detail: fmt.Sprintf("%s holds %s %s for %s; copy the package in first (`tfmirror sync SOURCE %s -p %s -v %s --platform %s`) or leave the platform out",
				r, t.provider, t.version, held, r, t.provider, t.version, plat)}
	}
	ls, err := PackageLockHashes(ctx, r, a, req.Hashing)
	if err != nil {
		return nil, &sync.Finding{Package: pkg, Status: sync.StatusError, Detail: err.Error()}
	}
	sums := ls.Zip
	if sums.H1 == "" {
		sums = hashing.Sums{H1: ls.Unpacked}
	}
	// Only what the place states is checked here: `providers lock`
	// ignores the existing lock's hashes, which may be another
	// platform's.
	if res := hashing.Verify(sums, a.Evidence...); !res.OK() {
		return nil, &sync.Finding{Package: pkg, Status: sync.StatusMismatch, Result: &res,
			Detail: fmt.Sprintf("%s: %s: not locking a package that does not match what the place states: %v", r, pkg, res.Err())}
	}
	return ls.Hashes(), nil
}

// signedLockHashes gives the zh: hashes of t's signed SHA256SUMS that
// existing does not hold yet (and adds them to it), each with the platform
// of the package stating it (in stated, or in the listing), when one does.
// It is a step of its own because, as the clients do from an origin
// registry, it locks every platform's zh:, not only the platforms hashed
// here.
func signedLockHashes(ctx context.Context, sh backends.SignedHashLister, t lockTarget, stated map[backends.Platform][]hashing.Hash, listing *versionListing, existing map[hashing.Hash]bool) ([]LockHash, error) {
	signed, err := sh.SignedHashes(ctx, t.provider, t.version)
	if err != nil {
		return nil, err
	}
	platformOf := map[hashing.Hash]backends.Platform{}
	for plat, hs := range stated {
		for _, h := range hs {
			platformOf[h] = plat
		}
	}
	if listing != nil {
		for _, a := range listing.as {
			for _, h := range a.Hashes() {
				platformOf[h] = a.Platform
			}
		}
	}
	var added []LockHash
	for _, h := range signed {
		if existing[h] {
			continue
		}
		existing[h] = true
		added = append(added, LockHash{Hash: h, Platform: platformOf[h]})
	}
	return added, nil
}
