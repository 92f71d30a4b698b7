package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync"
)

// loadProvider lists mirror i's versions and archives of p.
func (v *providersView) loadProvider(ctx context.Context, i int, p backends.Provider) (provHolding, []string, error) {
	r := v.mirrors[i].reader
	var vs []backends.Version
	var as []backends.Archive
	var err error
	if l, ok := r.(backends.Lister); ok {
		// One pass lists every archive; the versions are theirs.
		if as, err = l.AllArchives(ctx, p); errors.Is(err, backends.ErrNotFound) {
			return provHolding{}, nil, nil // the mirror holds nothing of p
		}
		seen := map[string]bool{}
		for _, a := range as {
			if s := a.Version.String(); !seen[s] {
				seen[s] = true
				vs = append(vs, a.Version)
			}
		}
		backends.SortVersionsNewestFirst(vs)
	} else {
		if vs, err = r.Versions(ctx, p); errors.Is(err, backends.ErrNotFound) {
			return provHolding{}, nil, nil
		}
		vs = v.kind.listedVersions(p, vs)
		if err == nil {
			as, err = backends.ListArchives(ctx, r, p, vs)
		}
	}
	h := provHolding{vs: vs, archives: map[string]map[string]backends.Archive{}}
	for _, a := range as {
		s := a.Version.String()
		if h.archives[s] == nil {
			h.archives[s] = map[string]backends.Archive{}
		}
		h.archives[s][a.Platform.String()] = a
	}
	if pl, ok := r.(backends.ProvenanceLister); ok && err == nil && len(as) > 0 {
		// Which versions providers.v1 offers, for Details; a listing
		// that fails leaves it unknown.
		h.kept, _ = pl.ProvenanceVersions(ctx, p)
	}
	return h, warningsAbout(r, p), err
}

// warningsAbout is what r ignored while listing p (a document it could not
// read): its warnings that name p's directory.
func warningsAbout(r backends.Reader, p backends.Provider) []string {
	w, ok := r.(backends.Warner)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range w.Warnings() {
		if strings.Contains(s, p.String()+"/") {
			out = append(out, s)
		}
	}
	return out
}

// reload lists every mirror's catalogue again, and the provider shown:
// what the list and the matrix show was listed before a sync from
// elsewhere changed the mirrors. The provider under the cursor stays
// shown once the catalogues are in.
func (v *providersView) reload() tea.Cmd {
	v.forget()
	v.catGen++
	for _, mr := range v.mirrors {
		mr.listed, mr.noCatalogue, mr.unknown, mr.err, mr.providers = false, false, nil, nil, nil
	}
	clear(v.verified)
	clear(v.newest)
	v.surveying = false // its step finds a newer round and is dropped
	v.hasCurrent = false
	v.noteAllGaps()
	v.kind.rebuild()
	return v.kind.Init()
}

func (v *providersView) updateCatalogue(msg catalogueMsg) tea.Cmd {
	if msg.gen != v.catGen {
		return nil // a round of catalogues ctrl+r has asked for again
	}
	mr, num := v.mirrors[msg.mirror], v.places[msg.mirror].num
	mr.listed, mr.noCatalogue, mr.unknown = true, msg.noCatalogue, msg.unknown
	switch {
	case errors.Is(msg.err, backends.ErrNoCatalogue):
	case msg.err != nil:
		mr.err = msg.err
		v.sh.problem(statusBad, fmt.Sprintf("[%d] %v", num, msg.err), "")
	default:
		mr.providers = msg.providers
	}
	v.sh.warn(num, msg.warnings, "tfmirror ls "+v.places[msg.mirror].name)
	v.setItems()
	v.unmatchedFilters()
	cmds := v.followCursor()
	if len(mr.providers) > 0 {
		v.newestPending++
		newest := newestCmd(v.sh.ctx, mr.reader, mr.providers)
		if v.firstLoad {
			v.newestLater = append(v.newestLater, newest)
		} else {
			cmds = append(cmds, newest)
		}
	}
	return tea.Batch(append(cmds, v.kind.survey())...)
}

