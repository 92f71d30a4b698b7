package spec

import (
	"context"
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
)

// Destination returns what the spec wants of the destination written as
// place (same returns whether two places are the same one), or false when
// place is none of its destinations.
func (w *Wanted) Destination(place string, same func(a, b string) bool) (Destination, bool) {
	for _, d := range w.Destinations {
		if same(d.Place, place) {
			return d, true
		}
	}
	return Destination{}, false
}

// Retention is what prune keeps by a spec: the packages it wants of one
// destination. A provider the spec could not resolve (its source could
// not be read, a version it locks is not offered) is kept whole: what the
// spec wants of it is not known.
type Retention struct {
	path      string
	providers map[backends.Provider]Resolved
	problems  map[backends.Provider][]string
}

var _ sync.VersionWanter = (*Retention)(nil)

// Retention returns what prune keeps of d by the spec.
func (w *Wanted) Retention(s *Spec, d Destination) *Retention {
	r := &Retention{path: s.Path, providers: map[backends.Provider]Resolved{}, problems: map[backends.Provider][]string{}}
	for _, p := range d.Providers {
		r.providers[p.Provider] = p
	}
	for _, pr := range w.Problems {
		r.problems[pr.Provider] = append(r.problems[pr.Provider], pr.Detail)
	}
	return r
}

func (r *Retention) String() string { return "spec " + r.path }

// Wants reports whether the spec wants pkg in the destination, and why.
func (r *Retention) Wants(_ context.Context, pkg backends.Package) (bool, string, error) {
	if probs := r.problems[pkg.Provider]; len(probs) > 0 {
		return true, fmt.Sprintf("%s cannot say which versions it wants (%s), so none is removed", r, strings.Join(probs, "; ")), nil
	}
	res, ok := r.providers[pkg.Provider]
	if !ok {
		return false, fmt.Sprintf("it wants no version of %s", pkg.Provider), nil
	}
	vs := res.Versions()
	var want []string
	found := false
	for _, v := range vs {
		want = append(want, v.String())
		found = found || v.String() == pkg.Version.String()
	}
	if !found {
		return false, "it wants " + strings.Join(want, ", "), nil
	}
	if plats := res.Selection.Platforms; len(plats) > 0 && !res.Selection.WantsPlatform(pkg.Platform) {
		return false, "it wants the platforms " + backends.JoinPlatforms(plats), nil
	}
	return true, fmt.Sprintf("wanted by %s (%s)", r, strings.Join(res.From[pkg.Version.String()], ", ")), nil
}

// WantedVersions lists the versions the spec wants of p, newest first;
// prune keeps an older version in place of one the destination lacks.
func (r *Retention) WantedVersions(p backends.Provider) ([]backends.Version, bool) {
	if len(r.problems[p]) > 0 {
		return nil, false
	}
	res, ok := r.providers[p]
	if !ok {
		return nil, false
	}
	return res.Versions(), true
}

// Upstream is outdated's view of the spec: for each provider it wants, its
// source and the versions it pins; a provider it could not resolve is an
// error naming why; others are left out.
func (w *Wanted) Upstream(d Destination) sync.Upstream {
	problems := map[backends.Provider][]string{}
	for _, pr := range w.Problems {
		problems[pr.Provider] = append(problems[pr.Provider], pr.Detail)
	}
	return func(_ context.Context, p backends.Provider) (backends.Reader, func([]backends.Version) []backends.Version, error) {
		for _, res := range d.Providers {
			if res.Provider == p {
				pinned := res.Versions()
				return res.Source, func([]backends.Version) []backends.Version { return pinned }, nil
			}
		}
		if probs := problems[p]; len(probs) > 0 {
			return nil, nil, fmt.Errorf("%s", strings.Join(probs, "; "))
		}
		return nil, nil, nil
	}
}

// Providers lists the providers of d and those the spec could not resolve,
// which outdated compares even when the mirror lacks them.
func (w *Wanted) Providers(d Destination) []backends.Provider {
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	for _, res := range d.Providers {
		if !seen[res.Provider] {
			seen[res.Provider] = true
			out = append(out, res.Provider)
		}
	}
	for _, pr := range w.Problems {
		if !seen[pr.Provider] {
			seen[pr.Provider] = true
			out = append(out, pr.Provider)
		}
	}
	backends.SortProviders(out)
	return out
}
