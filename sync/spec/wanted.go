package spec

import (
	"context"
	"fmt"
	"sort"
	"strings"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// Want is one provider a spec wants, before any place is read: where from,
// for which platforms, and every ask for versions of it.
type Want struct {
	Provider backends.Provider
	// Source is the place it is copied from, as the command line writes
	// places: the provider block's, else the spec's, else its origin
	// registry (registry://HOST).
	Source string
	// Platforms wanted; none means every platform the source offers.
	Platforms []backends.Platform
	Asks      []Ask
}

// Ask is one reason to hold versions of a provider: a constraint of a
// provider block or a configuration, or a lock file's version.
type Ask struct {
	// Versions selects among the versions the source offers (with Latest,
	// the newest ones) when Locked is nil.
	Versions backends.VersionConstraint
	// Locked, when set, is exactly the version wanted, with the lock file's
	// hashes (Source names the file).
	Locked *sync.Locked
	// From names the file and line that ask.
	From []string
}

// Wants lists what the spec wants: its provider blocks and the requirements
// of the configurations under From, merged per provider and filtered by
// Allow and Deny. Notes say what was left out and why (a denied provider, a
// module not installed). It reads configuration files, no place.
func (s *Spec) Wants(ctx context.Context) (wants []Want, notes []string, err error) {
	byAddr := map[backends.Provider]*Want{}
	var order []backends.Provider
	get := func(p backends.Provider) *Want {
		w, ok := byAddr[p]
		if !ok {
			w = &Want{Provider: p}
			byAddr[p] = w
			order = append(order, p)
		}
		return w
	}
	for _, pr := range s.Providers {
		w := get(pr.Addr)
		if !pr.Versions.IsZero() {
			w.Asks = append(w.Asks, Ask{Versions: pr.Versions, From: []string{pr.At}})
		}
	}
	if len(s.From) > 0 {
		configs, derived, err := Derive(ctx, s.From, s.DefaultRegistry)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, derived...)
		for _, c := range configs {
			if c.LockErr != nil {
				return nil, nil, backends.Usagef("%v", c.LockErr)
			}
			for _, r := range c.Requirements {
				w := get(r.Provider)
				w.Asks = append(w.Asks, r.ask())
			}
		}
	}
	for _, p := range order {
		w := byAddr[p]
		if reason := s.denied(p); reason != "" {
			notes = append(notes, fmt.Sprintf("%s: left out: %s (asked for by %s)", p, reason, strings.Join(w.from(), ", ")))
			continue
		}
		if len(w.Asks) == 0 {
			return nil, nil, backends.Usagef("%s: provider %s has no versions, and no configuration under from requires it: give versions = \"...\"", s.blockAt(p), p)
		}
		s.settle(w)
		wants = append(wants, *w)
	}
	sort.Slice(wants, func(i, j int) bool { return wants[i].Provider.Less(wants[j].Provider) })
	return wants, notes, nil
}

// ask is what a configuration's requirement asks for.
func (r Requirement) ask() Ask {
	a := Ask{From: r.From}
	if r.Locked != nil {
		a.Locked = &sync.Locked{Version: r.Locked.Version, Hashes: r.Locked.Hashes, Source: lockSource(r.From), Malformed: r.Locked.Malformed}
		return a
	}
	a.Versions = r.Versions()
	return a
}

// lockSource is the lock file among from, for the evidence's label.
func lockSource(from []string) string {
	for _, f := range from {
		if strings.HasSuffix(f, ".terraform.lock.hcl") {
			return f
		}
	}
	return strings.Join(from, ", ")
}

func (w *Want) from() []string {
	var out []string
	for _, a := range w.Asks {
		out = append(out, a.From...)
	}
	return out
}

// settle fills in the source and platforms: the provider block's, else the
// spec's, else the origin registry and every platform.
func (s *Spec) settle(w *Want) {
	w.Source, w.Platforms = s.Source, s.Platforms
	for _, pr := range s.Providers {
		if pr.Addr != w.Provider {
			continue
		}
		if pr.Source != "" {
			w.Source = pr.Source
		}
		if len(pr.Platforms) > 0 {
			w.Platforms = pr.Platforms
		}
	}
	if w.Source == "" {
		w.Source = "registry://" + w.Provider.HostnameForDisplay()
	}
}

func (s *Spec) blockAt(p backends.Provider) string {
	for _, pr := range s.Providers {
		if pr.Addr == p {
			return pr.At
		}
	}
	return s.Path
}

