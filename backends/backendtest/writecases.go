package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

// flushConverges: two writers of one place (two instances, as two
// processes) each land some platforms of the same versions at once,
// flushing after each version; once both have flushed, the documents list
// every archive either landed, each with the hashes verified of it. A
// flush that rewrites a document from what its own instance saw loses the
// other writer's archives. Rounds over, so interleavings vary.
func flushConverges(t *testing.T, pl Place) {
	ctx := context.Background()
	versions := []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}
	left, right := []string{"linux_amd64", "linux_arm64"}, []string{"darwin_arm64", "windows_amd64"}
	seeds := Seeds(t, []string{"example.com/acme/alpha"}, versions, append(slices.Clone(left), right...))
	p := seeds[0].Package.Provider
	sums := map[string]hashing.Sums{}
	var bySide [2][]Seed
	for _, s := range seeds {
		sums[s.Package.Version.String()+" "+s.Package.Platform.String()] = sumsOf(t, s)
		side := 0
		if slices.Contains(right, s.Package.Platform.String()) {
			side = 1
		}
		bySide[side] = append(bySide[side], s)
	}
	for round := range 3 {
		open := pl.Empty(t)
		writers := [2]backends.Writer{open(t), open(t)}
		var wg gosync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, v := range Versions(bySide[i]) { // a flush per version
					if err := landErr(ctx, writers[i], v); err != nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := listed(ctx, t, open(t), p, versions)
		if g, w := strings.Join(keys(got), ", "), strings.Join(keys(sums), ", "); g != w {
			t.Fatalf("round %d: after both writers flushed, the documents list\n  %s\nwant every archive landed\n  %s", round, g, w)
		}
		for k, a := range got {
			statesOnly(t, a, sums[k])
		}
		documentsAgree(ctx, t, open(t), p, fmt.Sprintf("round %d, after both writers flushed", round))
	}
}

// documentsAgree checks, on a place that can audit itself, that its index
// documents list exactly the archives it holds: its Reader may list the
// archives themselves (a directory's), which the clients of its documents
// do not see.
func documentsAgree(ctx context.Context, t *testing.T, r backends.Reader, p backends.Provider, when string) {
	t.Helper()
	if a, ok := r.(backends.Auditor); ok {
		if probs := a.Audit(ctx, p); len(probs) != 0 {
			t.Fatalf("%s: the documents disagree with the archives: %+v", when, probs)
		}
	}
}

// fileStager: an archive staged from a local file as it is (nothing
// written to the Staged) lands whole, reads back byte for byte, and the
// file is left as it was.
func fileStager(t *testing.T, pl Place) {
	ctx := context.Background()
	s := Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})[0]
	path := filepath.Join(t.TempDir(), s.Package.Filename())
	if err := os.WriteFile(path, s.Zip, 0o644); err != nil {
		t.Fatal(err)
	}
	open := pl.Empty(t)
	w := open(t)
	st, err := w.(backends.FileStager).StageFile(ctx, s.Package, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Abort() }() // after Commit, a no-op
	if err := st.Commit(ctx, sumsOf(t, s), false); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx, s.Package.Provider); err != nil {
		t.Fatal(err)
	}
	if got := readBack(ctx, t, open(t), s.Package); !bytes.Equal(got, s.Zip) {
		t.Fatalf("an archive staged from a file reads back %d bytes that differ from the file's %d", len(got), len(s.Zip))
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, s.Zip) {
		t.Fatalf("the file staged from changed or went: %d bytes, %v", len(b), err)
	}
}

