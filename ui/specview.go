package ui

import (
	"maps"
	"slices"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/list"
)

// The spec view: the Providers view opened on a spec (ui --spec). Its
// destinations are compared: what they lack is its gaps; its sources are a
// number key away. The list adds every provider the spec wants, held
// nowhere yet or by a place that cannot list; a wanted provider's matrix
// has the versions and platforms the spec wants. S queues the gaps
// (specgaps.go).
type specView struct {
	*providersView
	// wanted is what the spec wants of each provider.
	wanted map[backends.Provider]wantedVersions
}

// wantedVersions are the versions a spec wants of one provider, and for
// which platforms (none: every platform its source offers).
type wantedVersions struct {
	versions  []backends.Version
	platforms []backends.Platform
}

func newSpecView(sh *shell, cfg Config) *specView {
	v := &specView{wanted: specWanted(cfg.Spec.Wanted)}
	v.providersView = newProviders(sh, cfg, func(ps []place, lo *list.Options[backends.Provider], _ *grid.Options) {
		for i := range ps {
			ps[i].compared = false
		}
		for k, i := range cfg.Spec.Dests {
			ps[i].compared = k < 4
		}
		// It opens on the first provider the spec wants, not on one it
		// merely finds in a place.
		lo.Start = func(p backends.Provider) bool { _, ok := v.wanted[p]; return ok }
	})
	v.kind = v
	v.setItems()
	return v
}

// specWanted is every version w wants of each provider, in any
// destination.
func specWanted(w *spec.Wanted) map[backends.Provider]wantedVersions {
	out := map[backends.Provider]wantedVersions{}
	if w == nil {
		return out
	}
	for _, d := range w.Destinations {
		for _, r := range d.Providers {
			wv := out[r.Provider]
			wv.versions = unionVersions(wv.versions, r.Versions())
			wv.platforms = r.Selection.Platforms
			out[r.Provider] = wv
		}
	}
	return out
}

// providerUnion adds what the spec wants, held nowhere yet or by a place
// that cannot list.
func (v *specView) providerUnion() []backends.Provider {
	return v.providerUnionWith(slices.Collect(maps.Keys(v.wanted)))
}

// matrixOf is a wanted provider's matrix: its rows are the versions the
// spec wants, landed or not (a version a destination holds that the spec
// does not want is no gap of it), and a spec that names its platforms
// wants no others: their cells would be gaps it does not have.
func (v *specView) matrixOf(p backends.Provider) grid.Data {
	want, ok := v.wanted[p]
	if !ok {
		return v.providersView.matrixOf(p)
	}
	keep := func(pl backends.Platform) bool {
		return len(want.platforms) == 0 || slices.Contains(want.platforms, pl)
	}
	more := func(add func(backends.Platform)) { v.wantedPlatforms(p, want, add) }
	return v.matrixFor(p, unionVersions(nil, want.versions), keep, more)
}

// wantedPlatforms adds the platforms a spec wants of provider p: those it
// names, or else every platform some place (its source) lists of a wanted
// version, so a version no compared place holds has its columns.
func (v *specView) wantedPlatforms(p backends.Provider, want wantedVersions, add func(backends.Platform)) {
	if len(want.platforms) > 0 {
		for _, pl := range want.platforms {
			add(pl)
		}
		return
	}
	for i := range v.places {
		h, _ := v.listingOf(p, i).loaded()
		for _, ver := range want.versions {
			for _, a := range h.archives[ver.String()] {
				add(a.Platform)
			}
		}
	}
}
