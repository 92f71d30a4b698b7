package sync

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Item is one package in a plan.
type Item struct {
	// Archive is the package in the source, with everything the source (and
	// a lock file) states about it.
	Archive backends.Archive
	// Dest is what the destination holds of the package, when it is there.
	Dest   *Held
	Status Status // missing, present, conflict, unavailable, or error (refused)
	Detail string
	// Provenance is the source's checked provenance of the package's
	// version, when it has one and the package is to be transferred.
	Provenance *Signed
}

// Held is what a plan keeps of a package the destination holds: only what
// it reports (a plan of 100,000 present archives keeps no second copy of
// each archive's listing).
type Held struct {
	Hashes []hashing.Hash // what the destination states, sorted
	Stated bool           // the destination's index documents list it
}

// Finding returns the item as diff reports it.
func (it Item) Finding() Finding {
	f := Finding{Package: it.Archive.Package, Status: it.Status, Detail: it.Detail, SrcHashes: it.Archive.Hashes()}
	if it.Dest != nil {
		f.DstHashes = it.Dest.Hashes
	}
	return f
}

// Plan is what a sync would do, computed before anything moves.
type Plan struct {
	Src, Dst backends.Reader
	Items    []Item
	// backfill is the source's provenance of versions the destination
	// holds whole without it, for Sync to write.
	backfill []providerCarry
}

type providerCarry struct {
	provider backends.Provider
	versions []carried
}

// Count returns how many items have status s.
func (p *Plan) Count(s Status) int {
	n := 0
	for _, it := range p.Items {
		if it.Status == s {
			n++
		}
	}
	return n
}

// Jobs returns the transfers that carry out the plan into dst: every
// missing package, and with force every conflicting one. The other items
// (present, and conflicts without force, and unavailable ones) are left.
func (p *Plan) Jobs(dst backends.Writer, force bool) (jobs []engine.Task, left []Item) {
	for i := range p.Items {
		if it := &p.Items[i]; it.job(force) {
			jobs = append(jobs, p.transfer(dst, it, force))
		} else {
			left = append(left, *it)
		}
	}
	return jobs, left
}

// job reports whether the item is transferred: missing, or with force in
// conflict.
func (it *Item) job(force bool) bool {
	return it.Status == StatusMissing || it.Status == StatusConflict && force
}

func (p *Plan) transfer(dst backends.Writer, it *Item, force bool) engine.Task {
	return Transfer{Src: p.Src, Dst: dst, Archive: it.Archive, Force: force, Provenance: it.Provenance}
}

// StaleIndexes lists the providers some of whose archives the destination
// holds without stating their hashes: a filesystem mirror whose index
// documents an interrupted sync did not get to write. Flushing them after
// the sync brings the indexes up to date.
func (p *Plan) StaleIndexes() []backends.Provider {
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	for _, it := range p.Items {
		if it.Dest != nil && !it.Dest.Stated && !seen[it.Archive.Provider] {
			seen[it.Archive.Provider] = true
			out = append(out, it.Archive.Provider)
		}
	}
	return out
}

// Findings returns the items as diff reports them.
func (p *Plan) Findings() []Finding {
	out := make([]Finding, len(p.Items))
	for i, it := range p.Items {
		out[i] = it.Finding()
	}
	return out
}

// PlanOptions tune planning.
type PlanOptions struct {
	// VerifyExisting recomputes the hashes of archives already in the
	// destination instead of trusting what the destination states.
	VerifyExisting bool
	Hashing        hashing.Options
	// Trust is the policy the source's signatures must meet; nil accepts
	// any signature that checks, and packages without one. A source's
	// provenance that does not check refuses its version either way.
	Trust *trust.Policy
	// ListSource, when set, lists the source's archives in place of
	// backends.ListArchives: a spec planning one source against several
	// destinations lists each provider version there once (sync/spec).
	ListSource func(ctx context.Context, src backends.Reader, p backends.Provider, versions []backends.Version) ([]backends.Archive, error)
}

// MakePlan compares the selected packages of src with dst. It reads
// listings and stated hashes only (archives are hashed only where the two
// places state nothing comparable, or with VerifyExisting), so planning a
// sync that has nothing to do is cheap. A destination that cannot hold the
// plan's providers together (backends.ProviderChecker) fails it with a
// usage error.
func MakePlan(ctx context.Context, src, dst backends.Reader, sel Selection, opts PlanOptions) (*Plan, error) {
	var parts []*Plan
	n := 0
	err := planParts(ctx, src, dst, sel, opts, math.MaxInt, func(part *Plan) error {
		parts = append(parts, part)
		n += len(part.Items)
		return nil
	})
	if err != nil {
		return nil, err
	}
	plan := &Plan{Src: src, Dst: dst, Items: make([]Item, 0, n)}
	for _, part := range parts {
		plan.Items = append(plan.Items, part.Items...)
		part.Items = nil // each provider's part is garbage once copied
		plan.backfill = append(plan.backfill, part.backfill...)
	}
	return plan, nil
}

