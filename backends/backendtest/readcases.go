package backendtest

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

// capabilitySeeds are what the read-side cases seed a place with.
func capabilitySeeds(t *testing.T) []Seed {
	return Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.2.0"}, []string{"linux_amd64", "darwin_arm64", "windows_amd64"})
}

// statedHashes: what the place states for each platform of a version,
// without an archive being downloaded, is what verifying the archive
// gives (an h1: only where one is stated, never a wrong one), and every
// platform the place holds is stated.
func statedHashes(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	for _, sv := range Versions(seeds) {
		p, v := sv[0].Package.Provider, sv[0].Package.Version
		stated, err := r.(backends.StatedHashLister).StatedHashes(ctx, p, v)
		if err != nil {
			t.Fatal(err)
		}
		if stated == nil {
			t.Fatalf("%s %s: the place states nothing for a version it holds", p, v)
		}
		for _, s := range sv {
			hs := stated[s.Package.Platform]
			sums := sumsOf(t, s)
			if !slices.Contains(hs, sums.ZH) {
				t.Errorf("%s: stated %v, lacking the verified %s", s.Package, hs, sums.ZH)
			}
			for _, h := range hs {
				if !sums.Matches(h) {
					t.Errorf("%s: stated %s, the archive verified is %s %s", s.Package, h, sums.H1, sums.ZH)
				}
			}
		}
		if len(stated) != len(sv) {
			t.Errorf("%s %s: states %d platforms, holds %d", p, v, len(stated), len(sv))
		}
	}
}

// signedHashes: the hashes a place vouches for at once are exactly the
// zh: of every platform's release zip of the version.
func signedHashes(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	for _, sv := range Versions(seeds) {
		p, v := sv[0].Package.Provider, sv[0].Package.Version
		got, err := r.(backends.SignedHashLister).SignedHashes(ctx, p, v)
		if err != nil {
			t.Fatal(err)
		}
		var want []hashing.Hash
		for _, s := range sv {
			want = append(want, sumsOf(t, s).ZH)
		}
		slices.Sort(want)
		got = slices.Clone(got)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: SignedHashes = %v, want %v", p, v, got, want)
		}
	}
}

// audit: a place holding what its documents list audits clean; where the
// test can lose an archive's content behind the place's back, Audit
// reports that package missing.
func audit(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	p := seeds[0].Package.Provider
	if probs := r.(backends.Auditor).Audit(ctx, p); len(probs) != 0 {
		t.Fatalf("a place as written audits with problems: %+v", probs)
	}
	if pl.Lose == nil {
		t.Logf("%T: the test cannot lose an archive behind its back; only a clean audit checked", r)
		return
	}
	as, err := r.Archives(ctx, p, seeds[0].Package.Version)
	if err != nil || len(as) == 0 {
		t.Fatalf("Archives = %v, %v", as, err)
	}
	pl.Lose(t, r, as[0])
	probs := r.(backends.Auditor).Audit(ctx, p)
	found := false
	for _, pr := range probs {
		if pr.Missing && pr.Package.Key() == as[0].Key() {
			found = true
		} else {
			t.Errorf("Audit reports what is not wrong: %+v", pr)
		}
	}
	if !found {
		t.Fatalf("Audit after %s lost its content: %+v, want it reported missing", as[0].Package, probs)
	}
}

// listerAgrees: a listing of every archive at once (or of several
// versions at once) gives what Archives gives version by version:
// the same packages with the same stated hashes and, unless unsized,
// the same sizes.
func listerAgrees(t *testing.T, pl Place, list func(context.Context, backends.Reader, backends.Provider, []backends.Version) ([]backends.Archive, error), unsized bool) {
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	p := seeds[0].Package.Provider
	var versions []backends.Version
	var vs []string
	for _, sv := range Versions(seeds) {
		versions = append(versions, sv[0].Package.Version)
		vs = append(vs, sv[0].Package.Version.String())
	}
	one := listed(ctx, t, r, p, vs)
	all, err := list(ctx, r, p, versions)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]backends.Archive{}
	for _, a := range all {
		got[a.Version.String()+" "+a.Platform.String()] = a
	}
	if g, w := strings.Join(keys(got), ", "), strings.Join(keys(one), ", "); g != w {
		t.Fatalf("the listing at once gives\n  %s\nversion by version\n  %s", g, w)
	}
	for k, a := range got {
		b := one[k]
		if !slices.Equal(a.Hashes(), b.Hashes()) {
			t.Errorf("%s: listed at once with %v, version by version with %v", k, a.Hashes(), b.Hashes())
		}
		if unsized && a.Size != -1 && a.Size != b.Size || !unsized && a.Size != b.Size {
			t.Errorf("%s: listed at once with size %d, version by version %d", k, a.Size, b.Size)
		}
	}
}

