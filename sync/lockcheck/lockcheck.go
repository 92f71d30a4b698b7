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

// CheckOptions tune CheckLock.
type CheckOptions struct {
	// Kind is how the clients install from the place, which decides which
	// locked hashes can vouch for a package (formats.md §1.5).
	Kind backends.Kind
	// Platforms to check. Empty: every platform the place holds for any
	// locked provider at its locked version, so a provider that lacks a
	// platform its siblings have is reported missing.
	Platforms []backends.Platform
	// Providers, when set, limit the findings to matching providers; the
	// default platforms still come from every locked provider.
	Providers []backends.ProviderFilter
	Hashing   hashing.Options
	// Sums, when set, keeps the archives' sums across calls: checking
	// several lock files against one place hashes each archive once.
	Sums *sync.SumsCache
	// TieWith are more places whose archives and signed SHA256SUMS tie
	// locked hashes to platforms (see TieIndex), beside the place checked
	// and the provenance it keeps.
	TieWith []backends.Reader
}

// CheckLock answers "would `init` with this lock file work on each platform,
// installing from r?": for every locked provider version and platform, the
// package must be in r and match at least one locked hash of a scheme the
// clients can check for r's kind of place. A finding is StatusOK when init
// would succeed (the detail warns when it would succeed without checking
// anything), StatusMissing or StatusMismatch when init would fail, and
// StatusError when r could not be read. Every detail says what init would do
// and how to fix it.
func CheckLock(ctx context.Context, r backends.Reader, locked map[backends.Provider]sync.Locked, o CheckOptions) ([]sync.Finding, error) {
	providers := make([]backends.Provider, 0, len(locked))
	for p := range locked {
		providers = append(providers, p)
	}
	backends.SortProviders(providers)
	o.Providers = sync.Selection{Providers: o.Providers}.OnHost(r).Providers // NAMESPACE/TYPE on a registry is on its host

	c := checker{r: r, o: o, archives: map[backends.Provider][]backends.Archive{}, errs: map[backends.Provider]error{}, have: map[backends.Provider][]backends.Version{}, seen: map[hashing.Hash]bool{}}
	for _, p := range providers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.list(ctx, p, locked[p])
	}
	var out []sync.Finding
	for _, p := range providers {
		if !matchesAny(o.Providers, p) {
			continue
		}
		l := locked[p]
		// The platforms the lock is about (LockTies.About): --platform's,
		// or those p's locked hashes are tied to. Others the place holds
		// are none of the lock's business.
		var ties LockTies
		if c.errs[p] == nil {
			ties = c.tie(ctx, p, l)
		}
		platforms := ties.About(o.Platforms)
		if len(platforms) == 0 && len(ties.Unplaced) == 0 {
			// A lock of zh: hashes only cannot be tied to an unpacked
			// package (it has no zip): init installs it unchecked, which
			// checkUnpacked warns about.
			platforms = c.unpackedOnly(p)
		}
		if len(platforms) == 0 {
			out = append(out, c.noPlatforms(p, l, ties)...)
			continue
		}
		byPlat := map[backends.Platform]backends.Archive{}
		for _, a := range c.archives[p] {
			byPlat[a.Platform] = a
		}
		for _, plat := range platforms {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			pkg := backends.Package{Provider: p, Version: l.Version, Platform: plat}
			a, ok := byPlat[plat]
			switch {
			case c.errs[p] != nil:
				out = append(out, c.unread(pkg))
			case !ok:
				out = append(out, c.absent(pkg, l))
			default:
				out = append(out, c.checkArchive(ctx, a, l))
			}
			if f := &out[len(out)-1]; len(o.Platforms) == 0 && f.Status != sync.StatusOK && slices.Contains(ties.Assumed, plat) {
				f.Detail += " (" + ties.AssumedNote() + ")"
			}
		}
		if n := AssumedNote(ties.Assumed); n != "" && len(o.Platforms) == 0 {
			out = append(out, sync.Finding{Package: backends.Package{Provider: p, Version: l.Version}, Status: sync.StatusOK, Detail: "note: " + n})
		}
		if len(o.Platforms) == 0 && allOK(out, p) && len(c.archives[p]) > 0 {
			if f, ok := c.unmatched(p, l, ties); ok {
				out = append(out, f)
			}
		}
		out = append(out, malformedFindings(p, l, ties)...)
	}
	return out, nil
}

