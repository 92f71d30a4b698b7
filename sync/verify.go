package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/readers"
	"github.com/tfmirror/tfmirror/hashing"
)

// Status is the state of one package in a plan, a verification or a check;
// the values are the command-line contract's.
type Status string

const (
	StatusMissing     Status = "missing"
	StatusPresent     Status = "present"
	StatusConflict    Status = "conflict"
	StatusUnavailable Status = "unavailable"
	StatusOK          Status = "ok"
	StatusMismatch    Status = "mismatch"
	StatusError       Status = "error"
)

// Finding is one package's outcome, as `verify`, `diff` and `check` report
// them.
type Finding struct {
	Package backends.Package
	Status  Status
	Detail  string
	Result  *hashing.Result // verification, where hashes were computed
	// SrcHashes and DstHashes are the hashes the two sides of a plan state
	// (diff), each sorted.
	SrcHashes, DstHashes []hashing.Hash
	// Signer is who signed the package, where the place keeps its
	// version's provenance and verify checked it.
	Signer *provenance.Signer
}

// HashArchive computes the sums of an archive, zh: and h1:: in place for
// local places, otherwise by streaming it to a temp file, hashed on the way.
func HashArchive(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options) (hashing.Sums, error) {
	return hashArchive(ctx, r, a, opts, true, "")
}

// hashArchiveFor computes what checking an archive against evidence needs:
// zh:, and h1: only where some of the evidence needs it (or the options
// ask for it everywhere).
func hashArchiveFor(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options, evidence []hashing.Evidence) (hashing.Sums, error) {
	return hashArchiveWith(ctx, r, a, opts, evidence, false, "")
}

// hashArchiveWith is hashArchiveFor computing h1: also wherever always is
// set.
// exe, when set, is the provider type whose executable the zip must hold
// (hashing.CheckExecutable), checked on the file hashed: an error wrapping
// hashing.ErrNoExecutable otherwise.
func hashArchiveWith(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options, evidence []hashing.Evidence, always bool, exe string) (hashing.Sums, error) {
	sums, err := hashArchive(ctx, r, a, opts, always || opts.WantH1("", evidence...), exe)
	if err == nil && sums.H1 == "" && sums.ZH != "" && opts.WantH1(sums.ZH, evidence...) {
		// A lock file whose zh: are not the archive's may still list its
		// h1:.
		return hashArchive(ctx, r, a, opts, true, "")
	}
	return sums, err
}

func hashArchive(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options, h1 bool, exe string) (hashing.Sums, error) {
	if lp, ok := r.(backends.LocalPather); ok {
		p := lp.LocalPath(a)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return hashing.HashPath(p, opts)
		}
		sums, err := hashing.HashZipSums(p, h1, opts)
		if err == nil && exe != "" {
			err = hashing.CheckExecutable(p, exe)
		}
		return sums, err
	}
	rc, err := r.Open(ctx, a)
	if err != nil {
		return hashing.Sums{}, err
	}
	defer func() { _ = rc.Close() }() // read only
	f, err := os.CreateTemp("", "tfmirror-verify-*.zip")
	if err != nil {
		return hashing.Sums{}, err
	}
	defer os.Remove(f.Name())
	defer func() { _ = f.Close() }() // a spool, removed after
	s := hashing.NewStream(true, h1, opts)
	defer s.Close()
	if _, err := io.Copy(io.MultiWriter(f, s), readers.WithContext(ctx, rc)); err != nil {
		return hashing.Sums{}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
	}
	if err := f.Close(); err != nil {
		return hashing.Sums{}, err
	}
	sums := hashing.Sums{ZH: s.ZipHash()}
	if exe != "" {
		if err := hashing.CheckExecutable(f.Name(), exe); err != nil {
			return sums, fmt.Errorf("%s: %s: %w", r, a.Package, err)
		}
	}
	if !h1 {
		return sums, nil
	}
	if sums.H1, err = s.H1(f.Name()); err != nil {
		return hashing.Sums{ZH: sums.ZH}, fmt.Errorf("%s: %s: %w", r, a.Package, err)
	}
	return sums, nil
}

// VerifyArchive recomputes a's hashes and checks them against everything the
// place (and a lock file, through the selection) states: every hash it
// states, h1: included where it states one (verify audits what a mirror
// states: a wrong h1: beside a right zh: is a defect that clients recording
// a mirror's hashes would inherit), and h1: also where nothing vouches.
func VerifyArchive(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options) Finding {
	return verifyArchive(ctx, r, a, opts, "")
}