// denied says why Allow or Deny leave p out, or "".
func (s *Spec) denied(p backends.Provider) string {
	for _, pt := range s.Deny {
		if pt.Matches(p, s.DefaultRegistry) {
			return "deny " + pt.String()
		}
	}
	if len(s.Allow) == 0 {
		return ""
	}
	for _, pt := range s.Allow {
		if pt.Matches(p, s.DefaultRegistry) {
			return ""
		}
	}
	return "no allow pattern matches it"
}

// WantedModules are the module blocks allow and deny leave in: a module
// matching a deny pattern of four parts is left out, and when allow has
// patterns of four parts, so is a module matching none of them. Allow's
// provider patterns do not limit modules, nor its module patterns
// providers: a kind allow names no pattern of is not limited. Notes say
// what was left out and why.
func (s *Spec) WantedModules() (mods []Module, notes []string) {
	for _, m := range s.Modules {
		if reason := s.moduleDenied(m); reason != "" {
			notes = append(notes, fmt.Sprintf("module %s: left out: %s (asked for by %s)", m.Addr, reason, m.At))
			continue
		}
		mods = append(mods, m)
	}
	return mods, notes
}

func (s *Spec) moduleDenied(m Module) string {
	for _, pt := range s.DenyModules {
		if pt.Matches(m.Addr) {
			return "deny " + pt.String()
		}
	}
	if len(s.AllowModules) == 0 {
		return ""
	}
	for _, pt := range s.AllowModules {
		if pt.Matches(m.Addr) {
			return ""
		}
	}
	return "no allow pattern of a module (HOST/NAMESPACE/NAME/SYSTEM) matches it"
}

// Opener opens a place as the command line names it (the command line
// passes its place factory, with credentials and TLS settings).
type Opener func(ctx context.Context, arg string) (backends.Reader, error)

// Resolved is one wanted provider resolved against its source: a selection
// pinned to the versions to hold, ready for sync.MakePlan.
type Resolved struct {
	Provider  backends.Provider
	Source    backends.Reader
	Selection sync.Selection
	// From names, for each version (its String form), what asks for it.
	From map[string][]string
	// Assumed says, per lock, which platforms were assumed
	// (lockcheck.AssumedLine).
	Assumed []string
}

// Versions are the pinned versions, newest first.
func (r Resolved) Versions() []backends.Version {
	var out []backends.Version
	seen := map[string]bool{}
	for _, l := range r.Selection.Pinned[r.Provider] {
		if !seen[l.Version.String()] {
			seen[l.Version.String()] = true
			out = append(out, l.Version)
		}
	}
	backends.SortVersionsNewestFirst(out)
	return out
}

// Problem is something wanted that cannot be had: a provider or version
// its source does not offer, a constraint no version meets, a source that
// cannot be read.
type Problem struct {
	Provider backends.Provider
	Version  string // "" when no one version is meant
	Platform string // "" when no one platform is meant
	Source   string
	Detail   string
	From     []string
}

// Wanted is a spec resolved against its sources.
type Wanted struct {
	// Destinations each with the providers it must hold: today every
	// destination holds every wanted provider.
	Destinations []Destination
	Problems     []Problem
	// Notes say what was left out and why.
	Notes []string
	// Assumed say, per lock, which platforms the lock files are assumed
	// to be about (lockcheck.AssumedLine): a command prints them as
	// notes, in --json too.
	Assumed []string
}

// Destination is one place and what it must hold.
type Destination struct {
	Place     string
	Providers []Resolved
	// sources is shared by the destinations of one Wanted: Plan lists a
	// source's archives once for all of them.
	sources *listCache
}

// Jobs is how many sources Wanted and Plan read at once.
const Jobs = 8

// Wanted resolves the spec: it opens each source once with open, lists the
// versions of each wanted provider there, and pins the versions each ask
// selects (a constraint's, a lock file's). What cannot be had becomes a
// Problem; only an Opener's error (a place that cannot be opened, a usage
// error) ends it.
func (s *Spec) Wanted(ctx context.Context, open Opener) (*Wanted, error) {
	wants, notes, err := s.Wants(ctx)
	if err != nil {
		return nil, err
	}
	sources := map[string]backends.Reader{}
	for _, w := range wants {
		if _, ok := sources[w.Source]; ok {
			continue
		}
		r, err := open(ctx, w.Source)
		if err != nil {
			return nil, err
		}
		sources[w.Source] = r
	}
	resolved := make([]*Resolved, len(wants))
	problems := make([][]Problem, len(wants))
	parallel(ctx, len(wants), func(i int) {
		resolved[i], problems[i] = resolve(ctx, wants[i], sources[wants[i].Source])
	})
	out := &Wanted{Notes: notes}
	var rs []Resolved
	for i := range wants {
		if resolved[i] != nil {
			rs = append(rs, *resolved[i])
			out.Assumed = append(out.Assumed, resolved[i].Assumed...)
		}
		out.Problems = append(out.Problems, problems[i]...)
	}
	cache := newListCache()
	for _, d := range s.Destinations {
		out.Destinations = append(out.Destinations, Destination{Place: d, Providers: rs, sources: cache})
	}
	return out, ctx.Err()
}

