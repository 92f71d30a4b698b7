package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
)

// Selection says which packages of a place to look at.
type Selection struct {
	Providers []backends.ProviderFilter
	Versions  backends.VersionConstraint
	Platforms []backends.Platform
	// Locked, when set, restricts each provider to its locked version and
	// adds the locked hashes as evidence.
	Locked map[backends.Provider]Locked
	// Pinned, when set, selects exactly its providers at exactly the
	// versions it lists for each (what a mirror spec resolved); hashes a
	// lock file gave for a version are evidence, as Locked's are. Providers,
	// Versions and Locked are then not consulted.
	Pinned map[backends.Provider][]Locked
}

// Locked is one provider's entry in a lock file.
type Locked struct {
	Version backends.Version
	Hashes  []hashing.Hash
	Source  string // the lock file, for messages
	// Malformed are the malformed h1: and zh: of Hashes, with where the
	// file states them (lockfile.Provider.Malformed).
	Malformed []lockfile.Malformed
	// Platforms, when set, are the platforms the lock is about
	// (lockcheck.LockTies.About): a sync selects only those of the
	// version. Nil: every platform.
	Platforms []backends.Platform
}

// DefaultHoster is implemented by places bound to one provider hostname (an
// origin registry), where NAMESPACE/TYPE means a provider on that host.
type DefaultHoster interface {
	DefaultHost() string
}

// ProvidersIn resolves the selection's providers against r: what r lists,
// narrowed by the selection, or, where r cannot list them, the providers
// the selection names (see HostRule).
func (s Selection) ProvidersIn(ctx context.Context, r backends.Reader) ([]backends.Provider, error) {
	if s.Pinned != nil {
		// Every pinned provider, whether or not r lists it: one r lacks is
		// a problem to report, not a provider to leave out quietly.
		out := make([]backends.Provider, 0, len(s.Pinned))
		for p := range s.Pinned {
			out = append(out, p)
		}
		backends.SortProviders(out)
		return out, nil
	}
	listed, err := r.Providers(ctx)
	ps, unknown, err := s.HostRule(r, listed, err)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		return nil, HostUnknownError([]string{r.String()}, unknown)
	}
	return ps, nil
}

// HostRule is the one rule for what --provider means in a place, given
// what r listed (listErr wrapping backends.ErrNoCatalogue where r cannot
// list its providers): HOST/NAMESPACE/TYPE is that provider; NAMESPACE/TYPE
// is that provider on any host r lists (a directory, S3, OCI with a
// catalogue), on r's host where r is bound to one (registry://HOST), and
// cannot be known where r neither lists nor has a host (a network mirror,
// an OCI template without a catalogue): those filters are returned in
// unknown. ps are the providers selected, sorted; with no filter, every
// provider r lists (or the lock's, where it cannot list). Every command and
// the UI resolve providers through it.
func (s Selection) HostRule(r backends.Reader, listed []backends.Provider, listErr error) (ps []backends.Provider, unknown []backends.ProviderFilter, err error) {
	s = s.OnHost(r)
	if errors.Is(listErr, backends.ErrNoCatalogue) {
		return s.namedProviders(r)
	}
	if listErr != nil {
		return nil, nil, listErr
	}
	for _, p := range listed {
		if s.wants(p) {
			ps = append(ps, p)
		}
	}
	return ps, nil, nil
}

// OnHost is s with each NAMESPACE/TYPE filter bound to r's host, where r
// has one.
func (s Selection) OnHost(r backends.Reader) Selection {
	d, ok := r.(DefaultHoster)
	if !ok || d.DefaultHost() == "" {
		return s
	}
	fs := make([]backends.ProviderFilter, len(s.Providers))
	for i, f := range s.Providers {
		if f.Hostname == "" {
			f.Hostname = d.DefaultHost()
		}
		fs[i] = f
	}
	s.Providers = fs
	return s
}

// Cataloguer is implemented by places that know, without asking anything,
// whether they can list their providers: a network mirror never can, an OCI
// template only when repository names read back into providers.
type Cataloguer interface {
	CanList() bool
}

