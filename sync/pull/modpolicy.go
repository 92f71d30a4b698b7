package pull

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// The policy of modules: a spec's module blocks and module allow patterns
// (HOST/NAMESPACE/NAME/SYSTEM) name what may be pulled through (every
// module when it names none: provider blocks and patterns do not limit
// modules), deny patterns take modules out, a block's versions narrow
// what is offered, and min_age holds a new version back as for providers.

func (pol *Policy) moduleBlock(m modules.Module) *spec.Module {
	for i := range pol.Spec.Modules {
		if pol.Spec.Modules[i].Addr == m {
			return &pol.Spec.Modules[i]
		}
	}
	return nil
}

// module says why m may not be pulled through, or "".
func (pol *Policy) module(m modules.Module) string {
	if pol == nil {
		return ""
	}
	s := pol.Spec
	for _, pt := range s.DenyModules {
		if pt.Matches(m) {
			return fmt.Sprintf("the policy %s refuses module %s: deny %s", pol.name(), m, pt)
		}
	}
	if len(s.AllowModules) == 0 && len(s.Modules) == 0 || pol.moduleBlock(m) != nil {
		return ""
	}
	for _, pt := range s.AllowModules {
		if pt.Matches(m) {
			return ""
		}
	}
	return fmt.Sprintf("the policy %s names module %s in no module block or allow pattern", pol.name(), m)
}

// moduleVersion says why v of m may not be pulled through, or "".
func (pol *Policy) moduleVersion(m modules.Module, v modules.Version, up []modules.Version, seen map[string]time.Time) string {
	if pol == nil {
		return ""
	}
	var c backends.VersionConstraint
	at := ""
	if b := pol.moduleBlock(m); b != nil {
		c, at = b.Versions, b.At
	}
	if c.IsZero() && pol.Spec.MinAge <= 0 {
		return ""
	}
	return pol.versionWhy("module "+m.String(), c, at, v, up, seen, c.Filter)
}

// moduleVersions returns those of up the policy allows.
func (pol *Policy) moduleVersions(m modules.Module, up []modules.Version, seen map[string]time.Time) []modules.Version {
	var out []modules.Version
	for _, v := range up {
		if pol.moduleVersion(m, v, up, seen) == "" {
			out = append(out, v)
		}
	}
	return out
}

// moduleSeen returns when each of up was first seen, recording the new
// ones, where the policy has a cooldown. A module's sightings are kept as
// a provider's are, under a type no provider can have (it holds dots).
func (mm *ModuleMirror) moduleSeen(ctx context.Context, m modules.Module, up []modules.Version) map[string]time.Time {
	pol := mm.opts.Policy
	if pol == nil || pol.Spec.MinAge <= 0 || pol.Seen == nil {
		return nil
	}
	key := backends.Provider{Hostname: m.Host, Namespace: m.Namespace, Type: "module." + strings.ToLower(m.Name) + "." + m.System}
	seen, err := pol.Seen.Saw(ctx, key, up, pol.now())
	if err != nil {
		mm.logf("error: module %s: recording when its versions were first seen: %v", m, err)
	}
	return seen
}