// verifyArchive is VerifyArchive holding the zip, where exe is set, to
// holding that provider type's executable: a zip without it is a mismatch.
func verifyArchive(ctx context.Context, r backends.Reader, a backends.Archive, opts hashing.Options, exe string) Finding {
	f := Finding{Package: a.Package}
	sums, err := hashArchiveWith(ctx, r, a, opts, a.Evidence, statesH1(a.Evidence), exe)
	if errors.Is(err, hashing.ErrNoExecutable) {
		f.Status, f.Detail = StatusMismatch, err.Error()
		return f
	}
	if err != nil {
		f.Status, f.Detail = StatusError, err.Error()
		return f
	}
	res := hashing.Verify(sums, a.Evidence...)
	f.Result = &res
	switch {
	case !res.OK():
		f.Status, f.Detail = StatusMismatch, fmt.Sprintf("%s: %s: %v", r, a.Package, res.Err())
	case !res.Verified():
		f.Status, f.Detail = StatusOK, "hashes computed; the place states none to check them against"
	default:
		f.Status, f.Detail = StatusOK, DescribeMatches(res)
	}
	return f
}

// VerifySigned verifies one archive as VerifyPlaceWith does: against what r
// states and, where r keeps its version's provenance, against the signed
// SHA256SUMS, naming the signer (the UI's verify).
func VerifySigned(ctx context.Context, r backends.Reader, a backends.Archive, vo VerifyOptions) Finding {
	return verifySigned(ctx, r, a, Signatures(ctx, r, []backends.Archive{a}, vo.Signatures)[0], vo.Hashing)
}

// verifySigned is VerifyArchive with the version's provenance, if any:
// a provenance that does not check is a mismatch without hashing a byte.
func verifySigned(ctx context.Context, r backends.Reader, a backends.Archive, s Signature, opts hashing.Options) Finding {
	if s.Err != nil {
		return Finding{Package: a.Package, Status: StatusMismatch, Detail: s.Err.Error()}
	}
	if s.Signed == nil {
		return VerifyArchive(ctx, r, a, opts)
	}
	signer := &s.Signed.Signer
	signedArchive, err := s.Signed.Authenticate(a)
	if err != nil {
		return Finding{Package: a.Package, Status: StatusMismatch, Detail: fmt.Sprintf("%s: %v", r, err), Signer: signer}
	}
	exe := a.Provider.Type
	if a.Layout == backends.Unpacked {
		exe = ""
	}
	f := verifyArchive(ctx, r, signedArchive, opts, exe)
	f.Signer = signer
	if f.Status == StatusOK && signer.Expired != "" {
		f.Detail += fmt.Sprintf(" (the signing key has expired: %s)", signer.Expired)
	}
	return f
}

// statesH1 reports whether some evidence states an h1:.
func statesH1(evidence []hashing.Evidence) bool {
	for _, ev := range evidence {
		for _, h := range ev.Hashes {
			if h.Scheme() == hashing.SchemeH1 {
				return true
			}
		}
	}
	return false
}

