package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
)

// listed returns the archives of p at every version.
func listed(t *testing.T, m *fs.Mirror, p backends.Provider) []backends.Archive {
	t.Helper()
	as, err := m.AllArchives(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func pick(as []backends.Archive, keep func(backends.Archive) bool) []backends.Archive {
	var out []backends.Archive
	for _, a := range as {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// Remove unlists before it deletes: after every write it makes, no index
// document lists an archive that is gone (Audit finds nothing missing), and
// at the end the documents list exactly what is left.
func TestRemoveIndexConsistentAfterEveryStep(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := mustOpen(t, dir)
	for _, s := range backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"}) {
		put(t, m, s.Package, s.Zip)
	}
	p := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64").Provider
	drop := pick(listed(t, m, p), func(a backends.Archive) bool {
		return a.Version.String() == "1.0.0" || a.Version.String() == "1.1.0" && a.Platform.String() == "linux_amd64"
	})
	if len(drop) != 3 {
		t.Fatalf("drop %d archives, want 3", len(drop))
	}
	var steps []string
	fs.SetAfterStep(m, func(what string) {
		steps = append(steps, what)
		for _, pr := range mustOpen(t, dir).Audit(ctx, p) {
			if pr.Missing {
				t.Errorf("after %s: an index lists what is gone: %s", what, pr.Detail)
			}
		}
	})
	got, err := m.Remove(ctx, p, drop)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Removed) != 3 || len(got.Left) != 0 {
		t.Fatalf("Remove = %+v", got)
	}
	// index.json first, then the version documents, then the archives.
	if len(steps) != 6 || steps[0] != "index.json" || !strings.HasSuffix(steps[1], ".json") || !strings.HasSuffix(steps[2], ".json") ||
		!strings.HasSuffix(steps[3], ".zip") || !strings.HasSuffix(steps[4], ".zip") || !strings.HasSuffix(steps[5], ".zip") {
		t.Errorf("steps %v", steps)
	}
	if probs := mustOpen(t, dir).Audit(ctx, p); len(probs) != 0 {
		t.Fatalf("after Remove: %+v", probs)
	}
	pdir := filepath.Join(dir, "example.com/acme/alpha")
	idx, _ := os.ReadFile(filepath.Join(pdir, "index.json"))
	if string(idx) != "{\n  \"versions\": {\n    \"1.1.0\": {},\n    \"2.0.0\": {}\n  }\n}" {
		t.Errorf("index.json = %s", idx)
	}
	if _, err := os.Stat(filepath.Join(pdir, "1.0.0.json")); !os.IsNotExist(err) {
		t.Errorf("1.0.0.json left: %v", err)
	}
	left := listed(t, mustOpen(t, dir), p)
	var names []string
	for _, a := range left {
		names = append(names, a.Version.String()+" "+a.Platform.String())
		if len(a.Evidence) == 0 {
			t.Errorf("%s is no longer listed", a.Package)
		}
	}
	if strings.Join(names, ", ") != "2.0.0 darwin_arm64, 2.0.0 linux_amd64, 1.1.0 darwin_arm64" {
		t.Errorf("left %v", names)
	}
}

// An archive another writer replaced, or listed, after the plan read it is
// left; one it added is not touched.
func TestRemoveLeavesWhatAnotherWriterChanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := mustOpen(t, dir)
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	put(t, m, a, backendtest.ProviderZip(t, a, ""))
	put(t, m, b, backendtest.ProviderZip(t, b, ""))
	plan := listed(t, m, a.Provider)

	// Another writer replaces a (with --force) and adds a third platform.
	w := mustOpen(t, dir)
	st, _ := w.Stage(ctx, a)
	if _, err := st.Write(backendtest.ProviderZip(t, a, "replaced")); err != nil {
		t.Fatal(err)
	}
	sums, _ := hashing.HashPath(st.Path(), hashing.Options{})
	if err := st.Commit(ctx, sums, true); err != nil {
		t.Fatal(err)
	}
	c := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "windows_amd64")
	put(t, w, c, backendtest.ProviderZip(t, c, ""))

	got, err := m.Remove(ctx, a.Provider, plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Removed) != 1 || got.Removed[0].String() != b.String() || len(got.Left) != 1 || got.Left[0].Package.String() != a.String() ||
		!strings.Contains(got.Left[0].Reason, "another writer") {
		t.Fatalf("Remove = %+v", got)
	}
	left := listed(t, mustOpen(t, dir), a.Provider)
	if len(left) != 2 || left[0].Platform.String() != "linux_amd64" || left[1].Platform.String() != "windows_amd64" {
		t.Fatalf("left %+v", left)
	}
	if probs := mustOpen(t, dir).Audit(ctx, a.Provider); len(probs) != 0 {
		t.Fatalf("audit: %+v", probs)
	}
	// The replaced archive is the new one, as listed.
	now, _ := hashing.HashPath(filepath.Join(dir, "example.com/acme/alpha", a.Filename()), hashing.Options{})
	if now.ZH != sums.ZH {
		t.Fatalf("the replaced archive changed: %s, want %s", now.ZH, sums.ZH)
	}
}

// Unpacked packages go whole: no half-deleted directory is ever visible,
// and nothing hidden is left.
func TestRemoveUnpacked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, _ := fs.Open(dir, dir, fs.Options{Unpacked: true})
	a := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := backendtest.Pkg(t, "example.com/acme/alpha", "2.0.0", "linux_amd64")
	put(t, m, a, backendtest.ProviderZip(t, a, ""))
	put(t, m, b, backendtest.ProviderZip(t, b, ""))
	drop := pick(listed(t, m, a.Provider), func(x backends.Archive) bool { return x.Version.String() == "1.0.0" })
	got, err := m.Remove(ctx, a.Provider, drop)
	if err != nil || len(got.Removed) != 1 {
		t.Fatalf("Remove = %+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "example.com/acme/alpha/1.0.0")); !os.IsNotExist(err) {
		t.Fatalf("1.0.0/ left: %v", err)
	}
	hidden, _ := filepath.Glob(filepath.Join(dir, "example.com/acme/alpha/*/.*"))
	if len(hidden) != 0 {
		t.Fatalf("left behind: %v", hidden)
	}
	if left := listed(t, mustOpen(t, dir), a.Provider); len(left) != 1 || left[0].Version.String() != "2.0.0" {
		t.Fatalf("left %+v", left)
	}
}
