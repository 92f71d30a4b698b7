package sync

import (
	"context"
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// The statuses of prune's plan and result rows.
const (
	// StatusRemove: the plan removes the package.
	StatusRemove Status = "remove"
	// StatusKeep: the plan keeps the package.
	StatusKeep Status = "keep"
	// StatusRemoved: the package is gone from the place.
	StatusRemoved Status = "removed"
	// StatusLeft: the plan removed the package, but it is still there
	// (another writer changed it meanwhile, or the place refused).
	StatusLeft Status = "left"
	// StatusWarning and StatusWaiting are a place's notices (an OCI
	// repository lock taken over, waited for) as rows of prune --json.
	StatusWarning Status = "warning"
	StatusWaiting Status = "waiting"
)

// Wanted is a source of what a place should hold, such as a spec file:
// prune removes what it does not want.
type Wanted interface {
	// String names the source in plans ("spec tfmirror.hcl").
	String() string
	// Wants reports whether the place should hold pkg, and why (when
	// not, what the source wants instead).
	Wants(ctx context.Context, pkg backends.Package) (ok bool, why string, err error)
}

// VersionWanter is a Wanted that can list the versions of a provider it
// wants, newest first (ok false: it does not know, or wants none). Prune
// then never leaves a provider with less than the source can have: for
// each version it wants that the place does not hold (not synced yet, or
// it cannot be: its signature fails, the policy refuses it, a registry
// lists a version it does not have), the newest older version the place
// holds of that platform stays in its place.
type VersionWanter interface {
	Wanted
	WantedVersions(p backends.Provider) (vs []backends.Version, ok bool)
}

// LockedVersions are the provider versions lock files reference, with the
// files that reference each.
type LockedVersions map[backends.Provider]map[string][]string

// Add records that file locks p at v.
func (l LockedVersions) Add(p backends.Provider, v backends.Version, file string) {
	if l[p] == nil {
		l[p] = map[string][]string{}
	}
	l[p][v.String()] = append(l[p][v.String()], file)
}

// Retention says what prune keeps. A package goes when Keep or Wanted
// drops it and no lock file references its version.
type Retention struct {
	// Keep is how many versions of each provider stay, the newest by
	// version precedence; 0 leaves the count alone.
	Keep int
	// Wanted, when set, drops every package it does not want.
	Wanted Wanted
	// Locked versions stay, whatever Keep and Wanted say.
	Locked LockedVersions
	// Providers limits prune to these providers (empty: every one).
	Providers []backends.ProviderFilter
}

// PrunePlan is what a prune would do, one row per package the place holds.
type PrunePlan struct {
	Dst   backends.Reader
	Items []PruneItem
}

// PruneItem is one package of a prune plan.
type PruneItem struct {
	Archive backends.Archive
	Remove  bool
	Reason  string
}

// Count returns how many packages the plan removes and keeps.
func (p *PrunePlan) Count() (remove, keep int) {
	for _, it := range p.Items {
		if it.Remove {
			remove++
		} else {
			keep++
		}
	}
	return remove, keep
}

// Findings returns the plan as rows: remove or keep, and why.
func (p *PrunePlan) Findings() []Finding {
	out := make([]Finding, len(p.Items))
	for i, it := range p.Items {
		out[i] = Finding{Package: it.Archive.Package, Status: StatusKeep, Detail: it.Reason}
		if it.Remove {
			out[i].Status = StatusRemove
		}
	}
	return out
}

// PlanPrune reads what dst holds and decides, package by package, what
// the retention rules remove. Nothing is changed.
func PlanPrune(ctx context.Context, dst backends.Reader, r Retention) (*PrunePlan, error) {
	sel := Selection{Providers: r.Providers}
	ps, err := sel.ProvidersIn(ctx, dst)
	if err != nil {
		return nil, err
	}
	plan := &PrunePlan{Dst: dst}
	for _, p := range ps {
		items, err := r.planProvider(ctx, dst, p)
		if err != nil {
			return nil, err
		}
		plan.Items = append(plan.Items, items...)
	}
	return plan, nil
}

// planProvider decides for each package of p in dst.
func (r Retention) planProvider(ctx context.Context, dst backends.Reader, p backends.Provider) ([]PruneItem, error) {
	vs, err := dst.Versions(ctx, p)
	if err != nil {
		return nil, err
	}
	backends.SortVersionsNewestFirst(vs)
	as, err := backends.ListArchives(ctx, dst, p, vs)
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	for i, v := range vs {
		rank[v.String()] = i
	}
	var kept []string
	for _, v := range vs[:min(r.Keep, len(vs))] {
		kept = append(kept, v.String())
	}
	standIns, err := r.standIns(ctx, p, as)
	if err != nil {
		return nil, err
	}
	items := make([]PruneItem, 0, len(as))
	for _, a := range as {
		it, err := r.decide(ctx, a, rank[a.Version.String()], kept, standIns[packageKey{a.Version.String(), a.Platform}])
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

type packageKey struct {
	version  string
	platform backends.Platform
}

// standIns finds, for each version Wanted wants of p that as (what the
// place holds, newest first) lacks for a platform Wanted wants, the newest
// older package of that platform the place holds that is not wanted
// itself nor standing in already; it maps each to the version it stands
// in for.
func (r Retention) standIns(ctx context.Context, p backends.Provider, as []backends.Archive) (map[packageKey]backends.Version, error) {
	vw, ok := r.Wanted.(VersionWanter)
	if !ok {
		return nil, nil
	}
	wanted, ok := vw.WantedVersions(p)
	if !ok || len(wanted) == 0 {
		return nil, nil
	}
	isWanted := map[string]bool{}
	for _, w := range wanted {
		isWanted[w.String()] = true
	}
	held := map[backends.Platform][]backends.Version{} // newest first, as as is
	var plats []backends.Platform
	for _, a := range as {
		if held[a.Platform] == nil {
			plats = append(plats, a.Platform)
		}
		held[a.Platform] = append(held[a.Platform], a.Version)
	}
	out := map[packageKey]backends.Version{}
	for _, plat := range plats {
		used := map[string]bool{}
		for _, v := range held[plat] {
			used[v.String()] = isWanted[v.String()]
		}
		for _, w := range wanted {
			if _, holds := used[w.String()]; holds {
				continue
			}
			// Wanted for this platform? (It may want other platforms.)
			if ok, _, err := r.Wanted.Wants(ctx, backends.Package{Provider: p, Version: w, Platform: plat}); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			for _, v := range held[plat] {
				if !used[v.String()] && v.LessThan(w) {
					used[v.String()] = true
					out[packageKey{v.String(), plat}] = w
					break
				}
			}
		}
	}
	return out, nil
}

// decide applies the rules to one archive whose version is the rank-th
// newest of its provider; kept are the versions Keep keeps; standsIn, when
// set, is a version Wanted wants that the place lacks, which this package
// stands in for.
func (r Retention) decide(ctx context.Context, a backends.Archive, rank int, kept []string, standsIn backends.Version) (PruneItem, error) {
	it := PruneItem{Archive: a}
	var drop, keep []string
	if r.Keep > 0 {
		if rank >= r.Keep {
			drop = append(drop, fmt.Sprintf("older than the newest %d (%s)", r.Keep, strings.Join(kept, ", ")))
		} else {
			keep = append(keep, fmt.Sprintf("among the newest %d", r.Keep))
		}
	}
	if r.Wanted != nil {
		ok, why, err := r.Wanted.Wants(ctx, a.Package)
		if err != nil {
			return it, err
		}
		switch {
		case ok && why != "":
			keep = append(keep, why)
		case ok:
			keep = append(keep, "wanted by "+r.Wanted.String())
		case standsIn != nil:
			keep = append(keep, fmt.Sprintf("%s wants %s, which is not here for %s: this older version stays in its place until it is", r.Wanted, standsIn, a.Platform))
		default:
			drop = append(drop, fmt.Sprintf("%s does not want it", r.Wanted))
			if why != "" {
				drop[len(drop)-1] += " (" + why + ")"
			}
		}
	}
	if files := r.Locked[a.Provider][a.Version.String()]; len(files) > 0 {
		it.Reason = "locked by " + strings.Join(files, ", ")
		if len(drop) > 0 {
			it.Reason += "; otherwise " + strings.Join(drop, "; ")
		}
		return it, nil
	}
	it.Remove = len(drop) > 0
	if it.Remove {
		it.Reason = strings.Join(drop, "; ")
	} else {
		it.Reason = strings.Join(keep, "; ")
	}
	return it, nil
}

// PruneResult is what a prune did.
type PruneResult struct {
	// Findings has a row per package the plan removed: removed, left (with
	// why), or error.
	Findings []Finding
	// Notes are what the place could not do although the packages are
	// gone from its indexes.
	Notes []string
}

// OK reports whether every package the plan removed is gone.
func (r PruneResult) OK() bool {
	for _, f := range r.Findings {
		if f.Status != StatusRemoved {
			return false
		}
	}
	return true
}

// Removing returns the archives the plan removes, in plan order.
func (p *PrunePlan) Removing() []backends.Archive {
	var out []backends.Archive
	for _, it := range p.Items {
		if it.Remove {
			out = append(out, it.Archive)
		}
	}
	return out
}

// PackageRemoved: prune removed a package from a place (for an audit log:
// RemovedEvents).
type PackageRemoved struct {
	// Archive is the package as the place listed it before the removal,
	// with the hashes it stated.
	Archive backends.Archive
	Dst     string
	// Signer is who signed it, where the place kept its provenance.
	Signer *provenance.Signer
}

func (PackageRemoved) IsEvent() {}

// RemovedEvents returns a PackageRemoved for each of removing (the plan's
// Removing) that res says is gone; sigs, when given, are their Signatures,
// read before the prune.
func RemovedEvents(dst backends.Reader, removing []backends.Archive, sigs []Signature, res PruneResult) []engine.Event {
	gone := map[backends.PackageKey]bool{}
	for _, f := range res.Findings {
		if f.Status == StatusRemoved {
			gone[f.Package.Key()] = true
		}
	}
	var out []engine.Event
	for i, a := range removing {
		if !gone[a.Key()] {
			continue
		}
		ev := PackageRemoved{Archive: a, Dst: dst.String()}
		if i < len(sigs) && sigs[i].Signed != nil {
			ev.Signer = &sigs[i].Signed.Signer
		}
		out = append(out, ev)
	}
	return out
}

// Prune carries out a plan: provider by provider, one Remove of the
// packages the plan removes. A provider whose Remove fails does not stop
// the others.
func Prune(ctx context.Context, dst backends.Remover, plan *PrunePlan) PruneResult {
	var res PruneResult
	var order []backends.Provider
	byProvider := map[backends.Provider][]backends.Archive{}
	for _, it := range plan.Items {
		if !it.Remove {
			continue
		}
		p := it.Archive.Provider
		if byProvider[p] == nil {
			order = append(order, p)
		}
		byProvider[p] = append(byProvider[p], it.Archive)
	}
	for _, p := range order {
		as := byProvider[p]
		rm, err := dst.Remove(ctx, p, as)
		res.Notes = append(res.Notes, rm.Notes...)
		res.Findings = append(res.Findings, removalFindings(dst, as, rm, err)...)
	}
	return res
}

// removalFindings says, for each archive asked for, what Remove did.
func removalFindings(dst backends.Reader, as []backends.Archive, rm backends.Removal, err error) []Finding {
	removed := map[backends.PackageKey]bool{}
	for _, p := range rm.Removed {
		removed[p.Key()] = true
	}
	left := map[backends.PackageKey]string{}
	for _, l := range rm.Left {
		left[l.Package.Key()] = l.Reason
	}
	out := make([]Finding, 0, len(as))
	for _, a := range as {
		f := Finding{Package: a.Package}
		switch why, isLeft := left[a.Key()]; {
		case removed[a.Key()]:
			f.Status, f.Detail = StatusRemoved, fmt.Sprintf("removed from %s", dst)
		case isLeft:
			f.Status, f.Detail = StatusLeft, why
		case err != nil:
			f.Status, f.Detail = StatusError, err.Error()
		default:
			f.Status, f.Detail = StatusError, fmt.Sprintf("%s did not say what became of it", dst)
		}
		out = append(out, f)
	}
	return out
}