// PlanEach plans as MakePlan does, but hands fn the plan one provider at a
// time, in order, as soon as each is planned, and keeps none of it: a sync
// of 100,000 archives holds a few providers' parts at once rather than the
// whole plan. What MakePlan checks of the whole (the selection matched
// something, dst can hold the providers together) is checked after the
// last part. An error of planning or of fn ends it, and is returned.
func PlanEach(ctx context.Context, src, dst backends.Reader, sel Selection, opts PlanOptions, fn func(*Plan) error) error {
	// Two parts a worker: one being planned, one waiting its turn.
	return planParts(ctx, src, dst, sel, opts, 2*planWorkers(src, dst), fn)
}

// planParts plans each selected provider of src, window at most ahead of
// the one fn is given, and then checks the whole.
func planParts(ctx context.Context, src, dst backends.Reader, sel Selection, opts PlanOptions, window int, fn func(*Plan) error) error {
	providers, err := sel.ProvidersIn(ctx, src)
	if err != nil {
		return fmt.Errorf("source %s: %w", src, err)
	}
	// Providers are planned concurrently (their listings are independent:
	// directory scans on every core, or requests in flight), and handed
	// on in order.
	selected := make(map[backends.Provider]bool, len(providers))
	var held []backends.Provider // with packages dst would hold
	err = ordered(ctx, planWorkers(src, dst), window, len(providers), func(i int) providerPlan {
		return planProvider(ctx, src, dst, sel, providers[i], opts)
	}, func(i int, pp providerPlan) error {
		if pp.err != nil {
			return pp.err
		}
		p := providers[i]
		selected[p] = pp.selected
		part := &Plan{Src: src, Dst: dst, Items: pp.items}
		if len(pp.carry) > 0 {
			part.backfill = []providerCarry{{p, pp.carry}}
		}
		if len(part.Providers()) > 0 {
			held = append(held, p)
		}
		return fn(part)
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	if err := sel.checkSelected(ctx, src, providers, selected); err != nil {
		return fmt.Errorf("source %s: %w", src, err)
	}
	backends.SortProviders(held)
	return backends.CheckProviders(dst, held) // it names the place
}

// planWorkers is how many providers to plan at once: one per core where
// both places are local, more where listings wait on the network.
func planWorkers(src, dst backends.Reader) int {
	return max(HashWorkers(src), HashWorkers(dst))
}

// providerPlan is one provider's part of a plan.
type providerPlan struct {
	items    []Item
	selected bool // the selection matched something of it in the source
	carry    []carried
	err      error
}

// sourceArchives lists the selected versions of p in src and their
// archives: through ListSource when it is set, else in one read of a
// place that lists a provider's archives at once.
func (o PlanOptions) sourceArchives(ctx context.Context, src backends.Reader, sel Selection, p backends.Provider) ([]backends.Version, []backends.Archive, error) {
	if o.ListSource == nil {
		return sel.versionsAndArchives(ctx, src, p)
	}
	versions, err := sel.VersionsOf(ctx, src, p)
	if err != nil {
		return nil, nil, err
	}
	as, err := o.ListSource(ctx, src, p, versions)
	return versions, as, err
}

// planProvider compares the selected packages of one provider, and applies
// the trust policy to them (authenticate), finding the provenance the
// destination lacks of the versions it holds whole (backfill).
func planProvider(ctx context.Context, src, dst backends.Reader, sel Selection, p backends.Provider, opts PlanOptions) (pp providerPlan) {
	versions, srcArchives, err := opts.sourceArchives(ctx, src, sel, p)
	if err != nil {
		return providerPlan{err: fmt.Errorf("source %s: %s: %w", src, p, err)}
	}
	pp.selected = len(versions) > 0
	for _, v := range sel.PinnedMissing(p, versions) {
		pp.selected = true // the unavailable item says what is missing
		pp.items = append(pp.items, Item{
			Archive: backends.Archive{Package: backends.Package{Provider: p, Version: v}, Size: -1},
			Status:  StatusUnavailable,
			Detail:  fmt.Sprintf("source %s does not offer %s %s", src, p, v),
		})
	}
	if l, ok := sel.Locked[p]; ok && len(versions) == 0 {
		pp.selected = true // an unavailable item says what is missing
		pp.items = append(pp.items, Item{
			Archive: backends.Archive{Package: backends.Package{Provider: p, Version: l.Version}},
			Status:  StatusUnavailable,
			Detail:  fmt.Sprintf("source %s does not offer the locked version %s of %s", src, l.Version, p),
		})
		return pp
	}
	first := len(pp.items)
	dstArchives, err := backends.ListUnsized(ctx, dst, p, versions) // their sizes are not compared
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return providerPlan{err: fmt.Errorf("destination %s: %s: %w", dst, p, err)}
	}
	// A listing holds a version's archives together: each version is
	// rendered as text once (VersionKey), not once per archive. The
	// archives compared are all p's: they are found by version and
	// platform.
	var key backends.VersionKey
	inDst := make(map[offer]int, len(dstArchives))
	for i, a := range dstArchives {
		if a.Provider == p {
			inDst[offer{key.Of(a.Version), a.Platform}] = i
		}
	}
	// What the source offers matters where platforms are asked for by
	// name (unoffered).
	var offered map[offer]bool
	if len(sel.Platforms) > 0 {
		offered = map[offer]bool{}
	}
	pp.items = slices.Grow(pp.items, len(srcArchives))
	for _, a := range srcArchives {
		k := offer{key.Of(a.Version), a.Platform}
		if offered != nil {
			offered[k] = true
		}
		if !sel.WantsPlatform(a.Platform) || !sel.lockAbout(a.Package) {
			continue
		}
		a.Evidence = append(a.Evidence, sel.LockEvidence(a.Package)...)
		var d backends.Archive
		if i, ok := inDst[k]; ok && a.Provider == p {
			d = dstArchives[i]
		}
		item, err := compare(ctx, src, a, d, dst, opts)
		if err != nil {
			return providerPlan{err: err}
		}
		pp.items = append(pp.items, item)
	}
	pp.items = append(pp.items, unoffered(src, p, versions, sel.Platforms, offered)...)
	authenticate(ctx, src, pp.items[first:], opts.Trust)
	authenticateDest(ctx, dst, pp.items[first:], opts.Trust)
	pp.carry = backfill(ctx, src, dst, pp.items[first:], opts.Trust)
	return pp
}

// offer is a package of one provider: its version's text and platform.
type offer struct {
	version  string
	platform backends.Platform
}

// unoffered are the unavailable items of the platforms asked for by name
// that the source does not offer at versions.
func unoffered(src backends.Reader, p backends.Provider, versions []backends.Version, platforms []backends.Platform, offered map[offer]bool) []Item {
	var out []Item
	for _, v := range versions {
		for _, plat := range platforms {
			if !offered[offer{v.String(), plat}] {
				pkg := backends.Package{Provider: p, Version: v, Platform: plat}
				out = append(out, Item{Archive: backends.Archive{Package: pkg, Size: -1}, Status: StatusUnavailable,
					Detail: fmt.Sprintf("source %s does not offer %s", src, pkg)})
			}
		}
	}
	return out
}

// Providers lists the providers the plan would have the destination hold:
// those with packages missing, present or in conflict there, sorted.
func (p *Plan) Providers() []backends.Provider {
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	for _, it := range p.Items {
		if it.Status != StatusUnavailable && !seen[it.Archive.Provider] {
			seen[it.Archive.Provider] = true
			out = append(out, it.Archive.Provider)
		}
	}
	backends.SortProviders(out)
	return out
}

// compare compares a with d, what dst holds of its package (none when d's
// Version is nil).
func compare(ctx context.Context, src backends.Reader, a, d backends.Archive, dst backends.Reader, opts PlanOptions) (Item, error) {
	item := Item{Archive: a}
	if a.Layout == backends.Unpacked {
		item.Status, item.Detail = StatusUnavailable, fmt.Sprintf("%s: %v", a.Package, backends.ErrUnpackedOnly)
		return item, nil
	}
	if d.Version == nil {
		item.Status, item.Detail = StatusMissing, "not in destination"
		return item, nil
	}
	shareHashes(a.Evidence, d.Evidence)
	dstHashes := d.Hashes()
	if len(a.Evidence) == 1 && slices.Equal(a.Evidence[0].Hashes, dstHashes) {
		// The same hashes, sorted, as the source's one statement: one
		// slice for both (neither is changed in place).
		dstHashes = slices.Clip(a.Evidence[0].Hashes)
	}
	item.Dest = &Held{Hashes: dstHashes, Stated: len(d.Evidence) > 0}
	srcHashes := a.Hashes()
	if !hasKnown(srcHashes) {
		// A source that states nothing (a hand-made filesystem mirror) is
		// compared by content: its zip's SHA-256 is cheap to take in place.
		if lp, ok := src.(backends.LocalPather); ok {
			zh, err := hashing.ZipZH(lp.LocalPath(a))
			if err != nil {
				return item, fmt.Errorf("source %s: %s: %w", src, a.Package, err)
			}
			a.Evidence = append(a.Evidence, hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceArchive, Detail: src.String()}, Hashes: []hashing.Hash{zh}})
			item.Archive = a
			srcHashes = a.Hashes()
		}
	}
	if _, comparable := Agree(srcHashes, dstHashes); opts.VerifyExisting || !comparable {
		sums, err := hashArchiveFor(ctx, dst, d, opts.Hashing, a.Evidence)
		if err != nil {
			item.Status, item.Detail = StatusConflict, fmt.Sprintf("destination %s: cannot hash the archive there: %v", dst, err)
			return item, nil
		}
		res := hashing.Verify(sums, a.Evidence...)
		switch {
		case !res.OK():
			item.Status, item.Detail = StatusConflict, fmt.Sprintf("destination %s differs from the source: %v", dst, res.Err())
		case res.Verified():
			item.Status, item.Detail = StatusPresent, "present; "+DescribeMatches(res)
		default:
			item.Status, item.Detail = StatusConflict, fmt.Sprintf("destination %s holds %s, but the source states no hash to compare it with", dst, sums.ZH)
		}
		return item, nil
	}
	if shared, _ := Agree(srcHashes, dstHashes); shared != "" {
		item.Status, item.Detail = StatusPresent, fmt.Sprintf("present; %s stated by both", shared.Short())
		return item, nil
	}
	item.Status = StatusConflict
	item.Detail = fmt.Sprintf("destination %s states %s, the source %s", dst, shortList(dstHashes), shortList(srcHashes))
	if lock := notLocked(a.Evidence, dstHashes); lock != "" {
		item.Detail = fmt.Sprintf("destination %s holds a different package than %s locks (it states %s, none of them locked): init from it would fail its checksum; the source holds the locked one", dst, lock, shortList(dstHashes))
	}
	return item, nil
}

