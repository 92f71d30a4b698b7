package lockcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/readers"
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

// LockSums are the hashes `providers lock` records for one package.
type LockSums struct {
	// Unpacked is the h1: of the package as unpacked (DirH1), which is
	// what the clients record and re-check in their cache.
	Unpacked hashing.Hash
	// Zip holds the zip's h1: (ZipH1, what the clients check a zip with)
	// and zh:; it is zero for an unpacked directory.
	Zip hashing.Sums
}

// Hashes returns what goes into the lock: the unpacked h1: and the zip's zh:.
func (s LockSums) Hashes() []hashing.Hash {
	hs := []hashing.Hash{s.Unpacked}
	if s.Zip.ZH != "" {
		hs = append(hs, s.Zip.ZH)
	}
	return hashing.SortUnique(hs)
}

// PackageLockHashes computes a package's LockSums: in place for local
// places, otherwise from a temporary copy of the zip.
func PackageLockHashes(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options) (LockSums, error) {
	if lp, ok := r.(backends.LocalPather); ok {
		p := lp.LocalPath(a)
		fi, err := os.Stat(p)
		if err != nil {
			return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
		}
		if fi.IsDir() {
			h1, err := hashing.DirH1(p)
			if err != nil {
				return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
			}
			return LockSums{Unpacked: h1}, nil
		}
		ls, err := zipLockSums(p, opts)
		if err != nil {
			return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
		}
		return ls, nil
	}
	tmp, err := fetchToTemp(ctx, r, a)
	if err != nil {
		return LockSums{}, err
	}
	defer os.Remove(tmp)
	ls, err := zipLockSums(tmp, opts)
	if err != nil {
		return LockSums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
	}
	return ls, nil
}

func fetchToTemp(ctx context.Context, r backends.Reader, a backends.Archive) (string, error) {
	rc, err := r.Open(ctx, a)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	f, err := os.CreateTemp("", "tfmirror-lock-*.zip")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, readers.WithContext(ctx, rc))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("%s: %s: %w", r, a.Package, err)
	}
	return f.Name(), nil
}

// zipLockSums hashes a zip and its unpacked form. The two h1: values agree
// unless the zip has directory entries or names that do not unpack to
// themselves; only then is it unpacked to a temp dir, as the clients would.
func zipLockSums(zipPath string, opts hashing.Options) (LockSums, error) {
	sums, err := hashing.HashPath(zipPath, opts)
	if err != nil {
		return LockSums{}, err
	}
	asIs, err := unpacksAsIs(zipPath)
	if err != nil {
		return LockSums{}, err
	}
	if asIs {
		return LockSums{Unpacked: sums.H1, Zip: sums}, nil
	}
	dir, err := os.MkdirTemp("", "tfmirror-unpack-*")
	if err != nil {
		return LockSums{}, err
	}
	defer os.RemoveAll(dir)
	if err := hashing.Extract(zipPath, dir, opts); err != nil {
		return LockSums{}, err
	}
	h1, err := hashing.DirH1(dir)
	if err != nil {
		return LockSums{}, err
	}
	return LockSums{Unpacked: h1, Zip: sums}, nil
}

// unpacksAsIs reports whether ZipH1 of the zip equals DirH1 of its
// extraction: no directory entries, no duplicate names, every name a clean
// relative slash path.
func unpacksAsIs(zipPath string) (bool, error) {
	z, err := hashing.OpenZip(zipPath)
	if err != nil {
		return false, err
	}
	defer z.Close()
	seen := map[string]bool{}
	for _, f := range z.File {
		n := f.Name
		if strings.HasSuffix(n, "/") || f.FileInfo().IsDir() || seen[n] ||
			strings.Contains(n, `\`) || path.Clean(n) != n || strings.HasPrefix(n, "/") || n == ".." || strings.HasPrefix(n, "../") {
			return false, nil
		}
		seen[n] = true
	}
	return true, nil
}

// LockRequest says which packages UpdateLock hashes.
type LockRequest struct {
	// Selection's Providers limit the update to matching providers (locked
	// or new); its Versions choose the version of providers not yet locked
	// (newest match; "latest" when empty) and move a locked provider whose
	// version does not match.
	Selection sync.Selection
	// Platforms to hash; required, as for `providers lock`.
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
// Like `providers lock` it is all or nothing: when any package is missing or
// does not match what the place states, the problems are returned and f is
// left unchanged.
func UpdateLock(ctx context.Context, r backends.Reader, f *lockfile.File, req LockRequest) ([]LockUpdate, []sync.Finding, error) {
	if len(req.Platforms) == 0 {
		return nil, nil, errors.New("lock: name the platforms to lock with --platform (e.g. linux_amd64, darwin_arm64, windows_amd64)")
	}
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

// hashTarget gathers the lock hashes of every requested platform's package
// of one provider version: those the place states without a download
// (backends.StatedHashLister) where it states any, else those of the
// package, downloaded and hashed.
func hashTarget(ctx context.Context, r backends.Reader, f *lockfile.File, t lockTarget, req LockRequest) (LockUpdate, []sync.Finding, error) {
	u := LockUpdate{Provider: t.provider, Version: t.version, OldVersion: t.old, New: t.isNew, constraints: t.constraints}
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
	for i, plat := range req.Platforms {
		hs, ok := stated[plat]
		if !ok {
			if hashed[i].prob != nil {
				problems = append(problems, *hashed[i].prob)
				continue
			}
			hs = hashed[i].hashes
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
// them in the order of req.Platforms, with t's listing (nil when every
// platform's hashes were stated).
func hashUnstated(ctx context.Context, r backends.Reader, t lockTarget, req LockRequest, stated map[backends.Platform][]hashing.Hash) ([]platformHashes, *versionListing, error) {
	out := make([]platformHashes, len(req.Platforms))
	var listing *versionListing
	for _, plat := range req.Platforms {
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
	sync.Parallel(ctx, sync.HashWorkers(r), len(req.Platforms), func(i int) {
		if _, ok := stated[req.Platforms[i]]; !ok {
			out[i].hashes, out[i].prob = listing.lockHashes(ctx, req.Platforms[i], req)
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