// malformedFindings name the malformed hashes of p's lock, with where the
// file states them: ok rows, since init passes over them (a package that
// matches another locked hash is accepted), and never a gap.
func malformedFindings(p backends.Provider, l sync.Locked, ties LockTies) []sync.Finding {
	var out []sync.Finding
	for _, h := range ties.Malformed {
		at := lockName(l)
		for _, m := range l.Malformed {
			if m.Hash == h {
				at = m.Pos
			}
		}
		_, err := hashing.ParseHash(string(h))
		out = append(out, sync.Finding{Package: backends.Package{Provider: p, Version: l.Version}, Status: sync.StatusOK,
			Detail: fmt.Sprintf("malformed: %s: %v; init passes over it, so it is no gap: fix or remove it", at, err)})
	}
	return out
}

// allOK reports whether every finding about p so far is ok.
func allOK(fs []sync.Finding, p backends.Provider) bool {
	for _, f := range fs {
		if f.Package.Provider == p && f.Status != sync.StatusOK {
			return false
		}
	}
	return true
}

// unmatched reports the locked h1: hashes of p that no archive the place
// holds matches and no place ties to a platform: each is a package of a
// platform the mirror lacks (an h1: is only ever a package's), so init on
// that platform would fail. Hashes tied to no package (the zh: of a
// release's manifest) are a note, never a problem. Checked only when no
// --platform narrows the check and p's packages all passed (a failing one
// already explains its own hashes).
func (c *checker) unmatched(p backends.Provider, l sync.Locked, ties LockTies) (sync.Finding, bool) {
	var missing []hashing.Hash
	for _, u := range ties.Unplaced {
		if !c.seen[u.Hash] {
			missing = append(missing, u.Hash)
		}
	}
	zipped := true // an unpacked package has no zh: to match
	for _, a := range c.archives[p] {
		zipped = zipped && a.Layout != backends.Unpacked
	}
	var untied []UntiedHash
	for _, u := range ties.Untied {
		if !c.seen[u.Hash] && (zipped || u.File != "") {
			untied = append(untied, u)
		}
	}
	pkg := backends.Package{Provider: p, Version: l.Version}
	if len(missing) == 0 {
		if len(untied) == 0 {
			return sync.Finding{}, false
		}
		return sync.Finding{Package: pkg, Status: sync.StatusOK,
			Detail: fmt.Sprintf("note: %d of the %d hashes %s locks for %s %s are tied to no package, so no platform needs them: %s",
				len(untied), len(l.Hashes), lockName(l), p, l.Version, UntiedNote(untied))}, true
	}
	var shown []string
	for _, h := range missing[:min(len(missing), 3)] {
		shown = append(shown, h.Short())
	}
	if len(missing) > 3 {
		shown = append(shown, fmt.Sprintf("and %d more", len(missing)-3))
	}
	detail := fmt.Sprintf("init on some platform would fail: %d of the %d hashes %s locks for %s %s are h1: hashes of packages that match no archive in %s (%s) and that no signed SHA256SUMS or other place ties to a platform: each is a package, usually another platform, that the mirror lacks; copy the platforms your team runs init on with `tfmirror sync SOURCE %s -p %s -v %s --platform OS_ARCH`, or check only those with --platform",
		len(missing), len(l.Hashes), lockName(l), p, l.Version, c.r, strings.Join(shown, ", "), c.r, p, l.Version)
	if others := c.unlocked(p, ties); len(others) > 0 {
		detail += fmt.Sprintf("; %s holds %s with none of the locked hashes: if the lock is about it, the mirror holds a different package than was locked: replace it with `tfmirror sync SOURCE %s -p %s -v %s --platform %s --force` (check --tie-with registry://HOST, the origin, or the lock view with it, tells which)",
			c.r, strings.Join(others, ", "), c.r, p, l.Version, others[0])
	}
	return sync.Finding{Package: pkg, Status: sync.StatusMissing, Detail: detail}, true
}

