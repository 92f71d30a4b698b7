package backendtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// ReaderSuite checks that a place holding seeds lists and opens them as the
// Reader contract says. seeded must return a real instance of the place (a
// directory, a TLS server, a registry) holding exactly the seeds.
func ReaderSuite(t *testing.T, seeded func(t *testing.T, seeds []Seed) backends.Reader) {
	ctx := context.Background()
	seeds := Seeds(t,
		[]string{"example.com/acme/alpha", "example.com/acme/beta"},
		[]string{"1.0.0", "1.10.0", "2.0.0-rc.1", "1.2.0"},
		[]string{"linux_amd64", "darwin_arm64", "windows_amd64"})
	r := seeded(t, seeds)
	byKey := map[backends.PackageKey]Seed{}
	for _, s := range seeds {
		byKey[s.Package.Key()] = s
	}
	alpha := seeds[0].Package.Provider

	t.Run("Providers", func(t *testing.T) {
		ps, err := r.Providers(ctx)
		if errors.Is(err, backends.ErrNoCatalogue) {
			t.Skipf("%s cannot list providers", r)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 || ps[0].String() != "example.com/acme/alpha" || ps[1].String() != "example.com/acme/beta" {
			t.Fatalf("Providers = %v", ps)
		}
	})
	t.Run("VersionsNewestFirst", func(t *testing.T) {
		vs, err := r.Versions(ctx, alpha)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.String())
		}
		want := []string{"2.0.0-rc.1", "1.10.0", "1.2.0", "1.0.0"}
		if len(got) != len(want) {
			t.Fatalf("Versions = %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("Versions = %v, want %v", got, want)
			}
		}
	})
	t.Run("ArchivesAndOpen", func(t *testing.T) {
		v, _ := backends.ParseVersion("1.10.0")
		as, err := r.Archives(ctx, alpha, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 3 {
			t.Fatalf("Archives = %d, want 3", len(as))
		}
		for i, a := range as {
			if i > 0 && as[i-1].Platform.String() >= a.Platform.String() {
				t.Errorf("archives not sorted by platform: %v before %v", as[i-1].Platform, a.Platform)
			}
			s, ok := byKey[a.Key()]
			if !ok {
				t.Fatalf("unexpected archive %s", a.Package)
			}
			checkArchive(ctx, t, r, a, s)
		}
	})
	t.Run("UnknownProvider", func(t *testing.T) {
		p, _ := backends.ParseProvider("example.com/acme/nosuch")
		_, err := r.Versions(ctx, p)
		if !errors.Is(err, backends.ErrNotFound) {
			t.Fatalf("Versions of an unknown provider: err = %v, want ErrNotFound", err)
		}
	})
}

// checkArchive holds one listed archive to the seed it came from: its stated
// size (when the place knows it), the bytes Open returns, and the zh: hash it
// states. It is a step of its own because every archive of every kind of
// place owes its seed the same three things.
func checkArchive(ctx context.Context, t *testing.T, r backends.Reader, a backends.Archive, s Seed) {
	t.Helper()
	if a.Size >= 0 && a.Size != int64(len(s.Zip)) {
		t.Errorf("%s: Size = %d, want %d", a.Package, a.Size, len(s.Zip))
	}
	rc, err := r.Open(ctx, a)
	if err != nil {
		t.Fatalf("%s: Open: %v", a.Package, err)
	}
	got, err := io.ReadAll(rc)
	_ = rc.Close() // read only
	if err != nil {
		t.Fatalf("%s: read: %v", a.Package, err)
	}
	if !bytes.Equal(got, s.Zip) {
		t.Fatalf("%s: Open returned %d bytes that differ from the seeded zip (%d bytes)", a.Package, len(got), len(s.Zip))
	}
	zh := hashing.NewZipHasher()
	zh.Write(s.Zip)
	for _, h := range a.Hashes() {
		if h.Scheme() == hashing.SchemeZip && h != zh.Sum() {
			t.Errorf("%s: stated %s, the zip is %s", a.Package, h, zh.Sum())
		}
	}
}

