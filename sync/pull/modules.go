package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/ttlcache"
	"github.com/tfmirror/tfmirror/hashing"
)

// ModuleUpstream is a module registry a ModuleMirror fetches from.
type ModuleUpstream interface {
	String() string
	// Versions lists a module's versions as the registry writes them.
	Versions(ctx context.Context, m modules.Module) ([]string, error)
	// Location is where the registry says a version's package lives.
	Location(ctx context.Context, m modules.Module, v modules.Version) (modules.Location, error)
}

// ModuleOptions configure a ModuleMirror.
type ModuleOptions struct {
	// Cache is where fetched packages land, and what is served first; it
	// must also stream them (modules.PackageOpener).
	Cache modules.Writer
	// Upstream opens the registry of a module hostname; nil serves CACHE
	// alone (offline).
	Upstream func(ctx context.Context, host string) (ModuleUpstream, error)
	// UpstreamName names the upstream in messages.
	UpstreamName string
	// Builder fetches a package from where a registry says it lives
	// (archives, X-Terraform-Get, git tags pinned to their commit) and
	// packs it as module places keep it.
	Builder modules.Builder
	// Policy says which modules and versions may be pulled through.
	Policy *Policy
	// TTL is how long an upstream listing is reused; zero: DefaultTTL.
	TTL    time.Duration
	Logger *log.Logger
	// Metrics count the fetches (nil: none).
	Metrics *Metrics
}

// ModuleMirror is a pull-through mirror of module packages: what CACHE
// holds is served as it is; a version CACHE lacks is fetched from its
// registry's location the first time a client asks for it (once, however
// many ask), packed, verified and landed in CACHE, whose copy is served
// from then on, also while the registry is down.
type ModuleMirror struct {
	opts ModuleOptions

	lists   ttlcache.Cache[[]modules.Version]
	fetches singleflight.Group // one fetch per module version

	landed, failed, fetching atomic.Int64 // for /healthz
}

// ModuleHealth is what /healthz says of the module fetches since the
// start: landed, failed, and under way.
type ModuleHealth struct {
	Fetches       int64 `json:"module_fetches"`
	FetchFailures int64 `json:"module_fetch_failures"`
	Fetching      int64 `json:"module_fetching"`
}

// Health counts the module fetches.
func (mm *ModuleMirror) Health() ModuleHealth {
	// fetching first: a fetch is counted before it stops running, so one
	// no longer running is among the counts read after.
	fetching := mm.fetching.Load()
	return ModuleHealth{Fetches: mm.landed.Load(), FetchFailures: mm.failed.Load(), Fetching: fetching}
}

// NewModules returns a pull-through mirror of modules.
func NewModules(o ModuleOptions) *ModuleMirror {
	return &ModuleMirror{opts: o, lists: ttlcache.Cache[[]modules.Version]{TTL: orDefaultTTL(o.TTL)}}
}

func (mm *ModuleMirror) String() string { return mm.opts.Cache.String() }

func (mm *ModuleMirror) logf(format string, args ...any) {
	if mm.opts.Logger != nil {
		mm.opts.Logger.Printf(format, args...)
	}
}

// offline reports whether the mirror serves CACHE alone.
func (mm *ModuleMirror) offline() bool { return mm.opts.Upstream == nil }

// held lists what CACHE holds of m, by canonical version.
func (mm *ModuleMirror) held(ctx context.Context, m modules.Module) (map[string]modules.Listing, error) {
	ls, err := mm.opts.Cache.ListModule(ctx, m, backends.VersionConstraint{})
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return nil, err
	}
	out := map[string]modules.Listing{}
	for _, it := range ls.Items {
		if it.Err == nil {
			out[it.Version.String()] = it
		}
	}
	return out, nil
}