// unpackedOnly are the platforms of p's archives in the place when all are
// unpacked, else none.
func (c *checker) unpackedOnly(p backends.Provider) []backends.Platform {
	var out []backends.Platform
	for _, a := range c.archives[p] {
		if a.Layout != backends.Unpacked {
			return nil
		}
		out = append(out, a.Platform)
	}
	return out
}

// unlocked are the platforms of p's archives in the place that no locked
// hash is tied to: where a locked h1: no place ties may be a package the
// place holds wrongly.
func (c *checker) unlocked(p backends.Provider, ties LockTies) []string {
	var out []string
	for _, a := range c.archives[p] {
		if !slices.Contains(ties.Platforms, a.Platform) {
			out = append(out, a.Platform.String())
		}
	}
	return out
}

// tie ties p's locked hashes to platforms through the archives the place
// holds at the locked version (their stated hashes), the signed SHA256SUMS
// it keeps as provenance, and the places of TieWith. Hashes of archives the
// check computes are matched through seen instead.
func (c *checker) tie(ctx context.Context, p backends.Provider, l sync.Locked) LockTies {
	t := NewTieIndex(p, l.Version)
	for _, a := range c.archives[p] {
		t.AddArchive(a)
	}
	if len(c.archives[p]) > 0 {
		if signed, err := sync.ReadProvenance(ctx, c.r, p, l.Version, provenance.Options{}); err == nil && signed != nil {
			_ = t.AddSums(signed.Provenance.SHA256SUMS) // unreadable: ties nothing
		}
	}
	for _, r := range c.o.TieWith {
		_, _ = t.AddPlace(ctx, r, provenance.Options{}) // a place that cannot be read ties nothing
	}
	ties := t.Tie(l)
	_, local := c.r.(backends.LocalPather)
	if len(ties.Unplaced) > 0 || local && len(ties.Untied) > 0 {
		// Archives that state no h1: (a mirror `terraform providers
		// mirror` wrote, an OCI layer known by its digest) are read where
		// a locked h1: is still untied, or a local one where anything is.
		if err := t.AddHashed(ctx, c.r, c.archives[p], c.o.Hashing); err == nil {
			ties = t.Tie(l)
		}
	}
	return ties
}

type checker struct {
	r        backends.Reader
	o        CheckOptions
	archives map[backends.Provider][]backends.Archive // at the locked version
	have     map[backends.Provider][]backends.Version // every version r holds
	errs     map[backends.Provider]error
	seen     map[hashing.Hash]bool // the h1: and zh: of every archive checked
}

func (c *checker) list(ctx context.Context, p backends.Provider, l sync.Locked) {
	vs, err := c.r.Versions(ctx, p)
	if errors.Is(err, backends.ErrNotFound) {
		return
	}
	if err != nil {
		c.errs[p] = err
		return
	}
	c.have[p] = vs
	for _, v := range vs {
		if v.Equal(l.Version) && v.String() == l.Version.String() {
			as, err := c.r.Archives(ctx, p, v)
			if err != nil && !errors.Is(err, backends.ErrNotFound) {
				c.errs[p] = err
			}
			c.archives[p] = as
			return
		}
	}
}

// noPlatforms is what is found of p where no platform the lock is about
// can be told: the place's error (unread, it ties nothing: that is no
// gap), the package held other than locked, or what it lacks.
func (c *checker) noPlatforms(p backends.Provider, l sync.Locked, ties LockTies) []sync.Finding {
	pkg := backends.Package{Provider: p, Version: l.Version}
	if c.errs[p] != nil {
		return []sync.Finding{c.unread(pkg)}
	}
	f, ok := c.unmatched(p, l, ties)
	if !ok || len(c.archives[p]) == 0 {
		f = c.absent(pkg, l)
	}
	return append([]sync.Finding{f}, malformedFindings(p, l, ties)...)
}

// unread is the finding for a package of a provider the place could not
// list.
func (c *checker) unread(pkg backends.Package) sync.Finding {
	return sync.Finding{Package: pkg, Status: sync.StatusError, Detail: fmt.Sprintf("cannot tell whether init would work: %v", c.errs[pkg.Provider])}
}