// remover: Remove takes archives out of the documents (never listed
// again) while another writer of the place lands archives of the same
// provider, some of the versions Remove touches: what the other writer
// added survives, and what Remove did not touch stays. Rounds over.
func remover(t *testing.T, pl Place) {
	ctx := context.Background()
	versions := []string{"1.0.0", "1.1.0", "2.0.0"}
	seeds := Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64"})
	p := seeds[0].Package.Provider
	var added []Seed
	for _, pv := range [][2]string{{"1.1.0", "windows_amd64"}, {"2.0.0", "linux_amd64"}} {
		pkg := Pkg(t, p.String(), pv[0], pv[1])
		added = append(added, Seed{Package: pkg, Zip: ProviderZip(t, pkg, "")})
	}
	gone := map[string]bool{"1.0.0 linux_amd64": true, "1.0.0 darwin_arm64": true, "1.1.0 linux_amd64": true}
	want := []string{"1.1.0 darwin_arm64", "1.1.0 windows_amd64", "2.0.0 linux_amd64"}
	for round := range 3 {
		open := pl.Empty(t)
		w := open(t)
		land(t, w, seeds)
		var doomed []backends.Archive
		for k, a := range listed(ctx, t, w, p, versions) {
			if gone[k] {
				doomed = append(doomed, a)
			}
		}
		if len(doomed) != len(gone) {
			t.Fatalf("the place lists %d of the %d archives to remove", len(doomed), len(gone))
		}
		other := open(t)
		var removal backends.Removal
		var rmErr, addErr error
		var wg gosync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); removal, rmErr = w.(backends.Remover).Remove(ctx, p, doomed) }()
		go func() { defer wg.Done(); addErr = landErr(ctx, other, added) }()
		wg.Wait()
		if err := errors.Join(rmErr, addErr); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(removal.Removed) != len(gone) || len(removal.Left) != 0 {
			t.Fatalf("round %d: Removal = %+v, want the %d archives removed and none left", round, removal, len(gone))
		}
		for _, r := range []backends.Reader{w, other, open(t)} {
			got := keys(listed(ctx, t, r, p, versions))
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("round %d: after the removal and the other writer's landing, %T lists\n  %s\nwant\n  %s", round, r, strings.Join(got, ", "), strings.Join(want, ", "))
			}
		}
		documentsAgree(ctx, t, open(t), p, fmt.Sprintf("round %d, after the removal and the other writer's landing", round))
		// Alone: nothing else rewrites the documents after it.
		last := listed(ctx, t, w, p, versions)["1.1.0 darwin_arm64"]
		if removal, err := w.(backends.Remover).Remove(ctx, p, []backends.Archive{last}); err != nil || len(removal.Removed) != 1 {
			t.Fatalf("round %d: removing %s alone: %+v, %v", round, last.Package, removal, err)
		}
		if got := keys(listed(ctx, t, open(t), p, versions)); strings.Join(got, ", ") != strings.Join(want[1:], ", ") {
			t.Fatalf("round %d: after removing %s alone the place lists %s", round, last.Package, strings.Join(got, ", "))
		}
		documentsAgree(ctx, t, open(t), p, fmt.Sprintf("round %d, after removing %s alone", round, last.Package))
	}
}

// provenanceWriter: provenance written for a version once its archives
// have landed reads back byte for byte from another instance; written
// again (a new signature) it replaces what was kept; a version without
// any is ErrNotFound.
func provenanceWriter(t *testing.T, pl Place) {
	ctx := context.Background()
	seeds := Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64"})
	byVersion := Versions(seeds)
	p, v := seeds[0].Package.Provider, seeds[0].Package.Version
	open := pl.Empty(t)
	w := open(t).(backends.ProvenanceWriter)
	land(t, w, seeds)
	write := func(t *testing.T, pr *provenance.Provenance) {
		t.Helper()
		if err := w.WriteProvenance(ctx, p, v, pr); err != nil {
			t.Fatal(err)
		}
		got, err := open(t).(backends.ProvenanceReader).Provenance(ctx, p, v)
		if err != nil {
			t.Fatalf("Provenance: %v", err)
		}
		if !reflect.DeepEqual(got, pr) {
			t.Fatalf("provenance read back differs from what was written:\n got %+v\nwant %+v", got, pr)
		}
	}
	pr := NewSigner(t, "first").Provenance(t, byVersion[0])
	write(t, pr)
	write(t, pr) // the same again: nothing changes
	t.Run("Replaces", func(t *testing.T) {
		if why := pl.Gaps["ProvenanceWriter/Replaces"]; why != "" {
			t.Skipf("known gap of this place: %s", why)
		}
		write(t, NewSigner(t, "second").Provenance(t, byVersion[0]))
	})
	v2 := byVersion[1][0].Package.Version
	if _, err := open(t).(backends.ProvenanceReader).Provenance(ctx, p, v2); !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("Provenance of a version none was written for: err = %v, want ErrNotFound", err)
	}
}