// WriterSuite checks the Writer contract on an empty, real instance of a
// writable place: staged archives are invisible until committed, abort
// leaves nothing, a different archive is a conflict unless forced, and what
// was committed reads back byte for byte.
func WriterSuite(t *testing.T, empty func(t *testing.T) backends.Writer) {
	ctx := context.Background()
	pkg := Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	zipA := ProviderZip(t, pkg, "a")
	zipB := ProviderZip(t, pkg, "b")

	t.Run("AbortLeavesNothing", func(t *testing.T) {
		w := empty(t)
		st, err := w.Stage(ctx, pkg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Write(zipA); err != nil {
			t.Fatal(err)
		}
		if as, err := w.Archives(ctx, pkg.Provider, pkg.Version); err == nil && len(as) > 0 {
			t.Fatalf("a staged archive is visible before commit: %v", as)
		}
		if err := st.Abort(); err != nil {
			t.Fatal(err)
		}
		if as, err := w.Archives(ctx, pkg.Provider, pkg.Version); err == nil && len(as) > 0 {
			t.Fatalf("an aborted archive is visible: %v", as)
		}
	})
	t.Run("CommitReadBack", func(t *testing.T) {
		w := empty(t)
		if err := put(ctx, t, w, pkg, zipA, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readBack(ctx, t, w, pkg), zipA) {
			t.Fatal("committed archive reads back different bytes")
		}
		if err := put(ctx, t, w, pkg, zipA, false); err != nil {
			t.Fatalf("committing an identical archive again: %v", err)
		}
	})
	t.Run("ConflictUnlessForced", func(t *testing.T) {
		w := empty(t)
		if err := put(ctx, t, w, pkg, zipA, false); err != nil {
			t.Fatal(err)
		}
		err := put(ctx, t, w, pkg, zipB, false)
		if !errors.Is(err, backends.ErrConflict) {
			t.Fatalf("a different archive without force: err = %v, want ErrConflict", err)
		}
		if !bytes.Equal(readBack(ctx, t, w, pkg), zipA) {
			t.Fatal("a refused archive replaced the original")
		}
		if err := put(ctx, t, w, pkg, zipB, true); err != nil {
			t.Fatalf("forced replace: %v", err)
		}
		if !bytes.Equal(readBack(ctx, t, w, pkg), zipB) {
			t.Fatal("forced replace did not replace")
		}
	})
}

// put takes one archive into a writable place the whole way the Writer
// contract prescribes: Commit, then flush. Only the commit's and the flush's
// errors are returned, as they are what the cases judge; a failure before
// them fails the case outright.
func put(ctx context.Context, t *testing.T, w backends.Writer, pkg backends.Package, data []byte, force bool) error {
	t.Helper()
	if err := Commit(ctx, t, w, pkg, data, force); err != nil {
		return err
	}
	return w.Flush(ctx, pkg.Provider)
}

// Commit lands one archive in a writable place as the sync engine does:
// stage, write, hash what was staged, commit. It returns the commit's error;
// a failure before the commit fails the test.
func Commit(ctx context.Context, t testing.TB, w backends.Writer, pkg backends.Package, data []byte, force bool) error {
	t.Helper()
	st, err := w.Stage(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Abort() }() // after Commit, a no-op
	if _, err := st.Write(data); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st.Commit(ctx, sums, force)
}

// readBack reads the one archive of pkg the place lists, through the Reader
// side, so a case compares what was committed with what is served.
func readBack(ctx context.Context, t *testing.T, w backends.Writer, pkg backends.Package) []byte {
	t.Helper()
	as, err := w.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 {
		t.Fatalf("Archives = %d, want 1", len(as))
	}
	rc, err := w.Open(ctx, as[0])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }() // read only
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
