package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tfmirror/tfmirror/backends"
)

// The statuses of outdated's rows.
const (
	// StatusNewer: upstream has a release newer than any the mirror
	// holds, which the constraints do not want.
	StatusNewer Status = "newer"
)

// Upstream says, for a provider, where its releases are published and
// which of them the mirror should hold: want picks those among the
// versions src offers; nil wants every release (not a prerelease) newer
// than the newest the mirror holds. A nil src leaves the provider out. A
// spec file is one Upstream; --source PLACE with --version is another.
type Upstream func(ctx context.Context, p backends.Provider) (src backends.Reader, want func(offered []backends.Version) []backends.Version, err error)

// OutdatedRow is one release upstream that the mirror lacks, or a provider
// whose upstream could not be read.
type OutdatedRow struct {
	Provider backends.Provider
	Version  backends.Version // nil with Err
	// Newest is the newest version the mirror holds (nil: none).
	Newest backends.Version
	// Wanted: the constraints select it, so the mirror should hold it.
	Wanted bool
	Source string
	Err    error
}

// Finding returns the row as outdated reports it: missing when wanted,
// newer when not, error when the upstream could not be read.
func (r OutdatedRow) Finding() Finding {
	f := Finding{Package: backends.Package{Provider: r.Provider, Version: r.Version}}
	held := "the mirror holds no version of it"
	if r.Newest != nil {
		held = "the mirror's newest is " + r.Newest.String()
	}
	switch {
	case r.Err != nil:
		f.Status, f.Detail = StatusError, r.Err.Error()
	case r.Wanted:
		f.Status, f.Detail = StatusMissing, fmt.Sprintf("offered by %s; %s", r.Source, held)
	default:
		f.Status, f.Detail = StatusNewer, fmt.Sprintf("offered by %s, outside the constraints; %s", r.Source, held)
	}
	return f
}

// Outdated compares, for every selected provider of mirror and every one
// of also (providers the upstream wants that the mirror may lack), the
// versions the mirror holds with those its upstream offers: the releases
// the mirror lacks that the upstream wants, and those newer than its
// newest that it does not. An upstream that cannot be read is a row of its
// own, so the other providers are still compared.
func Outdated(ctx context.Context, mirror backends.Reader, sel Selection, up Upstream, also ...backends.Provider) ([]OutdatedRow, error) {
	ps, err := sel.ProvidersIn(ctx, mirror)
	if errors.Is(err, backends.ErrNoCatalogue) && len(also) > 0 {
		ps, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, p := range also {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	backends.SortProviders(ps)
	var out []OutdatedRow
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		held, err := mirror.Versions(ctx, p)
		if err != nil && !errors.Is(err, backends.ErrNotFound) {
			return nil, err
		}
		rows, err := outdatedProvider(ctx, p, held, up)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			rows = []OutdatedRow{{Provider: p, Newest: newest(held), Err: err}}
		}
		out = append(out, rows...)
	}
	return out, nil
}

// outdatedProvider compares held with what p's upstream offers.
func outdatedProvider(ctx context.Context, p backends.Provider, held []backends.Version, up Upstream) ([]OutdatedRow, error) {
	src, want, err := up(ctx, p)
	if err != nil || src == nil {
		return nil, err
	}
	offered, err := src.Versions(ctx, p)
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, v := range held {
		has[v.String()] = true
	}
	top := newest(held)
	wanted := map[string]bool{}
	if want == nil {
		for _, v := range offered {
			wanted[v.String()] = v.Prerelease() == "" && (top == nil || v.GreaterThan(top))
		}
	} else {
		for _, v := range want(offered) {
			wanted[v.String()] = true
		}
	}
	var rows []OutdatedRow
	for _, v := range released(offered) {
		newer := top == nil || v.GreaterThan(top)
		if has[v.String()] || !wanted[v.String()] && !newer {
			continue
		}
		rows = append(rows, OutdatedRow{Provider: p, Version: v, Newest: top, Wanted: wanted[v.String()], Source: src.String()})
	}
	return rows, nil
}

// newest returns the newest version of vs but 0.0.0, or nil.
func newest(vs []backends.Version) backends.Version {
	rs := released(vs)
	if len(rs) == 0 {
		return nil
	}
	return rs[0]
}

// released returns vs but 0.0.0, newest first.
func released(vs []backends.Version) []backends.Version {
	return backends.VersionConstraint{}.ProviderVersions(vs)
}