// upstreamVersions lists m's versions upstream, through the listing
// cache: served stale, with a warning, while the registry fails.
func (mm *ModuleMirror) upstreamVersions(ctx context.Context, m modules.Module) ([]modules.Version, error) {
	v, stale, err := mm.lists.Get(ctx, "module versions\x00"+m.String(), func(ctx context.Context) ([]modules.Version, error) {
		up, err := mm.opts.Upstream(ctx, m.Host)
		if err != nil {
			return nil, err
		}
		raw, err := up.Versions(ctx, m)
		if errors.Is(err, backends.ErrNotFound) {
			raw, err = nil, nil // an answer: none
		}
		if err != nil {
			return nil, err
		}
		vs, _ := modules.Select(raw, backends.VersionConstraint{})
		return vs, nil
	})
	if stale > 0 {
		mm.logf("warning: module %s: the upstream %s failed (%v); serving its listing of %s ago", m, mm.opts.UpstreamName, err, stale.Round(time.Second))
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ModuleVersions lists what CACHE holds of m with what the upstream
// offers and the policy allows, newest first. While the upstream fails,
// CACHE's versions are listed alone.
func (mm *ModuleMirror) ModuleVersions(ctx context.Context, m modules.Module) ([]modules.Version, error) {
	held, err := mm.held(ctx, m)
	if err != nil {
		return nil, err
	}
	var out []modules.Version
	for _, it := range held {
		out = append(out, it.Version)
	}
	why := mm.opts.Policy.module(m)
	if why == "" && !mm.offline() {
		up, err := mm.upstreamVersions(ctx, m)
		switch {
		case err != nil && len(out) == 0:
			return nil, fmt.Errorf("module %s: the upstream %s: %w", m, mm.opts.UpstreamName, err)
		case err != nil:
			mm.logf("warning: module %s: the upstream %s failed (%v); listing what the cache holds", m, mm.opts.UpstreamName, err)
		default:
			seen := mm.moduleSeen(ctx, m, up)
			allowed := mm.opts.Policy.moduleVersions(m, up, seen)
			for _, v := range allowed {
				if _, ok := held[v.String()]; !ok {
					out = append(out, v)
				}
			}
			if len(allowed) == 0 && len(up) > 0 {
				why = fmt.Sprintf("the policy offers none of the %d versions of module %s upstream; the newest: %s", len(up), m, mm.opts.Policy.moduleVersion(m, up[0], up, seen))
			}
		}
	}
	if len(out) == 0 {
		if why == "" {
			why = fmt.Sprintf("neither %s nor the upstream %s has a version of module %s", mm.opts.Cache, mm.opts.UpstreamName, m)
			if mm.offline() {
				why = fmt.Sprintf("serving %s offline: it holds no version of module %s", mm.opts.Cache, m)
			}
		}
		return nil, fmt.Errorf("%s: %w", why, backends.ErrNotFound)
	}
	slices.SortFunc(out, func(a, b modules.Version) int { return b.Compare(a) })
	return out, nil
}

// ModulePackage makes sure CACHE holds m at v, fetching it the first time,
// and says how to serve it.
func (mm *ModuleMirror) ModulePackage(ctx context.Context, m modules.Module, v modules.Version) (modules.Served, error) {
	held, err := mm.held(ctx, m)
	if err != nil {
		return modules.Served{}, err
	}
	if it, ok := held[v.String()]; ok {
		return modules.ServedFrom(it), nil
	}
	if why := mm.refusal(ctx, m, v); why != "" {
		return modules.Served{}, fmt.Errorf("%s: %w", why, backends.ErrNotFound)
	}
	_, err, _ = mm.fetches.Do(m.String()+"\x00"+v.String(), func() (any, error) {
		return nil, mm.counted(context.WithoutCancel(ctx), m, v)
	})
	if err != nil {
		return modules.Served{}, err
	}
	held, err = mm.held(ctx, m)
	if err != nil {
		return modules.Served{}, err
	}
	it, ok := held[v.String()]
	if !ok {
		return modules.Served{}, fmt.Errorf("module %s %s landed in %s, which does not list it", m, v, mm.opts.Cache)
	}
	return modules.ServedFrom(it), nil
}

// refusal says why m at v, which CACHE lacks, is not fetched, or "".
func (mm *ModuleMirror) refusal(ctx context.Context, m modules.Module, v modules.Version) string {
	if mm.offline() {
		return fmt.Sprintf("serving %s offline: it holds no module %s %s", mm.opts.Cache, m, v)
	}
	if why := mm.opts.Policy.module(m); why != "" {
		return why
	}
	up, err := mm.upstreamVersions(ctx, m)
	if err != nil {
		return "" // the fetch says what fails
	}
	if !slices.ContainsFunc(up, func(u modules.Version) bool { return u.Equal(v) }) {
		return fmt.Sprintf("the upstream %s offers no version %s of module %s", mm.opts.UpstreamName, v, m)
	}
	return mm.opts.Policy.moduleVersion(m, v, up, mm.moduleSeen(ctx, m, up))
}

// counted is fetch, counted for /healthz and /metrics.
func (mm *ModuleMirror) counted(ctx context.Context, m modules.Module, v modules.Version) error {
	mm.fetching.Add(1)
	mm.opts.Metrics.moduleFetchStarted()
	size, err := mm.fetch(ctx, m, v)
	// Counted before it stops running: Health reads fetching first.
	if err != nil {
		mm.failed.Add(1)
	} else {
		mm.landed.Add(1)
	}
	mm.fetching.Add(-1)
	mm.opts.Metrics.moduleFetchEnded(size, err)
	return err
}

// fetch builds m at v from where its registry says it lives and lands it
// in CACHE, verified: the package's commit and sha256 are its provenance.
func (mm *ModuleMirror) fetch(ctx context.Context, m modules.Module, v modules.Version) (int64, error) {
	up, err := mm.opts.Upstream(ctx, m.Host)
	if err != nil {
		return 0, fmt.Errorf("module %s %s: the upstream %s: %w", m, v, mm.opts.UpstreamName, err)
	}
	loc, err := up.Location(ctx, m, v)
	if err != nil {
		return 0, fmt.Errorf("module %s %s: the upstream %s: %w", m, v, up, err)
	}
	pkg, err := mm.opts.Builder.Build(ctx, m, v, loc, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = pkg.Remove() }() // the temporary zip; a leftover is in TempDir
	stored, err := mm.opts.Cache.Put(ctx, pkg, false, nil)
	if err != nil {
		return 0, fmt.Errorf("module %s %s: landing it in %s: %w", m, v, mm.opts.Cache, err)
	}
	res := hashing.Result{Sums: pkg.Sums, Checks: stored.Checks}
	if err := res.Err(); err != nil {
		return 0, fmt.Errorf("module %s %s: %s holds it, but: %w", m, v, mm.opts.Cache, err)
	}
	commit := ""
	if pkg.Revision != "" {
		commit = ", commit " + pkg.Revision
	}
	mm.logf("module %s %s: fetched from %s%s, sha256 %s, %d files; landed in %s as %s", m, v, loc, commit, pkg.Sums.ZH.Value(), pkg.Files, mm.opts.Cache, stored.Address)
	return pkg.Size, nil
}

// OpenModule streams the package CACHE holds.
func (mm *ModuleMirror) OpenModule(ctx context.Context, m modules.Module, v modules.Version) (io.ReadCloser, int64, error) {
	o, ok := mm.opts.Cache.(modules.PackageOpener)
	if !ok {
		return nil, 0, fmt.Errorf("%s cannot stream the module packages it holds", mm.opts.Cache)
	}
	return o.OpenPackage(ctx, m, v)
}