// DescribeMatches says, for messages, which of res's checks matched and
// against what.
func DescribeMatches(res hashing.Result) string {
	s := ""
	for _, c := range res.Checks {
		if c.Status != hashing.Match {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s matches %s", trimColon(c.Scheme), c.Source)
	}
	return s
}

func trimColon(s hashing.Scheme) string { return strings.TrimSuffix(string(s), ":") }

// VerifyOptions tune VerifyPlaceWith.
type VerifyOptions struct {
	Hashing hashing.Options
	// Signatures says how the signatures of provenance are checked.
	Signatures provenance.Options
}

// VerifyPlace verifies every selected archive of r, in order, with the
// default signature rules.
func VerifyPlace(ctx context.Context, r backends.Reader, sel Selection, opts hashing.Options) ([]Finding, error) {
	return VerifyPlaceWith(ctx, r, sel, VerifyOptions{Hashing: opts})
}

// VerifyPlaceWith verifies every selected archive of r, in order: its
// hashes against everything r states, and where r keeps its version's
// provenance, the signature over SHA256SUMS and the archive's zh: against
// the signed line. A version whose provenance does not check has every
// archive reported as a mismatch that says why.
func VerifyPlaceWith(ctx context.Context, r backends.Reader, sel Selection, vo VerifyOptions) ([]Finding, error) {
	var out []Finding
	err := VerifyEach(ctx, r, sel, vo, func(fs []Finding) error {
		out = append(out, fs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// VerifyEach is VerifyPlaceWith handing fn the findings a batch of
// providers at a time, in order, and keeping none: verify of 100,000
// archives holds one batch's listings and findings. A listing that fails,
// or a cancelled ctx, ends it with the error after the calls for the
// batches before; so does fn's error.
func VerifyEach(ctx context.Context, r backends.Reader, sel Selection, vo VerifyOptions, fn func([]Finding) error) error {
	ps, err := sel.ProvidersIn(ctx, r)
	if err != nil {
		return err
	}
	// Providers are listed and verified in batches of at least
	// verifyBatch archives, one archive per core (HashWorkers), and
	// reported in order. The findings' details, the same for a version's
	// archives, are kept once each.
	var b verifyBatch
	var details interner
	found := 0
	selected := map[backends.Provider]bool{}
	for i, p := range ps {
		as, err := sel.ArchivesOf(ctx, r, p)
		if err != nil {
			return err
		}
		selected[p] = len(as) > 0
		b.archives = append(b.archives, as...)
		b.sigs = append(b.sigs, Signatures(ctx, r, as, vo.Signatures)...)
		b.ends = append(b.ends, len(b.archives))
		b.audits = append(b.audits, sel.audit(ctx, r, p))
		if len(b.archives) < verifyBatchSize && i < len(ps)-1 {
			continue
		}
		fs, err := b.verify(ctx, r, vo.Hashing, &details)
		if err != nil {
			return err
		}
		found += len(fs)
		if err := fn(fs); err != nil {
			return err
		}
		b = verifyBatch{}
	}
	if found == 0 {
		// Nothing to verify is not "all is well": say what the place holds.
		return sel.checkSelected(ctx, r, ps, selected)
	}
	return nil
}

// verify verifies the batch's archives, one per core, and returns their
// findings and the audits' in order.
func (b *verifyBatch) verify(ctx context.Context, r backends.Reader, opts hashing.Options, details *interner) ([]Finding, error) {
	found := make([]Finding, len(b.archives))
	Parallel(ctx, HashWorkers(r), len(b.archives), func(j int) {
		found[j] = verifySigned(ctx, r, b.archives[j], b.sigs[j], opts)
		found[j].Detail = details.intern(found[j].Detail)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := len(found)
	for _, a := range b.audits {
		n += len(a)
	}
	out := make([]Finding, 0, n)
	start := 0
	for k, end := range b.ends {
		out = append(out, found[start:end]...)
		out = append(out, b.audits[k]...)
		start = end
	}
	return out, nil
}

// verifyBatchSize is how many archives VerifyPlaceWith lists before it
// verifies them: enough to keep every core busy across small providers.
const verifyBatchSize = 4096

// verifyBatch is the listings of consecutive providers, to verify
// together: ends[k] is where the k-th provider's archives end, audits[k]
// its audit's findings.
type verifyBatch struct {
	archives []backends.Archive
	sigs     []Signature
	ends     []int
	audits   [][]Finding
}

// interner keeps one copy of equal strings; it is safe for concurrent
// use.
type interner struct {
	mu   gosync.Mutex
	seen map[string]string
}

func (in *interner) intern(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if t, ok := in.seen[s]; ok {
		return t
	}
	if in.seen == nil {
		in.seen = map[string]string{}
	}
	in.seen[s] = s
	return s
}

// audit reports what is wrong with r's own records of p (backends.Auditor),
// for the selected platforms.
func (sel Selection) audit(ctx context.Context, r backends.Reader, p backends.Provider) []Finding {
	au, ok := r.(backends.Auditor)
	if !ok {
		return nil
	}
	var out []Finding
	for _, prob := range au.Audit(ctx, p) {
		if prob.Package.Version != nil && !sel.WantsPlatform(prob.Package.Platform) && prob.Package.Platform != (backends.Platform{}) {
			continue
		}
		f := Finding{Package: prob.Package, Status: StatusMismatch, Detail: prob.Detail}
		if prob.Missing {
			f.Status = StatusMissing
		}
		out = append(out, f)
	}
	return out
}