// resolve pins what each ask of w selects among the versions src offers.
func resolve(ctx context.Context, w Want, src backends.Reader) (*Resolved, []Problem) {
	problem := func(version, detail string, from []string) Problem {
		return Problem{Provider: w.Provider, Version: version, Source: src.String(), Detail: detail, From: from}
	}
	offered, err := src.Versions(ctx, w.Provider)
	if err != nil {
		return nil, []Problem{problem("", fmt.Sprintf("source %s: %s: %v", src, w.Provider, err), w.from())}
	}
	r := &Resolved{Provider: w.Provider, Source: src, From: map[string][]string{}}
	var pins []sync.Locked
	var problems []Problem
	for _, a := range w.Asks {
		if a.Locked != nil {
			if !offers(offered, a.Locked.Version) {
				problems = append(problems, problem(a.Locked.Version.String(), fmt.Sprintf("source %s does not offer %s %s, the version %s locks (available: %s)", src, w.Provider, a.Locked.Version, a.Locked.Source, versionList(offered)), a.From))
				continue
			}
			pins = append(pins, *a.Locked)
			r.From[a.Locked.Version.String()] = appendNew(r.From[a.Locked.Version.String()], a.From...)
			continue
		}
		picked := a.Versions.ProviderVersions(offered)
		if len(picked) == 0 {
			problems = append(problems, problem("", fmt.Sprintf("no version of %s in %s matches %q (available: %s)", w.Provider, src, a.Versions.String(), versionList(offered)), a.From))
		}
		for _, v := range picked {
			pins = append(pins, sync.Locked{Version: v, Source: strings.Join(a.From, ", ")})
			r.From[v.String()] = appendNew(r.From[v.String()], a.From...)
		}
	}
	if len(pins) == 0 {
		return nil, problems
	}
	r.Selection = sync.Selection{Pinned: map[backends.Provider][]sync.Locked{w.Provider: pins}, Platforms: w.Platforms}
	// A lock file's pin selects the platforms the lock is about, not every
	// one the source holds (which would each fail against the lock).
	r.Assumed = lockcheck.AboutLocks(ctx, &r.Selection, []backends.Reader{src})
	return r, problems
}

func offers(vs []backends.Version, v backends.Version) bool {
	for _, o := range vs {
		if o.String() == v.String() {
			return true
		}
	}
	return false
}

func versionList(vs []backends.Version) string {
	if len(vs) == 0 {
		return "none"
	}
	return backends.VersionList(vs, 10)
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, l := range list {
			found = found || l == it
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}

// parallel runs f(0..n-1) on at most Jobs goroutines, and no more calls
// once ctx ends.
func parallel(ctx context.Context, n int, f func(i int)) {
	sem := make(chan struct{}, Jobs)
	var wg gosync.WaitGroup
	for i := 0; i < n && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}(i)
	}
	wg.Wait()
}

// Planned is one wanted provider planned against one destination.
type Planned struct {
	Resolved
	Plan *sync.Plan // nil when Err is set
	Err  error
}

// Plan plans every provider of d against dst (opened by the caller from
// d.Place), a few at once. A provider whose plan fails is returned with its
// error; the others are planned regardless. The error is for a destination
// that cannot hold d's providers together (backends.ProviderChecker: an OCI
// template that cannot tell them apart), before anything is read. The
// sources' archives are listed once for all the destinations of one
// Wanted.
func Plan(ctx context.Context, d Destination, dst backends.Reader, opts sync.PlanOptions) ([]Planned, error) {
	if d.sources != nil && opts.ListSource == nil {
		opts.ListSource = d.sources.list
	}
	ps := make([]backends.Provider, len(d.Providers))
	for i, r := range d.Providers {
		ps[i] = r.Provider
	}
	if err := backends.CheckProviders(dst, ps); err != nil {
		return nil, err
	}
	out := make([]Planned, len(d.Providers))
	parallel(ctx, len(d.Providers), func(i int) {
		r := d.Providers[i]
		plan, err := sync.MakePlan(ctx, r.Source, dst, r.Selection, opts)
		out[i] = Planned{Resolved: r, Plan: plan, Err: err}
	})
	for i := range out {
		if out[i].Plan == nil && out[i].Err == nil {
			out[i] = Planned{Resolved: d.Providers[i], Err: ctx.Err()} // never started
		}
	}
	return out, nil
}