// provenanceLister: ProvenanceVersions lists exactly the versions
// provenance was written for, as each is written.
func provenanceLister(t *testing.T, pl Place) {
	ctx := context.Background()
	if pl.Empty == nil {
		t.Fatal("backendtest: the ProvenanceLister case writes provenance: the place needs Empty")
	}
	seeds := Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0", "2.0.0"}, []string{"linux_amd64"})
	p := seeds[0].Package.Provider
	open := pl.Empty(t)
	w, ok := open(t).(backends.ProvenanceWriter)
	if !ok {
		t.Fatal("backendtest: the ProvenanceLister case writes provenance: the place is no ProvenanceWriter")
	}
	land(t, w, seeds)
	signer := NewSigner(t, "lister")
	var want []string
	for _, sv := range Versions(seeds)[:2] {
		v := sv[0].Package.Version
		if err := w.WriteProvenance(ctx, p, v, signer.Provenance(t, sv)); err != nil {
			t.Fatal(err)
		}
		want = append(want, v.String())
		got, err := open(t).(backends.ProvenanceLister).ProvenanceVersions(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for v, ok := range got {
			if ok {
				kept = append(kept, v)
			}
		}
		slices.Sort(kept)
		if g := strings.Join(kept, ", "); g != strings.Join(want, ", ") {
			t.Fatalf("ProvenanceVersions = %s, want %s", g, strings.Join(want, ", "))
		}
	}
}

// noteKeeper: a note that is not there reads as nil; two writers of one
// place (two instances) each add lines to one note at once, and it ends
// holding every line either added (neither update lost); an update that
// fails leaves the note as it was.
func noteKeeper(t *testing.T, pl Place) {
	ctx := context.Background()
	open := pl.Empty(t)
	const name, each = "conformance/example.com/acme/alpha/first-seen", 5
	writers := [2]backends.NoteKeeper{open(t).(backends.NoteKeeper), open(t).(backends.NoteKeeper)}
	var wg gosync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range each {
				err := writers[i].UpdateNote(ctx, name, func(old []byte) ([]byte, error) {
					return append(slices.Clone(old), fmt.Sprintf("writer %d line %d\n", i, n)...), nil
				})
				if err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var got []byte
	read := func() []byte {
		t.Helper()
		got = nil
		err := open(t).(backends.NoteKeeper).UpdateNote(ctx, name, func(old []byte) ([]byte, error) {
			got = slices.Clone(old)
			return old, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	lines := strings.Split(strings.TrimSuffix(string(read()), "\n"), "\n")
	slices.Sort(lines)
	var want []string
	for i := range 2 {
		for n := range each {
			want = append(want, fmt.Sprintf("writer %d line %d", i, n))
		}
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("after two writers added %d lines each, the note holds\n  %s\nwant\n  %s", each, strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
	before := read()
	refused := errors.New("refused")
	if err := writers[0].UpdateNote(ctx, name, func(old []byte) ([]byte, error) { return []byte("lost"), refused }); !errors.Is(err, refused) {
		t.Fatalf("an update that fails: err = %v, want its error", err)
	}
	if after := read(); !bytes.Equal(after, before) {
		t.Fatalf("an update that failed changed the note to %q", after)
	}
	none := []byte("unset")
	if err := writers[1].UpdateNote(ctx, "conformance/example.com/acme/alpha/none", func(old []byte) ([]byte, error) { none = old; return nil, refused }); !errors.Is(err, refused) || none != nil {
		t.Fatalf("a note that is not there reads as %q (%v), want nil", none, err)
	}
}