// absent describes a locked package the place does not hold.
func (c *checker) absent(pkg backends.Package, l sync.Locked) sync.Finding {
	f := sync.Finding{Package: pkg, Status: sync.StatusMissing}
	plat, noPlatforms := pkg.Platform.String(), pkg.Platform == (backends.Platform{})
	if noPlatforms {
		plat = "PLATFORM"
	}

	fix := fmt.Sprintf("copy it in with `tfmirror sync SOURCE %s -p %s -v %s --platform %s`", c.r, pkg.Provider, pkg.Version, plat)
	as := c.archives[pkg.Provider]
	switch {
	case len(as) > 0:
		var plats []string
		for _, a := range as {
			plats = append(plats, a.Platform.String())
		}
		f.Detail = fmt.Sprintf("init on %s would fail: %s holds %s %s only for %s; %s", plat, c.r, pkg.Provider, pkg.Version, strings.Join(plats, ", "), fix)
	case len(c.have[pkg.Provider]) > 0:
		f.Detail = fmt.Sprintf("init would fail: %s does not hold the locked version %s of %s (it has %s); %s, or move the lock to a version the mirror holds",
			c.r, pkg.Version, pkg.Provider, backends.VersionList(c.have[pkg.Provider], 5), fix)
	default:
		f.Detail = fmt.Sprintf("init would fail: %s holds no version of %s; %s", c.r, pkg.Provider, fix)
	}
	if noPlatforms {
		f.Detail += " (no archive and no signed SHA256SUMS ties a locked hash to a platform, so which platforms the lock is about cannot be told: name them with --platform)"
	}
	return f
}

// checkArchive applies the clients' rules for a package the place holds.
func (c *checker) checkArchive(ctx context.Context, a backends.Archive, l sync.Locked) sync.Finding {
	f := sync.Finding{Package: a.Package}
	sums, err := c.o.Sums.Hash(ctx, c.r, a, c.o.Hashing)
	if err != nil {
		f.Status, f.Detail = sync.StatusError, fmt.Sprintf("cannot hash the package: %v", err)
		return f
	}
	c.seen[sums.H1], c.seen[sums.ZH] = true, true
	for _, h := range a.Hashes() {
		c.seen[h] = true // a zip's h1 as stated: the unpacked package's
	}
	evidence := append([]hashing.Evidence(nil), a.Evidence...)
	lockEv := hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceLockFile, Detail: l.Source}, Hashes: l.Hashes, AnyOf: true}
	res := hashing.Verify(sums, append(evidence, lockEv)...)
	f.Result = &res

	// Network mirrors, registries and OCI registries make the clients check
	// the archive against what the place states before the lock; a
	// filesystem mirror's index documents are not read by the clients.
	if c.o.Kind != backends.KindFS {
		if pr := hashing.Verify(sums, evidence...); !pr.OK() {
			f.Status = sync.StatusMismatch
			f.Detail = fmt.Sprintf("init would fail: the archive does not match what %s states (%v); replace it with the origin's archive: `tfmirror sync SOURCE %s -p %s -v %s --platform %s --force`",
				c.r, pr.Err(), c.r, a.Provider, a.Version, a.Platform)
			return f
		}
	}

	lockFix := fmt.Sprintf("`tfmirror lock %s --lock %s --platform %s`", c.r, lockName(l), a.Platform)
	var h1s, zhs []hashing.Hash
	for _, h := range l.Hashes {
		switch h.Scheme() {
		case hashing.SchemeH1:
			h1s = append(h1s, h)
		case hashing.SchemeZip:
			zhs = append(zhs, h)
		}
	}
	if len(h1s)+len(zhs) == 0 {
		f.Status = sync.StatusOK
		f.Detail = fmt.Sprintf("warning: the lock holds no h1: or zh: hash for %s %s, so init would install this package without checking it and record its hashes; add them now with %s", a.Provider, a.Version, lockFix)
		return f
	}

	switch {
	case a.Layout == backends.Unpacked:
		return c.checkUnpacked(f, sums, h1s, lockFix)
	case c.o.Kind == backends.KindOCI:
		return c.checkOCI(f, sums, h1s, zhs, lockFix)
	}
	if contains(h1s, sums.H1) || contains(zhs, sums.ZH) {
		f.Status, f.Detail = sync.StatusOK, sync.DescribeMatches(hashing.Verify(sums, lockEv))
		return f
	}
	f.Status = sync.StatusMismatch
	f.Detail = fmt.Sprintf("init would fail with a checksum error: the zip's h1 (%s) and zh (%s) match none of the %d locked hashes; the mirror holds a different package than was locked: if it is the right one, record it with %s, otherwise replace it with the origin's: `tfmirror sync SOURCE %s -p %s -v %s --platform %s --force`",
		sums.H1.Short(), sums.ZH.Short(), len(l.Hashes), lockFix, c.r, a.Provider, a.Version, a.Platform)
	if c.unpackedMatches(ctx, a, sums, h1s) {
		f.Detail += "; note: the zip has directory entries, so its h1 differs from the unpacked package's h1 that the lock holds: a zh: in the lock (as `tfmirror lock` adds) lets the clients accept it"
	}
	return f
}

