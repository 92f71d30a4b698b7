package backendtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// Place describes one kind of place to Conformance: how to make real
// instances of it. A read-only place gives Seeded; a writable one gives
// Empty (and Seeded only where it seeds otherwise than through its Writer).
type Place struct {
	// Seeded returns a real instance holding exactly seeds. Nil for a
	// writable place seeded through its Writer (stage, commit, flush).
	Seeded func(t *testing.T, seeds []Seed) backends.Reader
	// Empty makes a new, empty, real instance of a writable place and
	// returns how to open it: each call of open is another instance of
	// that one place, as another process would open it. Nil for read-only
	// places.
	Empty func(t *testing.T) (open func(t *testing.T) backends.Writer)
	// Lose deletes the content of an archive behind the place's back (a
	// disk or a bucket losing it), leaving the index documents as they
	// are, so that the audit case can check Audit reports it missing. Nil
	// where a test cannot do that to the place.
	Lose func(t *testing.T, r backends.Reader, a backends.Archive)
	// Signed returns a real instance holding seeds and signer's provenance
	// of each of their versions, for a read-only place that keeps
	// provenance it is given (a bundle, a release directory). Nil where
	// the place is writable or signs what it holds itself.
	Signed func(t *testing.T, seeds []Seed, signer *Signer) backends.Reader
	// Gaps names the steps of cases ("CASE/STEP") the place is known to
	// fail, and why: those steps skip, saying so, and TestCapabilityTable
	// shows them. A gap is a defect to fix, not a way to pass.
	Gaps map[string]string
	// HTTPClient trusts the place's endpoints, for the cases that fetch a
	// URL the place hands out (Presigner). Nil where no case needs it.
	HTTPClient *http.Client
}

// Capability is one capability a place may have, detected by type
// assertion, and the conformance case that holds every place having it
// to its contract.
type Capability struct {
	// Name is the interface in package backends (or, for a contract of
	// the Writer beyond WriterSuite, what it is about).
	Name string
	// Has reports whether r has the capability.
	Has func(r backends.Reader) bool
	// Case is the name of the subtest Conformance runs for it.
	Case string
	run  func(t *testing.T, pl Place)
}

func is[T any](r backends.Reader) bool { _, ok := r.(T); return ok }

// Capabilities lists every capability of a place that Conformance tests,
// in the order it tests them.
var Capabilities = []Capability{
	{Name: "Reader", Case: "Reader", Has: is[backends.Reader], run: func(t *testing.T, pl Place) { ReaderSuite(t, pl.seeded) }},
	{Name: "Writer", Case: "Writer", Has: is[backends.Writer], run: func(t *testing.T, pl Place) {
		WriterSuite(t, func(t *testing.T) backends.Writer { return pl.Empty(t)(t) })
	}},
	{Name: "Writer.Flush", Case: "FlushConvergesWithAConcurrentWriter", Has: is[backends.Writer], run: flushConverges},
	{Name: "FileStager", Case: "FileStager", Has: is[backends.FileStager], run: fileStager},
	{Name: "Remover", Case: "Remover", Has: is[backends.Remover], run: remover},
	{Name: "ProvenanceWriter", Case: "ProvenanceWriter", Has: is[backends.ProvenanceWriter], run: provenanceWriter},
	{Name: "ProvenanceReader", Case: "ProvenanceReader", Has: is[backends.ProvenanceReader], run: provenanceReader},
	{Name: "ProvenanceLister", Case: "ProvenanceLister", Has: is[backends.ProvenanceLister], run: provenanceLister},
	{Name: "StatedHashLister", Case: "StatedHashes", Has: is[backends.StatedHashLister], run: statedHashes},
	{Name: "SignedHashLister", Case: "SignedHashes", Has: is[backends.SignedHashLister], run: signedHashes},
	{Name: "NoteKeeper", Case: "NoteKeeper", Has: is[backends.NoteKeeper], run: noteKeeper},
	{Name: "Auditor", Case: "Audit", Has: is[backends.Auditor], run: audit},
	{Name: "Lister", Case: "Lister", Has: is[backends.Lister], run: func(t *testing.T, pl Place) {
		listerAgrees(t, pl, func(ctx context.Context, r backends.Reader, p backends.Provider, _ []backends.Version) ([]backends.Archive, error) {
			return r.(backends.Lister).AllArchives(ctx, p)
		}, false)
	}},
	{Name: "UnsizedLister", Case: "UnsizedLister", Has: is[backends.UnsizedLister], run: func(t *testing.T, pl Place) {
		listerAgrees(t, pl, func(ctx context.Context, r backends.Reader, p backends.Provider, _ []backends.Version) ([]backends.Archive, error) {
			return r.(backends.UnsizedLister).AllArchivesUnsized(ctx, p)
		}, true)
	}},
	{Name: "VersionsLister", Case: "VersionsLister", Has: is[backends.VersionsLister], run: func(t *testing.T, pl Place) {
		listerAgrees(t, pl, func(ctx context.Context, r backends.Reader, p backends.Provider, vs []backends.Version) ([]backends.Archive, error) {
			return r.(backends.VersionsLister).ArchivesAt(ctx, p, vs)
		}, false)
	}},
	{Name: "Presigner", Case: "Presigner", Has: is[backends.Presigner], run: presigner},
	{Name: "LocalPather", Case: "LocalPath", Has: is[backends.LocalPather], run: localPath},
	{Name: "Warner", Case: "Warner", Has: is[backends.Warner], run: warner},
	{Name: "ClientConfigurer", Case: "ClientConfig", Has: is[backends.ClientConfigurer], run: clientConfigurer},
}

