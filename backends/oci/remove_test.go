package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

const removeRepo = "providers/registry.opentofu.org/acme/alpha"

// seedVersions pushes acme/alpha at the versions for the platforms, and
// returns the mirror and every archive it lists.
func seedVersions(t *testing.T, reg *ocitest.Registry, versions, platforms []string) (*oci.Mirror, []backends.Archive) {
	t.Helper()
	ctx := testCtx(t)
	w := openTest(t, reg, testTemplate)
	p := mustProvider(t, "registry.opentofu.org/acme/alpha")
	for _, v := range versions {
		for _, plat := range platforms {
			pkg := mustPkg(t, p.String(), v, plat)
			mustPut(ctx, t, w, pkg, providerZip(t, pkg, ""))
		}
	}
	if err := w.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	m := openTest(t, reg, testTemplate)
	return m, listAll(t, m, p)
}

func listAll(t *testing.T, m *oci.Mirror, p backends.Provider) []backends.Archive {
	t.Helper()
	ctx := testCtx(t)
	vs, err := m.Versions(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	as, err := backends.ListArchives(ctx, m, p, vs)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func names(as []backends.Archive) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Version.String()+" "+a.Platform.String())
	}
	return strings.Join(out, ", ")
}

func pickArchives(as []backends.Archive, keep func(backends.Archive) bool) []backends.Archive {
	var out []backends.Archive
	for _, a := range as {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// indexDigests returns the manifests each platform's entry of a version's
// index names.
func indexDigests(t *testing.T, reg *ocitest.Registry, tag string) map[string]string {
	t.Helper()
	doc := fetchRaw(t, reg, removeRepo, tag, indexAccept)
	out := map[string]string{}
	if doc.status == http.StatusNotFound {
		return out
	}
	var idx ocispec.Index
	if err := json.Unmarshal(doc.body, &idx); err != nil {
		t.Fatalf("index %s: %v (%d)", tag, err, doc.status)
	}
	for _, d := range idx.Manifests {
		out[d.Platform.OS+"_"+d.Platform.Architecture] = d.Digest.String()
	}
	return out
}

// Remove takes a version with every platform out (its tag is gone) and a
// platform out of another version (its index no longer lists it), then
// deletes their manifests; what is left reads and opens as before.
func TestRemoveVersionsAndPlatforms(t *testing.T) {
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m, all := seedVersions(t, reg, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	p := all[0].Provider
	before := map[string]map[string]string{"1.0.0": indexDigests(t, reg, "1.0.0"), "2.0.0": indexDigests(t, reg, "2.0.0")}
	drop := pickArchives(all, func(a backends.Archive) bool {
		return a.Version.String() == "1.0.0" || a.Platform.String() == "darwin_arm64"
	})
	got, err := m.Remove(ctx, p, drop)
	if err != nil || len(got.Removed) != 3 || len(got.Left) != 0 || len(got.Notes) != 0 {
		t.Fatalf("Remove = %+v, %v", got, err)
	}
	left := listAll(t, openTest(t, reg, testTemplate), p)
	if names(left) != "2.0.0 linux_amd64" {
		t.Fatalf("left: %s", names(left))
	}
	if doc := fetchRaw(t, reg, removeRepo, "1.0.0", indexAccept); doc.status != http.StatusNotFound {
		t.Errorf("tag 1.0.0: HTTP %d, want 404", doc.status)
	}
	for _, d := range []string{before["1.0.0"]["linux_amd64"], before["1.0.0"]["darwin_arm64"], before["2.0.0"]["darwin_arm64"]} {
		if doc := fetchRaw(t, reg, removeRepo, d, ocispec.MediaTypeImageManifest); doc.status != http.StatusNotFound {
			t.Errorf("manifest %s of a removed platform: HTTP %d, want 404", d, doc.status)
		}
	}
	rc, err := m.Open(ctx, left[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, rc); err != nil {
		t.Fatalf("the kept zip: %v", err)
	}
}

// A registry that does not allow deletes: the platform taken out of an
// index is gone for clients and a note says its manifest stays; a version
// whose tag would have to be deleted stays whole, and says why.
func TestRemoveWhereDeletesAreRefused(t *testing.T) {
	ctx := testCtx(t)
	reg := ocitest.NewWithOptions(t, ocitest.Options{NoDelete: true})
	m, all := seedVersions(t, reg, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	drop := pickArchives(all, func(a backends.Archive) bool {
		return a.Version.String() == "1.0.0" || a.Platform.String() == "darwin_arm64"
	})
	got, err := m.Remove(ctx, all[0].Provider, drop)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Removed) != 1 || got.Removed[0].String() != "registry.opentofu.org/acme/alpha 2.0.0 darwin_arm64" || len(got.Left) != 2 {
		t.Fatalf("Remove = %+v", got)
	}
	for _, l := range got.Left {
		if !strings.Contains(l.Reason, "does not allow deletes") || !strings.Contains(l.Reason, "UNSUPPORTED") || !strings.Contains(l.Reason, `tag "1.0.0"`) {
			t.Errorf("left %s: %s", l.Package, l.Reason)
		}
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "does not allow deletes") || !strings.Contains(got.Notes[0], "HTTP 405") {
		t.Errorf("notes %q", got.Notes)
	}
	if left := listAll(t, openTest(t, reg, testTemplate), all[0].Provider); names(left) != "2.0.0 linux_amd64, 1.0.0 darwin_arm64, 1.0.0 linux_amd64" {
		t.Fatalf("left: %s", names(left))
	}
}

// Another writer that merged onto the index before the remover pushed
// pushes after it: the removed platform is listed again, with that
// writer's new one. The remover reads the tag back, takes its platform out
// again and keeps the other writer's; only then does it delete the
// removed platform's manifest, so no index names a deleted manifest.
func TestRemoveAgainAfterAStaleMerge(t *testing.T) {
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m, all := seedVersions(t, reg, []string{"2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	p := all[0].Provider
	repo, err := remote.NewRepository(reg.Host() + "/" + removeRepo)
	if err != nil {
		t.Fatal(err)
	}
	repo.Client = reg.Client()
	original, err := repo.Resolve(ctx, "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	// The other writer's index: both platforms and its own windows_amd64.
	win := mustPkg(t, p.String(), "2.0.0", "windows_amd64")
	other := openTest(t, reg, testTemplate)
	mustPut(ctx, t, other, win, providerZip(t, win, ""))
	if err := other.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	stale := fetchRaw(t, reg, removeRepo, "2.0.0", indexAccept)
	if err := repo.Tag(ctx, original, "2.0.0"); err != nil {
		t.Fatal(err)
	}
	darwin := indexDigests(t, reg, "2.0.0")["darwin_arm64"]

	// Its push lands just after the remover's, before the remover reads
	// the tag back.
	var pushed, injected atomic.Bool
	reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if !strings.HasSuffix(req.URL.Path, "/manifests/2.0.0") {
			return false
		}
		if req.Method == http.MethodPut {
			pushed.Store(true)
		} else if pushed.Load() && !injected.Swap(true) {
			desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, stale.body)
			if err := repo.PushReference(context.Background(), desc, bytes.NewReader(stale.body), "2.0.0"); err != nil {
				t.Errorf("the other writer's push: %v", err)
			}
		}
		return false
	})
	got, err := m.Remove(ctx, p, pickArchives(all, func(a backends.Archive) bool { return a.Platform.String() == "darwin_arm64" }))
	reg.Intercept(nil)
	if err != nil || len(got.Removed) != 1 || len(got.Left) != 0 {
		t.Fatalf("Remove = %+v, %v", got, err)
	}
	if !injected.Load() {
		t.Fatal("the other writer never pushed")
	}
	after := indexDigests(t, reg, "2.0.0")
	if _, ok := after["darwin_arm64"]; ok || after["windows_amd64"] == "" || after["linux_amd64"] == "" {
		t.Fatalf("the index lists %v; want linux_amd64 and the other writer's windows_amd64", after)
	}
	if doc := fetchRaw(t, reg, removeRepo, darwin, ocispec.MediaTypeImageManifest); doc.status != http.StatusNotFound {
		t.Errorf("the removed platform's manifest: HTTP %d, want 404", doc.status)
	}
	if left := listAll(t, openTest(t, reg, testTemplate), p); names(left) != "2.0.0 linux_amd64, 2.0.0 windows_amd64" {
		t.Fatalf("left: %s", names(left))
	}
}