// followCursor shows the provider under the list's cursor where it is not
// the one shown: the first provider listed, or, until the user moves the
// cursor or opens a provider, the one a later catalogue put on the first
// row. The newest versions wait while the first provider is listed.
func (v *providersView) followCursor() []tea.Cmd {
	p, ok := v.list.Selected()
	if !ok || v.hasCurrent && (p == v.current || v.list.Held()) {
		return nil
	}
	cmd := v.selectItem(p, true)
	if cmd != nil {
		v.firstLoad = true
		return []tea.Cmd{cmd}
	}
	if !v.firstLoad {
		return nil
	}
	// Already listed: the newest versions held back go now.
	v.firstLoad = false
	later := v.newestLater
	v.newestLater = nil
	return append(later, v.kind.survey())
}

// setItems lists every provider some mirror lists (or the user named, or
// the spec wants), with what is known of each.
func (v *providersView) setItems() {
	v.items = v.kind.providerUnion()
	v.list.SetItems(v.items)
	v.noteAllGaps()
}

// newestCmd asks a mirror for the versions of each provider it lists, a
// few at a time, so the list shows every provider's newest version before
// it is opened. A provider that cannot be listed is left without one: its
// error shows when it is opened.
func newestCmd(ctx context.Context, r backends.Reader, ps []backends.Provider) tea.Cmd {
	return func() tea.Msg {
		out := make([]backends.Version, len(ps))
		work := make(chan int)
		var wg gosync.WaitGroup
		for range min(4, len(ps)) {
			wg.Go(func() {
				for i := range work {
					vs, err := r.Versions(ctx, ps[i])
					if err != nil {
						continue
					}
					// Newest first, and never OpenTofu's "unspecified" 0.0.0.
					if vs = (backends.VersionConstraint{}).ProviderVersions(vs); len(vs) > 0 {
						out[i] = vs[0]
					}
				}
			})
		}
		for i := range ps {
			if ctx.Err() != nil {
				break
			}
			work <- i
		}
		close(work)
		wg.Wait()
		msg := newestMsg{to: to(viewProviders), newest: map[backends.Provider]backends.Version{}}
		for i, v := range out {
			if v != nil {
				msg.newest[ps[i]] = v
			}
		}
		return msg
	}
}

// noteVersion shows ver beside p in the list when it is the newest known.
func (v *providersView) noteVersion(p backends.Provider, ver backends.Version) {
	if cur := v.newest[p]; cur == nil || backends.CompareVersions(ver, cur) > 0 {
		v.newest[p] = ver
		v.list.SetNote(p, ver.String())
	}
}

// providerUnion is every provider the mirrors selected by the rule for
// --provider (sync.Selection.HostRule) and the full addresses named (held
// nowhere yet, or by a place that cannot list).
func (v *providersView) providerUnion() []backends.Provider {
	return v.providerUnionWith(nil)
}

// providerUnionWith is providerUnion with the providers more.
func (v *providersView) providerUnionWith(more []backends.Provider) []backends.Provider {
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	add := func(p backends.Provider) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, mr := range v.mirrors {
		for _, p := range mr.providers {
			add(p)
		}
	}
	for _, p := range more {
		add(p)
	}
	for _, f := range v.sel.Providers {
		if f.Hostname != "" {
			if p, err := f.On(""); err == nil {
				add(p)
			}
		}
	}
	backends.SortProviders(out)
	return out
}

// unmatchedFilters says, once every mirror is listed, which NAMESPACE/TYPE
// filters selected nothing: their host could not be known (a usage error
// in every command), or no mirror holds them.
func (v *providersView) unmatchedFilters() {
	var unknown []backends.ProviderFilter
	var where []string
	for i, mr := range v.mirrors {
		if !mr.listed {
			return
		}
		if len(mr.unknown) > 0 {
			unknown = mr.unknown
			where = append(where, v.places[i].name)
		}
	}
	listed := v.kind.providerUnion()
	for _, f := range v.sel.Providers {
		if f.Hostname != "" || slices.ContainsFunc(listed, f.Matches) {
			continue
		}
		if slices.Contains(unknown, f) {
			err := sync.HostUnknownError(where, []backends.ProviderFilter{f})
			v.sh.problem(statusWarn, err.Error(), "")
			return
		}
		v.sh.problem(statusWarn, fmt.Sprintf("--provider %s: no mirror here lists it", f), "")
		return
	}
}
