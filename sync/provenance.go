package sync

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Signed is a provider version's provenance whose signature checked.
type Signed struct {
	Provenance *provenance.Provenance
	Signer     provenance.Signer
}

// ReadProvenance reads r's provenance for p at v and checks its signature.
// It returns nil and no error when r keeps none (or is no
// backends.ProvenanceReader). An error means r has provenance that cannot
// be read or does not check: the version's archives there are not what
// their publisher signed, or the proof was altered.
func ReadProvenance(ctx context.Context, r backends.Reader, p backends.Provider, v backends.Version, opts provenance.Options) (*Signed, error) {
	pr, ok := r.(backends.ProvenanceReader)
	if !ok {
		return nil, nil
	}
	doc, err := pr.Provenance(ctx, p, v)
	if errors.Is(err, backends.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := doc.Check(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: provenance of %w", r, err)
	}
	return &Signed{Provenance: doc, Signer: s}, nil
}

// Signature is what a place's provenance says of one archive's version:
// who signed it, or why the proof does not check; neither when the place
// keeps none. Unkept says that the place is a mirror that keeps
// provenance (a directory, a bucket, an OCI mirror) but none of this
// version: serve offers it through its network mirror, not providers.v1.
// (A registry that signs no release has none to keep, and is not served.)
type Signature struct {
	Signed *Signed
	Err    error
	Unkept bool
}

// Signatures reads and checks r's provenance of the versions of as, once
// per version, and returns each archive's, in the order of as.
func Signatures(ctx context.Context, r backends.Reader, as []backends.Archive, opts provenance.Options) []Signature {
	byVersion := map[string]Signature{}
	out := make([]Signature, len(as))
	_, keeps := r.(backends.ProvenanceWriter)
	for i, a := range as {
		k := a.Provider.String() + " " + a.Version.String()
		s, done := byVersion[k]
		if !done {
			s.Signed, s.Err = ReadProvenance(ctx, r, a.Provider, a.Version, opts)
			s.Unkept = keeps && s.Signed == nil && s.Err == nil
			byVersion[k] = s
		}
		out[i] = s
	}
	return out
}

// CheckProvenance is what sync applies to one version of a source before
// any of its archives is mirrored: the source's provenance, read and
// checked (ReadProvenance), admitted by the policy (trust.Policy.Admit,
// which refuses a version without one where a signature is required or a
// key is pinned). signed is nil when the source has none and the policy
// lets that pass. import calls it for each version of a bundle.
func CheckProvenance(ctx context.Context, src backends.Reader, p backends.Provider, v backends.Version, pol *trust.Policy) (*Signed, error) {
	var opts provenance.Options
	if pol != nil {
		opts = pol.Signatures
	}
	signed, err := ReadProvenance(ctx, src, p, v, opts)
	if err != nil {
		return nil, err
	}
	return admitVersion(src, p, v, signed, pol)
}

// admitVersion is CheckProvenance once src's provenance of p at v is read and
// checked: signed, or nil where src keeps none.
func admitVersion(src backends.Reader, p backends.Provider, v backends.Version, signed *Signed, pol *trust.Policy) (*Signed, error) {
	if pol == nil {
		return signed, nil // no policy: every version is admitted
	}
	var signer *provenance.Signer
	if signed != nil {
		signer = &signed.Signer
	}
	if err := pol.Admit(p, fmt.Sprintf("source %s: %s %s", src, p, v), signer); err != nil {
		return nil, err
	}
	return signed, nil
}

// Authenticate returns a with the evidence signed gives about its zip
// added (unless a's source states the same already), so that a transfer or
// verification checks the bytes against the signed SHA256SUMS. A platform
// the document does not list is an error: the archive is not the signed
// release's.
func (signed *Signed) Authenticate(a backends.Archive) (backends.Archive, error) {
	ev, err := signed.Provenance.Evidence(a.Platform.String(), signed.Signer)
	if err != nil {
		return a, err
	}
	for _, have := range a.Evidence {
		if have.Source.Kind == ev.Source.Kind && sameHashes(have.Hashes, ev.Hashes) {
			return a, nil
		}
	}
	a.Evidence = append(append([]hashing.Evidence(nil), a.Evidence...), ev)
	return a, nil
}

func sameHashes(a, b []hashing.Hash) bool {
	a, b = hashing.SortUnique(a), hashing.SortUnique(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// authenticate applies CheckProvenance to each version of items (one
// provider's) that has packages to transfer, once per version: the items
// of a refused version become errors that say why; the others carry the
// version's provenance, and their archives its evidence.
func authenticate(ctx context.Context, src backends.Reader, items []Item, pol *trust.Policy) {
	type verdict struct {
		signed *Signed
		err    error
	}
	byVersion := map[string]*verdict{}
	// Where src lists the versions it keeps provenance of (one directory
	// listing), the others are put to the policy without a read each.
	var kept map[string]bool
	listed := false
	var key backends.VersionKey
	for i := range items {
		it := &items[i]
		if it.Status != StatusMissing && it.Status != StatusConflict {
			continue
		}
		a := it.Archive
		v := key.Of(a.Version)
		vd, ok := byVersion[v]
		if !ok {
			if pl, ok := src.(backends.ProvenanceLister); ok && !listed {
				kept, _ = pl.ProvenanceVersions(ctx, a.Provider) // on error, ask each
				listed = true
			}
			var signed *Signed
			var err error
			if kept != nil && !kept[v] {
				signed, err = admitVersion(src, a.Provider, a.Version, nil, pol)
			} else {
				signed, err = CheckProvenance(ctx, src, a.Provider, a.Version, pol)
			}
			vd = &verdict{signed, err}
			byVersion[v] = vd
		}
		if vd.err != nil {
			it.Status, it.Detail = StatusError, fmt.Sprintf("not mirrored: %v", vd.err)
			continue
		}
		if vd.signed == nil {
			continue
		}
		signedArchive, err := vd.signed.Authenticate(a)
		if err != nil {
			it.Status, it.Detail = StatusError, fmt.Sprintf("not mirrored: source %s: %v", src, err)
			continue
		}
		it.Archive, it.Provenance = signedArchive, vd.signed
	}
}

// keptBy returns dst's checked provenance of archives' versions, once per
// version (where dst lists the versions it keeps provenance of, only
// those are read): the destination's own signed SHA256SUMS is evidence
// too. A version whose provenance dst cannot read or check is left out:
// verify reports that.
type keptBy struct {
	dst     backends.Reader
	opts    provenance.Options
	kept    map[backends.Provider]map[string]bool
	signed  map[string]*Signed
	checked map[string]bool
}

func newKeptBy(dst backends.Reader, pol *trust.Policy) *keptBy {
	k := &keptBy{dst: dst, kept: map[backends.Provider]map[string]bool{}, signed: map[string]*Signed{}, checked: map[string]bool{}}
	if pol != nil {
		k.opts = pol.Signatures
	}
	return k
}

func (k *keptBy) of(ctx context.Context, p backends.Provider, v backends.Version) *Signed {
	if _, ok := k.dst.(backends.ProvenanceReader); !ok {
		return nil
	}
	key := p.String() + " " + v.String()
	if k.checked[key] {
		return k.signed[key]
	}
	k.checked[key] = true
	if pl, ok := k.dst.(backends.ProvenanceLister); ok {
		kept, listed := k.kept[p]
		if !listed {
			kept, _ = pl.ProvenanceVersions(ctx, p) // on error, ask each
			k.kept[p] = kept
		}
		if kept != nil && !kept[v.String()] {
			return nil
		}
	}
	signed, err := ReadProvenance(ctx, k.dst, p, v, k.opts)
	if err != nil {
		return nil
	}
	k.signed[key] = signed
	return signed
}

// check holds archive a, about to be copied into k's destination, to the
// signed SHA256SUMS the destination keeps of its version: a platform that
// document does not list is an error (the signed release never had it),
// and a listed one gets its signed hash as evidence, which the transfer
// checks the bytes against.
func (k *keptBy) check(ctx context.Context, a backends.Archive) (backends.Archive, error) {
	signed := k.of(ctx, a.Provider, a.Version)
	if signed == nil {
		return a, nil
	}
	out, err := signed.Authenticate(a)
	if err != nil {
		return a, fmt.Errorf("destination %s keeps the SHA256SUMS of %s %s signed by %s: %w: the signed release has no such package", k.dst, a.Provider, a.Version, signed.Signer, err)
	}
	return out, nil
}

// authenticateDest applies the destination's kept provenance (keptBy) to
// the items that would be copied into it.
func authenticateDest(ctx context.Context, dst backends.Reader, items []Item, pol *trust.Policy) {
	k := newKeptBy(dst, pol)
	for i := range items {
		it := &items[i]
		if it.Status != StatusMissing && it.Status != StatusConflict {
			continue
		}
		a, err := k.check(ctx, it.Archive)
		if err != nil {
			it.Status, it.Detail = StatusError, fmt.Sprintf("not mirrored: %v", err)
			continue
		}
		it.Archive = a
	}
}

// backfill returns, for the versions of items (one provider's) whose
// selected packages the destination holds already, every one of them,
// the source's checked provenance where the destination keeps none and
// the policy admits it: a mirror filled before it kept provenance, or
// from a source that had none then, gets it on the next sync. A version
// with packages to transfer gets its provenance when they land.
func backfill(ctx context.Context, src, dst backends.Reader, items []Item, pol *trust.Policy) []carried {
	if _, ok := dst.(backends.ProvenanceWriter); !ok {
		return nil
	}
	// Each version's items, by index: a plan lists them together, so
	// most versions are one run of items.
	var order []string
	byVersion := map[string][]int{}
	var key backends.VersionKey
	for i, it := range items {
		v := key.Of(it.Archive.Version)
		if byVersion[v] == nil {
			order = append(order, v)
		}
		byVersion[v] = append(byVersion[v], i)
	}
	// Only a version whose provenance src keeps is carried: where src
	// lists them, the others are not asked about.
	var kept map[string]bool
	if pl, ok := src.(backends.ProvenanceLister); ok && len(items) > 0 {
		kept, _ = pl.ProvenanceVersions(ctx, items[0].Archive.Provider) // on error, ask each
	}
	var out []carried
	for _, v := range order {
		if kept != nil && !kept[v] {
			continue
		}
		if c, ok := backfillVersion(ctx, src, dst, items, byVersion[v], pol); ok {
			out = append(out, c)
		}
	}
	return out
}

// backfillVersion is backfill for one version's items (items[i] for i in
// idx).
func backfillVersion(ctx context.Context, src, dst backends.Reader, items []Item, idx []int, pol *trust.Policy) (carried, bool) {
	for _, i := range idx {
		if items[i].Status != StatusPresent {
			return carried{}, false
		}
	}
	a := items[idx[0]].Archive
	var opts provenance.Options
	if pol != nil {
		opts = pol.Signatures
	}
	if have, err := ReadProvenance(ctx, dst, a.Provider, a.Version, opts); have != nil || err != nil {
		return carried{}, false // kept already, or kept and broken: verify reports that
	}
	signed, err := CheckProvenance(ctx, src, a.Provider, a.Version, pol)
	if err != nil || signed == nil {
		return carried{}, false
	}
	for _, i := range idx {
		it := &items[i]
		if _, err := signed.Authenticate(it.Archive); err != nil {
			return carried{}, false
		}
		zh := ofScheme(it.Dest.Hashes, hashing.SchemeZip)
		if len(zh) != 1 || signed.Provenance.Authenticate(it.Archive.Platform.String(), zh[0]) != nil {
			return carried{}, false
		}
	}
	return carried{version: a.Version, signed: signed}, true
}

// carrier collects, for one destination and provider, the provenance of
// the versions whose archives landed, for the batch's Finish to write once
// the index documents list them. The transfers of a batch share one.
type carrier struct {
	mu       gosync.Mutex
	versions map[string]carried
}

type carried struct {
	version backends.Version
	signed  *Signed
}

// carryAdd records that v landed with s, its provenance, for Finish; a
// transfer run outside a batch (b nil) has no Finish to write it.
func (b *providerBatch) carryAdd(v backends.Version, s *Signed) {
	if b != nil {
		b.carry.add(v, s)
	}
}

func (c *carrier) add(v backends.Version, s *Signed) {
	if s == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.versions == nil {
		c.versions = map[string]carried{}
	}
	c.versions[v.String()] = carried{v, s}
}

// take returns what was collected since the last take.
func (c *carrier) take() []carried {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]carried, 0, len(c.versions))
	for _, cv := range c.versions {
		out = append(out, cv)
	}
	c.versions = nil
	return out
}

// AuthenticateTransfers gives the transfers among tasks that no plan made
// (a front end's own choice of packages, as the terminal UI queues them)
// what MakePlan gives the packages it plans: the source's provenance of
// each version, checked and admitted by pol (CheckProvenance, once per
// source, provider and version), with its evidence added to the archive,
// so the transfer checks the bytes against the signed SHA256SUMS and the
// engine writes the provenance beside the index documents once the version
// has landed, as a sync does. A transfer whose version is refused fails
// with the reason before it stages anything. It reads the sources: call it
// where I/O belongs, not in a UI's Update.
func AuthenticateTransfers(ctx context.Context, tasks []engine.Task, pol *trust.Policy) []engine.Task {
	type verdict struct {
		signed *Signed
		err    error
	}
	type key struct {
		src backends.Reader
		p   backends.Provider
		v   string
	}
	verdicts := map[key]verdict{}
	dests := map[backends.Reader]*keptBy{}
	out := make([]engine.Task, len(tasks))
	for i, t := range tasks {
		out[i] = t
		tr, ok := t.(Transfer)
		if !ok || tr.Provenance != nil {
			continue
		}
		a := tr.Archive
		k := key{tr.Src, a.Provider, a.Version.String()}
		vd, done := verdicts[k]
		if !done {
			vd.signed, vd.err = CheckProvenance(ctx, tr.Src, a.Provider, a.Version, pol)
			verdicts[k] = vd
		}
		switch {
		case vd.err != nil:
			tr.unauthentic = fmt.Errorf("not mirrored: %w", vd.err)
		case vd.signed != nil:
			signedArchive, err := vd.signed.Authenticate(a)
			if err != nil {
				tr.unauthentic = fmt.Errorf("not mirrored: source %s: %w", tr.Src, err)
				break
			}
			tr.Archive, tr.Provenance = signedArchive, vd.signed
		}
		if tr.unauthentic == nil && tr.Dst != nil {
			k := dests[tr.Dst]
			if k == nil {
				k = newKeptBy(tr.Dst, pol)
				dests[tr.Dst] = k
			}
			if checked, err := k.check(ctx, tr.Archive); err != nil {
				tr.unauthentic = fmt.Errorf("not mirrored: %w", err)
			} else {
				tr.Archive = checked
			}
		}
		out[i] = tr
	}
	return out
}

// writeBackfill writes what the plans' backfill found into dst; a write
// that fails is reported as the index documents' failures are.
func writeBackfill(ctx context.Context, dst backends.Writer, backfill []providerCarry, show func(engine.Event)) {
	for _, b := range backfill {
		if err := writeProvenance(ctx, dst, b.provider, b.versions); err != nil {
			show(engine.IndexWritten{Dst: dst.String(), Provider: b.provider, Err: err})
		}
	}
}

// writeProvenance writes the provenance of the versions that landed into
// dst, when dst keeps provenance.
func writeProvenance(ctx context.Context, dst backends.Writer, p backends.Provider, cs []carried) error {
	pw, ok := dst.(backends.ProvenanceWriter)
	if !ok || len(cs) == 0 {
		return nil
	}
	var errs []error
	for _, c := range cs {
		if err := pw.WriteProvenance(ctx, p, c.version, c.signed.Provenance); err != nil {
			errs = append(errs, &backends.OpError{Op: "write provenance", Place: dst.String(), Side: "destination", Err: err})
		}
	}
	return errors.Join(errs...)
}