// HostsUnknown is HostRule's usage error for the NAMESPACE/TYPE filters no
// place of rs can place on a host, known before any is listed (the UI's
// places are listed while it runs); nil when each may be.
func (s Selection) HostsUnknown(rs []backends.Reader) error {
	var unknown []backends.ProviderFilter
	var where []string
	for _, f := range s.Providers {
		known := f.Hostname != "" || s.Locked != nil
		for _, r := range rs {
			if c, ok := r.(Cataloguer); !ok || c.CanList() {
				known = true
			}
			if d, ok := r.(DefaultHoster); ok && d.DefaultHost() != "" {
				known = true
			}
		}
		if !known {
			unknown = append(unknown, f)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	for _, r := range rs {
		where = append(where, r.String())
	}
	return HostUnknownError(where, unknown)
}

// HostUnknownError is the usage error for NAMESPACE/TYPE filters given for
// places (named in where) that cannot say which host they mean.
func HostUnknownError(where []string, unknown []backends.ProviderFilter) error {
	var names, full []string
	for _, f := range unknown {
		names = append(names, f.String())
		full = append(full, "HOSTNAME/"+f.String())
	}
	places := where[0] + " cannot list its providers"
	if len(where) > 1 {
		places = "none of " + strings.Join(where, ", ") + " can list its providers"
	}
	return backends.Usagef("--provider %s: %s, so the host cannot be known there: write the full address, %s (e.g. registry.terraform.io/%s)",
		strings.Join(names, ", "), places, strings.Join(full, ", "), unknown[0])
}

func (s Selection) wants(p backends.Provider) bool {
	if s.Pinned != nil {
		_, ok := s.Pinned[p]
		return ok
	}
	if s.Locked != nil {
		if _, ok := s.Locked[p]; !ok {
			return false
		}
	}
	if len(s.Providers) == 0 {
		return true
	}
	for _, f := range s.Providers {
		if f.Matches(p) {
			return true
		}
	}
	return false
}

// namedProviders is the provider list for places that cannot list theirs:
// the full addresses the selection names, and the locked providers its
// NAMESPACE/TYPE filters match (without a lock, their host is unknown), or
// every locked provider.
func (s Selection) namedProviders(r backends.Reader) (ps []backends.Provider, unknown []backends.ProviderFilter, err error) {
	seen := map[backends.Provider]bool{}
	for _, f := range s.Providers {
		if f.Hostname == "" && s.Locked != nil {
			// The lock file names hosts: the locked providers it matches.
			for p := range s.Locked {
				if f.Matches(p) && !seen[p] {
					seen[p] = true
					ps = append(ps, p)
				}
			}
			continue
		}
		if f.Hostname == "" {
			unknown = append(unknown, f)
			continue
		}
		p, err := f.On("")
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", r, err)
		}
		if s.Locked != nil {
			if _, ok := s.Locked[p]; !ok {
				continue
			}
		}
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	if len(s.Providers) == 0 {
		for p := range s.Locked {
			ps = append(ps, p)
		}
	}
	if len(s.Providers) == 0 && len(s.Locked) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", r, backends.ErrNoCatalogue)
	}
	backends.SortProviders(ps)
	return ps, unknown, nil
}

// VersionsOf returns the versions of p in r that the selection wants, newest
// first.
func (s Selection) VersionsOf(ctx context.Context, r backends.Reader, p backends.Provider) ([]backends.Version, error) {
	vs, err := r.Versions(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.versionsAmong(p, vs), nil
}

// versionsAndArchives returns the selected versions of p in r and their
// archives (of every platform). A place that lists all of a provider's
// archives at once (backends.Lister: a filesystem mirror) is read once,
// not once for the versions and again for the archives.
func (s Selection) versionsAndArchives(ctx context.Context, r backends.Reader, p backends.Provider) ([]backends.Version, []backends.Archive, error) {
	l, ok := r.(backends.Lister)
	if _, some := r.(backends.VersionsLister); !ok || some {
		// A place that lists chosen versions faster (a network mirror
		// reading one document per version) reads only the selected ones.
		vs, err := s.VersionsOf(ctx, r, p)
		if err != nil {
			return nil, nil, err
		}
		as, err := backends.ListArchives(ctx, r, p, vs)
		return vs, as, err
	}
	all, err := l.AllArchives(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var offered []backends.Version
	var key backends.VersionKey
	for _, a := range all {
		if k := key.Of(a.Version); !seen[k] {
			seen[k] = true
			offered = append(offered, a.Version)
		}
	}
	backends.SortVersionsNewestFirst(offered)
	vs := s.versionsAmong(p, offered)
	if len(vs) == len(offered) {
		return vs, all, nil // every version is selected
	}
	want := make(map[string]bool, len(vs))
	for _, v := range vs {
		want[v.String()] = true
	}
	out := all[:0]
	for _, a := range all {
		if want[key.Of(a.Version)] {
			out = append(out, a)
		}
	}
	return vs, out, nil
}

// versionsAmong picks the selected versions of p among those a place
// offers.
func (s Selection) versionsAmong(p backends.Provider, vs []backends.Version) []backends.Version {
	if s.Pinned != nil {
		var out []backends.Version
		for _, v := range vs {
			if len(s.pinnedAt(p, v)) > 0 {
				out = append(out, v)
			}
		}
		backends.SortVersionsNewestFirst(out)
		return out
	}
	if l, ok := s.Locked[p]; ok {
		for _, v := range vs {
			if v.Equal(l.Version) && v.String() == l.Version.String() {
				return []backends.Version{v}
			}
		}
		return nil
	}
	return s.Versions.ProviderVersions(vs)
}

// pinnedAt returns the pins of p at exactly v (one per lock file or
// constraint that chose it).
func (s Selection) pinnedAt(p backends.Provider, v backends.Version) []Locked {
	var out []Locked
	for _, l := range s.Pinned[p] {
		if l.Version.Equal(v) && l.Version.String() == v.String() {
			out = append(out, l)
		}
	}
	return out
}

// PinnedMissing returns the versions of p the selection pins that
// offered (the versions a source has) lacks.
func (s Selection) PinnedMissing(p backends.Provider, offered []backends.Version) []backends.Version {
	var out []backends.Version
	seen := map[string]bool{}
	for _, l := range s.Pinned[p] {
		v := l.Version.String()
		if seen[v] {
			continue
		}
		seen[v] = true
		found := false
		for _, o := range offered {
			found = found || o.String() == v
		}
		if !found {
			out = append(out, l.Version)
		}
	}
	return out
}

// WantsPlatform reports whether the selection includes plat.
func (s Selection) WantsPlatform(plat backends.Platform) bool {
	if len(s.Platforms) == 0 {
		return true
	}
	for _, p := range s.Platforms {
		if p == plat {
			return true
		}
	}
	return false
}

// lockAbout reports whether the lock that selects pkg's version is about
// pkg's platform (Locked.Platforms), or says nothing of platforms.
func (s Selection) lockAbout(pkg backends.Package) bool {
	about := func(l Locked) bool { return l.Platforms == nil || slices.Contains(l.Platforms, pkg.Platform) }
	if s.Pinned != nil {
		return slices.ContainsFunc(s.pinnedAt(pkg.Provider, pkg.Version), about)
	}
	l, ok := s.Locked[pkg.Provider]
	return !ok || !l.Version.Equal(pkg.Version) || about(l)
}

// LockEvidence returns the lock file's hashes for pkg, if a lock is in play.
func (s Selection) LockEvidence(pkg backends.Package) []hashing.Evidence {
	if s.Pinned != nil {
		var out []hashing.Evidence
		for _, l := range s.pinnedAt(pkg.Provider, pkg.Version) {
			if len(l.Hashes) > 0 {
				out = append(out, hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceLockFile, Detail: l.Source}, Hashes: l.Hashes, AnyOf: true})
			}
		}
		return out
	}
	l, ok := s.Locked[pkg.Provider]
	if !ok || !l.Version.Equal(pkg.Version) || len(l.Hashes) == 0 {
		return nil
	}
	return []hashing.Evidence{{Source: hashing.Source{Kind: hashing.SourceLockFile, Detail: l.Source}, Hashes: l.Hashes, AnyOf: true}}
}

// Resolve lists the archives of r the selection wants, provider by provider,
// newest version first. When a provider the selection names has none, or
// nothing is selected at all, it returns them with a noMatchError.
func (s Selection) Resolve(ctx context.Context, r backends.Reader) ([]backends.Archive, error) {
	var out []backends.Archive
	unselected, err := s.resolveEach(ctx, r, func(_ backends.Provider, as []backends.Archive) error {
		out = append(out, as...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, unselected
}

// ResolveEach is Resolve handing fn each provider's archives, in order, as
// they are listed, and keeping none: ls of 100,000 archives holds one
// provider's at a time. It returns Resolve's error after the last call;
// where the selection names providers (Names), that can be a noMatchError
// after some calls have been made, and a place failing to list a provider
// ends it after the calls for those before.
func (s Selection) ResolveEach(ctx context.Context, r backends.Reader, fn func(p backends.Provider, as []backends.Archive) error) error {
	unselected, err := s.resolveEach(ctx, r, fn)
	if err != nil {
		return err
	}
	return unselected
}

// Names reports whether the selection names providers, each of which must
// match something in a place.
func (s Selection) Names() bool {
	return s.Pinned != nil || s.Locked != nil || len(s.Providers) > 0
}

// resolveEach lists the selected archives of each provider into fn; err is
// a listing's or fn's, unselected what checkSelected says of the whole.
func (s Selection) resolveEach(ctx context.Context, r backends.Reader, fn func(p backends.Provider, as []backends.Archive) error) (unselected, err error) {
	ps, err := s.ProvidersIn(ctx, r)
	if err != nil {
		return nil, err
	}
	selected := map[backends.Provider]bool{}
	for _, p := range ps {
		as, err := s.ArchivesOf(ctx, r, p)
		if err != nil {
			return nil, err
		}
		selected[p] = len(as) > 0
		if err := fn(p, as); err != nil {
			return nil, err
		}
	}
	return s.checkSelected(ctx, r, ps, selected), nil
}

// ArchivesOf lists the archives of p in r the selection wants.
func (s Selection) ArchivesOf(ctx context.Context, r backends.Reader, p backends.Provider) ([]backends.Archive, error) {
	_, as, err := s.versionsAndArchives(ctx, r, p)
	if err != nil {
		return nil, err
	}
	out := as[:0]
	for _, a := range as {
		if s.WantsPlatform(a.Platform) && s.lockAbout(a.Package) {
			a.Evidence = append(a.Evidence, s.LockEvidence(a.Package)...)
			out = append(out, a)
		}
	}
	return out, nil
}

// ErrNothingSelected: a selection matches nothing a place holds. The error
// carrying it says what the place holds instead.
var ErrNothingSelected = errors.New("nothing selected")

// noMatchError says, for each provider a selection names, why it selects
// nothing in a place.
type noMatchError struct{ Reasons []string }

func (e *noMatchError) Error() string { return strings.Join(e.Reasons, "; ") }

// Is makes errors.Is(err, ErrNothingSelected) hold.
func (e *noMatchError) Is(target error) bool { return target == ErrNothingSelected }

// names reports whether the selection asks for p by name: a --provider
// filter or a lock file entry, rather than every provider of a place.
func (s Selection) names(p backends.Provider) bool {
	if _, ok := s.Pinned[p]; ok {
		return true
	}
	if _, ok := s.Locked[p]; ok {
		return true
	}
	for _, f := range s.Providers {
		if f.Matches(p) {
			return true
		}
	}
	return false
}

// unmatched explains why p selects nothing in r, naming what r holds.
func (s Selection) unmatched(ctx context.Context, r backends.Reader, p backends.Provider) string {
	all, err := r.Versions(ctx, p)
	switch {
	case err != nil && !errors.Is(err, backends.ErrNotFound):
		return fmt.Sprintf("%s: %s: %v", r, p, err)
	case len(all) == 0:
		return fmt.Sprintf("%s holds no version of %s", r, p)
	}
	avail := backends.VersionList(all, 5)
	if pins, ok := s.Pinned[p]; ok {
		var want []string
		for _, l := range pins {
			want = append(want, l.Version.String())
		}
		return fmt.Sprintf("%s does not offer %s %s (available: %s)", r, p, strings.Join(want, ", "), avail)
	}
	if l, ok := s.Locked[p]; ok {
		return fmt.Sprintf("%s does not offer %s %s, the version %s locks (available: %s)", r, p, l.Version, l.Source, avail)
	}
	if len(s.Versions.Filter(all)) == 0 {
		return fmt.Sprintf("no version of %s in %s matches %q (available: %s)", p, r, s.Versions.String(), avail)
	}
	return fmt.Sprintf("%s offers %s for none of the platforms %s", r, p, platformList(s.Platforms))
}

// checkSelected returns a noMatchError when providers the selection names
// (or, naming none, every provider) selected nothing in r.
func (s Selection) checkSelected(ctx context.Context, r backends.Reader, providers []backends.Provider, selected map[backends.Provider]bool) error {
	var reasons []string
	any := false
	for _, p := range providers {
		any = any || selected[p]
		if !selected[p] && s.names(p) {
			reasons = append(reasons, s.unmatched(ctx, r, p))
		}
	}
	if len(reasons) == 0 && !any {
		switch {
		case len(providers) == 0:
			reasons = append(reasons, s.noProviders(ctx, r))
		case s.Versions.IsZero() && len(s.Platforms) == 0:
			reasons = append(reasons, fmt.Sprintf("%s holds no archives", r))
		default:
			reasons = append(reasons, fmt.Sprintf("%s holds nothing matching version %q and platforms %s", r, s.Versions.String(), platformList(s.Platforms)))
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	return &noMatchError{Reasons: reasons}
}

// noProviders says that no provider of r matches the selection, and which
// it holds.
func (s Selection) noProviders(ctx context.Context, r backends.Reader) string {
	listed, err := r.Providers(ctx)
	if errors.Is(err, backends.ErrNoCatalogue) {
		return fmt.Sprintf("%s cannot list its providers, and the selection names none here (the lock's, or HOST/NAMESPACE/TYPE with --provider)", r)
	}
	if len(listed) == 0 {
		return fmt.Sprintf("%s holds no providers", r)
	}
	var names []string
	for _, p := range listed[:min(len(listed), 8)] {
		names = append(names, p.String())
	}
	more := ""
	if len(listed) > 8 {
		more = fmt.Sprintf(" and %d more", len(listed)-8)
	}
	return fmt.Sprintf("no provider in %s matches the selection (it holds %s%s)", r, strings.Join(names, ", "), more)
}

func platformList(ps []backends.Platform) string {
	if len(ps) == 0 {
		return "(any)"
	}
	return backends.JoinPlatforms(ps)
}