func (c *checker) checkUnpacked(f sync.Finding, sums hashing.Sums, h1s []hashing.Hash, lockFix string) sync.Finding {
	switch {
	case len(h1s) == 0:
		f.Status = sync.StatusOK
		f.Detail = fmt.Sprintf("warning: init would install this unpacked package WITHOUT checking it: the lock holds only zh: hashes, which cannot vouch for an unpacked directory (the clients then ignore them); add its h1: with %s", lockFix)
	case contains(h1s, sums.H1):
		f.Status, f.Detail = sync.StatusOK, "h1 of the unpacked package matches the lock"
	default:
		f.Status = sync.StatusMismatch
		f.Detail = fmt.Sprintf("init would fail with a checksum error: the unpacked package's h1 (%s) is none of the %d locked h1: hashes; if the mirror's package is the right one, record it with %s, otherwise replace the directory with the origin's package",
			sums.H1.Short(), len(h1s), lockFix)
	}
	return f
}

func (c *checker) checkOCI(f sync.Finding, sums hashing.Sums, h1s, zhs []hashing.Hash, lockFix string) sync.Finding {
	switch {
	case contains(zhs, sums.ZH):
		f.Status, f.Detail = sync.StatusOK, "zh of the OCI layer (its digest) is in the lock"
	case len(zhs) == 0:
		f.Status = sync.StatusMismatch
		f.Detail = "init (OpenTofu, oci_mirror) would fail before downloading: it needs the layer's zh:<sha256 digest> literally in the lock, and the lock holds only h1: hashes for this version; add the zh: hashes with " + lockFix
		if contains(h1s, sums.H1) {
			f.Detail += " (the package's h1 matches the lock, so the layer is the locked package)"
		}
	default:
		f.Status = sync.StatusMismatch
		f.Detail = fmt.Sprintf("init (OpenTofu, oci_mirror) would fail before downloading: the layer's digest (%s) is none of the %d locked zh: hashes, so the registry holds a different zip than was locked; if it is the right one, record it with %s, otherwise push the origin's zip",
			sums.ZH.Short(), len(zhs), lockFix)
	}
	return f
}

// unpackedMatches reports whether a locked h1 matches the package once
// unpacked although the zip's own h1 does not: the case of a zip with
// directory entries, which the clients hash differently from its content.
func (c *checker) unpackedMatches(ctx context.Context, a backends.Archive, sums hashing.Sums, h1s []hashing.Hash) bool {
	if len(h1s) == 0 {
		return false
	}
	ls, err := PackageLockHashes(ctx, c.r, a, c.o.Hashing)
	if err != nil || ls.Unpacked == sums.H1 {
		return false
	}
	return contains(h1s, ls.Unpacked)
}

func matchesAny(filters []backends.ProviderFilter, p backends.Provider) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if f.Matches(p) {
			return true
		}
	}
	return false
}

func contains(hs []hashing.Hash, h hashing.Hash) bool {
	if h == "" {
		return false
	}
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

func lockName(l sync.Locked) string {
	if l.Source == "" {
		return "FILE"
	}
	return l.Source
}