// notLocked names the lock file among ev whose hashes held (what the
// destination states) has none of, or "" when there is none.
func notLocked(ev []hashing.Evidence, held []hashing.Hash) string {
	for _, e := range ev {
		if e.Source.Kind != hashing.SourceLockFile || !hasKnown(held) {
			continue
		}
		if !slices.ContainsFunc(held, func(h hashing.Hash) bool { return slices.Contains(e.Hashes, h) }) {
			return e.Source.Detail
		}
	}
	return ""
}

// Agree compares two archives by the hashes known of them, stated or
// computed: by zh: where both have it (the zip's bytes, which OCI installs
// and lock files pin), else by h1: (the contents). shared is a hash both
// have (empty when they differ); comparable is false when they share no
// scheme, so nothing can be said. Every comparison of two archives, the
// sync plan's and the UI's, goes through it.
func Agree(a, b []hashing.Hash) (shared hashing.Hash, comparable bool) {
	// Without a slice of each side's hashes of a scheme: the plan of
	// 100,000 archives compares each pair once.
	for _, scheme := range []hashing.Scheme{hashing.SchemeZip, hashing.SchemeH1} {
		if !hasScheme(a, scheme) || !hasScheme(b, scheme) {
			continue
		}
		for _, x := range a {
			if x.Scheme() != scheme {
				continue
			}
			for _, y := range b {
				if x == y {
					return x, true
				}
			}
		}
		return "", true
	}
	return "", false
}

func hasScheme(hs []hashing.Hash, s hashing.Scheme) bool {
	for _, h := range hs {
		if h.Scheme() == s {
			return true
		}
	}
	return false
}

// shareHashes makes the hashes dst states that src states too the same
// strings as src's: a plan of 100,000 archives present on both sides then
// holds each hash once.
func shareHashes(src, dst []hashing.Evidence) {
	for _, de := range dst {
		for i, h := range de.Hashes {
			for _, se := range src {
				for _, sh := range se.Hashes {
					if sh == h {
						de.Hashes[i] = sh
					}
				}
			}
		}
	}
}

func shortList(hs []hashing.Hash) string {
	s := ""
	for i, h := range hs {
		if i > 0 {
			s += " "
		}
		s += h.Short()
	}
	if s == "" {
		return "no hashes"
	}
	return s
}

func hasKnown(hs []hashing.Hash) bool {
	for _, h := range hs {
		if h.Known() {
			return true
		}
	}
	return false
}

func ofScheme(hs []hashing.Hash, s hashing.Scheme) []hashing.Hash {
	var out []hashing.Hash
	for _, h := range hs {
		if h.Scheme() == s {
			out = append(out, h)
		}
	}
	return out
}