// Conformance runs, against real instances of pl, the case of every
// capability in Capabilities that the place has (by type assertion on an
// instance), each as a subtest named by Capability.Case. A new place gets
// every case its capabilities call for; TestCapabilityTable checks that
// every place's package runs it.
func Conformance(t *testing.T, pl Place) {
	var probe backends.Reader
	switch {
	case pl.Empty != nil:
		probe = pl.Empty(t)(t)
	case pl.Seeded != nil:
		probe = pl.Seeded(t, Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	default:
		t.Fatal("backendtest: a Place needs Seeded or Empty")
	}
	if _, w := probe.(backends.Writer); w && pl.Empty == nil {
		t.Fatalf("backendtest: %T is writable: its Place needs Empty", probe)
	}
	var ran []string
	for _, c := range Capabilities {
		if !c.Has(probe) {
			continue
		}
		ran = append(ran, c.Name)
		t.Run(c.Case, func(t *testing.T) { c.run(t, pl) })
	}
	t.Logf("%T: ran the cases of %s", probe, strings.Join(ran, ", "))
}

// seeded returns an instance of pl holding exactly seeds: Seeded's, or
// an empty one the seeds are landed in as the sync engine lands them.
func (pl Place) seeded(t *testing.T, seeds []Seed) backends.Reader {
	t.Helper()
	if pl.Seeded != nil {
		return pl.Seeded(t, seeds)
	}
	open := pl.Empty(t)
	land(t, open(t), seeds)
	return open(t)
}

// land commits seeds into w and flushes each of their providers.
func land(t *testing.T, w backends.Writer, seeds []Seed) {
	t.Helper()
	if err := landErr(context.Background(), w, seeds); err != nil {
		t.Fatal(err)
	}
}

// landErr is land for goroutines: it returns what failed.
func landErr(ctx context.Context, w backends.Writer, seeds []Seed) error {
	var order []backends.Provider
	seen := map[backends.Provider]bool{}
	for _, s := range seeds {
		if err := commitErr(ctx, w, s.Package, s.Zip); err != nil {
			return err
		}
		if !seen[s.Package.Provider] {
			seen[s.Package.Provider] = true
			order = append(order, s.Package.Provider)
		}
	}
	for _, p := range order {
		if err := w.Flush(ctx, p); err != nil {
			return fmt.Errorf("flush %s: %w", p, err)
		}
	}
	return nil
}

// commitErr is Commit for goroutines, which may not fail the test.
func commitErr(ctx context.Context, w backends.Writer, pkg backends.Package, data []byte) error {
	st, err := w.Stage(ctx, pkg)
	if err != nil {
		return fmt.Errorf("stage %s: %w", pkg, err)
	}
	defer func() { _ = st.Abort() }() // after Commit, a no-op
	if _, err := st.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", pkg, err)
	}
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		return err
	}
	if err := st.Commit(ctx, sums, false); err != nil {
		return fmt.Errorf("commit %s: %w", pkg, err)
	}
	return nil
}

// listed returns what r's documents list for p at versions, keyed as
// "VERSION PLATFORM"; a version r does not hold lists nothing.
func listed(ctx context.Context, t *testing.T, r backends.Reader, p backends.Provider, versions []string) map[string]backends.Archive {
	t.Helper()
	out := map[string]backends.Archive{}
	for _, vs := range versions {
		v, _ := backends.ParseVersion(vs)
		as, err := r.Archives(ctx, p, v)
		if errors.Is(err, backends.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: Archives: %v", p, vs, err)
		}
		for _, a := range as {
			out[a.Version.String()+" "+a.Platform.String()] = a
		}
	}
	return out
}

// keys returns m's keys, sorted, for messages and comparisons.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sumsOf computes the h1: and zh: of a seed's zip, as the sync engine
// verifies an archive before it commits it.
func sumsOf(t *testing.T, s Seed) hashing.Sums {
	t.Helper()
	p := filepath.Join(t.TempDir(), s.Package.Filename())
	if err := os.WriteFile(p, s.Zip, 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(p, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// statesOnly checks that every hash a states is one verified of its seed.
func statesOnly(t *testing.T, a backends.Archive, sums hashing.Sums) {
	t.Helper()
	for _, h := range a.Hashes() {
		if h.Known() && !sums.Matches(h) {
			t.Errorf("%s: the place states %s, the archive verified is %s %s", a.Package, h, sums.H1, sums.ZH)
		}
	}
}