// localPath: the local path of each listed archive holds its zip.
func localPath(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	for _, s := range seeds {
		as, err := r.Archives(ctx, s.Package.Provider, s.Package.Version)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.Key() != s.Package.Key() {
				continue
			}
			b, err := os.ReadFile(r.(backends.LocalPather).LocalPath(a))
			if err != nil || !bytes.Equal(b, s.Zip) {
				t.Errorf("%s: LocalPath %s holds %d bytes (%v), not the zip", a.Package, r.(backends.LocalPather).LocalPath(a), len(b), err)
			}
		}
	}
}

// provenanceReader: the provenance a place keeps (or fetches) for each
// version it was given with provenance is about that version, its
// signature checks, and its SHA256SUMS names every platform's zip with
// the zip's SHA-256.
func provenanceReader(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	r := pl.signed(t, seeds, NewSigner(t, "reader"))
	for _, sv := range Versions(seeds) {
		p, v := sv[0].Package.Provider, sv[0].Package.Version
		pr, err := r.(backends.ProvenanceReader).Provenance(ctx, p, v)
		if err != nil {
			t.Fatalf("%s %s: Provenance: %v", p, v, err)
		}
		if pr.Provider != p.String() || pr.Version != v.String() {
			t.Errorf("%s %s: the provenance is about %s %s", p, v, pr.Provider, pr.Version)
		}
		if _, err := pr.Check(provenance.Options{}); err != nil {
			t.Errorf("%s %s: the signature does not check: %v", p, v, err)
		}
		sums, err := provenance.ParseSums(pr.SHA256SUMS)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sv {
			if got, want := sums[s.Package.Filename()], sumsOf(t, s).ZH.Value(); got != want {
				t.Errorf("%s: SHA256SUMS states %q, the zip is %s", s.Package, got, want)
			}
		}
	}
}

// warner: a place as it was written, read through, has nothing to warn
// of (its junk tolerance is each place's own test).
func warner(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	for _, sv := range Versions(seeds) {
		if _, err := r.Archives(ctx, sv[0].Package.Provider, sv[0].Package.Version); err != nil {
			t.Fatal(err)
		}
	}
	if w := r.(backends.Warner).Warnings(); len(w) != 0 {
		t.Fatalf("a place as written warns: %q", w)
	}
}

// signed returns an instance of pl holding seeds and signer's provenance
// of each of their versions: Signed's; or, for a writable place, one they
// are landed in and the provenance written to; or Seeded's, for a place
// that signs what it holds itself (an origin registry).
func (pl Place) signed(t *testing.T, seeds []Seed, signer *Signer) backends.Reader {
	t.Helper()
	switch {
	case pl.Signed != nil:
		return pl.Signed(t, seeds, signer)
	case pl.Empty != nil:
		open := pl.Empty(t)
		w := open(t)
		land(t, w, seeds)
		for _, sv := range Versions(seeds) {
			pw, ok := w.(backends.ProvenanceWriter)
			if !ok {
				t.Fatalf("backendtest: %T keeps provenance but cannot be given it: its Place needs Signed", w)
			}
			if err := pw.WriteProvenance(context.Background(), sv[0].Package.Provider, sv[0].Package.Version, signer.Provenance(t, sv)); err != nil {
				t.Fatal(err)
			}
		}
		return open(t)
	}
	return pl.Seeded(t, seeds)
}
