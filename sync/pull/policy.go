package pull

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// Policy says what a pull-through mirror may fetch: the providers a spec's
// provider blocks and allow patterns name (every provider when it names
// none), less those its deny patterns name; the versions each block's
// constraint selects; the platforms it lists; and, with a cooldown
// (min_age), only versions first seen upstream at least that long ago. A
// nil Policy allows everything. What CACHE holds is served whatever the
// policy says.
type Policy struct {
	Spec *spec.Spec
	// Seen records when each version was first seen upstream; needed
	// with a cooldown.
	Seen FirstSeen
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// FirstSeen keeps, in CACHE, when each version of a provider was first
// seen upstream.
type FirstSeen interface {
	// Saw records now as the first sighting of those of vs not seen
	// before, and returns when each of vs was first seen.
	Saw(ctx context.Context, p backends.Provider, vs []backends.Version, now time.Time) (map[string]time.Time, error)
}

func (pol *Policy) now() time.Time {
	if pol.Now != nil {
		return pol.Now()
	}
	return time.Now()
}

// name is the policy's file as answers name it: its base name (an answer
// names nothing local).
func (pol *Policy) name() string { return filepath.Base(pol.Spec.Path) }

func (pol *Policy) block(p backends.Provider) *spec.Provider {
	for i := range pol.Spec.Providers {
		if pol.Spec.Providers[i].Addr == p {
			return &pol.Spec.Providers[i]
		}
	}
	return nil
}

// provider says why p may not be pulled through, or "".
func (pol *Policy) provider(p backends.Provider) string {
	if pol == nil {
		return ""
	}
	s := pol.Spec
	why := s.Denied(p)
	if bare := hostOnly(p); bare != p && !strings.HasPrefix(why, "deny ") {
		// A deny pattern names a registry by hostname: it refuses the
		// registry's providers however the hostname is spelt (case,
		// punycode and a :443 are normalised away already; a port is not).
		if w := s.Denied(bare); strings.HasPrefix(w, "deny ") {
			why = w
		}
	}
	if strings.HasPrefix(why, "deny ") {
		return fmt.Sprintf("the policy %s refuses %s: %s", pol.name(), p, why)
	}
	named := pol.block(p) != nil || len(s.Allow) > 0 && why == ""
	if (len(s.Allow) > 0 || len(s.Providers) > 0) && !named {
		return fmt.Sprintf("the policy %s names %s in no provider block or allow pattern", pol.name(), p)
	}
	return ""
}

// Hosts are the registry hostnames the policy names: its provider blocks'
// and its allow patterns' (a pattern's wildcard hostname names none).
func (pol *Policy) Hosts() []string {
	if pol == nil {
		return nil
	}
	var out []string
	for _, b := range pol.Spec.Providers {
		out = append(out, b.Addr.Hostname)
	}
	for _, pt := range pol.Spec.Allow {
		switch pt.Hostname {
		case "":
			out = append(out, pol.Spec.DefaultRegistry)
		case "*":
		default:
			out = append(out, pt.Hostname)
		}
	}
	for _, b := range pol.Spec.Modules {
		out = append(out, b.Addr.Host)
	}
	for _, pt := range pol.Spec.AllowModules {
		if pt.Host != modules.Wildcard {
			out = append(out, pt.Host)
		}
	}
	return out
}

// hostOnly is p with its hostname's port, if any, left out.
func hostOnly(p backends.Provider) backends.Provider {
	if i := strings.LastIndexByte(p.Hostname, ':'); i > 0 && !strings.HasSuffix(p.Hostname, "]") {
		p.Hostname = p.Hostname[:i]
	}
	return p
}

// constrains reports whether the policy limits p's versions.
func (pol *Policy) constrains(p backends.Provider) bool {
	if pol == nil {
		return false
	}
	b := pol.block(p)
	return pol.Spec.MinAge > 0 || b != nil && !b.Versions.IsZero()
}

// versions returns those of up (the upstream's) that the policy allows.
func (pol *Policy) versions(p backends.Provider, up []backends.Version, seen map[string]time.Time) []backends.Version {
	if !pol.constrains(p) {
		return up
	}
	var out []backends.Version
	for _, v := range up {
		if pol.version(p, v, up, seen) == "" {
			out = append(out, v)
		}
	}
	return out
}

// version says why v of p may not be pulled through, or "": up are the
// versions the upstream offers, seen when each was first seen.
func (pol *Policy) version(p backends.Provider, v backends.Version, up []backends.Version, seen map[string]time.Time) string {
	if !pol.constrains(p) {
		return ""
	}
	var c backends.VersionConstraint
	at := ""
	if b := pol.block(p); b != nil {
		c, at = b.Versions, b.At
	}
	return pol.versionWhy(p.String(), c, at, v, up, seen, c.ProviderVersions)
}

// versionWhy says why v of what (a provider or a module) may not be pulled
// through, or "": the cooldown, then c (from at in the file), which
// allowed picks the allowed versions of.
func (pol *Policy) versionWhy(what string, c backends.VersionConstraint, at string, v backends.Version, up []backends.Version, seen map[string]time.Time, allowed func([]backends.Version) []backends.Version) string {
	aged := up
	if age := pol.Spec.MinAge; age > 0 {
		aged = nil
		now := pol.now()
		for _, u := range up {
			if t, ok := seen[u.String()]; ok && !now.Before(t.Add(age)) {
				aged = append(aged, u)
			}
		}
		if !slices.ContainsFunc(aged, func(u backends.Version) bool { return u.String() == v.String() }) {
			if t, ok := seen[v.String()]; ok {
				return fmt.Sprintf("the policy %s offers a version only %s after it was first seen upstream; %s %s was first seen %s, so it is offered from %s",
					pol.name(), age, what, v, t.UTC().Format(time.RFC3339), t.Add(age).UTC().Format(time.RFC3339))
			}
			return fmt.Sprintf("%s %s is not offered upstream", what, v)
		}
	}
	if !c.IsZero() && !slices.ContainsFunc(allowed(aged), func(u backends.Version) bool { return u.String() == v.String() }) {
		return fmt.Sprintf("the policy %s (%s) allows versions %q of %s, not %s", pol.name(), filepath.Base(at), c, what, v)
	}
	return ""
}

// platform says why p's packages for plat may not be pulled through, or "".
func (pol *Policy) platform(p backends.Provider, plat backends.Platform) string {
	plats := pol.platforms(p)
	if len(plats) == 0 || slices.Contains(plats, plat) {
		return ""
	}
	return fmt.Sprintf("the policy %s allows platforms %v of %s, not %s", pol.name(), plats, p, plat)
}

// firstSeen returns when each of up was first seen, recording the new
// ones, where the policy has a cooldown.
func (m *Mirror) firstSeen(ctx context.Context, p backends.Provider, up []backends.Version) map[string]time.Time {
	pol := m.opts.Policy
	if pol == nil || pol.Spec.MinAge <= 0 || pol.Seen == nil {
		return nil
	}
	seen, err := pol.Seen.Saw(ctx, p, up, pol.now())
	if err != nil {
		m.logf("error: %s: recording when its versions were first seen: %v", p, err)
	}
	return seen
}

// Explain says why the policy refuses what a client asked for: p, and v
// and plat where not nil and empty; "" when it does not.
func (m *Mirror) Explain(ctx context.Context, p backends.Provider, v backends.Version, plat *backends.Platform) string {
	pol := m.opts.Policy
	if m.Offline() {
		return "this mirror serves offline: only what its cache holds"
	}
	if why := m.refuses(p); why != "" {
		return why
	}
	if pol.constrains(p) {
		up, err := m.upstreamVersions(ctx, p)
		if err == nil && v != nil {
			if why := pol.version(p, v, up, m.firstSeen(ctx, p, up)); why != "" {
				return why
			}
		}
		if err == nil && v == nil && len(up) > 0 {
			seen := m.firstSeen(ctx, p, up)
			if len(pol.versions(p, up, seen)) == 0 {
				return fmt.Sprintf("the policy offers none of the %d versions of %s upstream; the newest: %s", len(up), p, pol.version(p, up[0], up, seen))
			}
		}
	}
	if v != nil {
		if rel, err := m.release(ctx, p, v); err == nil && rel.refused != nil {
			return fmt.Sprintf("%s %s is refused: %v", p, v, rel.refused)
		}
	}
	if plat != nil {
		return pol.platform(p, *plat)
	}
	return ""
}
