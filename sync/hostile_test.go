package sync_test

// Hostile input: provider names, versions and platforms that try path
// traversal, from every kind of source. Each is rejected or skipped with a
// message naming it, and nothing is ever written outside the destination.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	tffs "github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// traversals are names that try to leave a directory.
var traversals = []string{"..", "../../x", "../../../../../../tmp/evil", "a/../../b", `..\..\x`, "/abs/path", "1.0.0/../../x"}

// hostileDest is a destination deep inside a temp root, so a path that
// climbs out of it still lands somewhere the test can see.
type hostileDest struct {
	root, dir string
	m         *tffs.Mirror
}

func newHostileDest(t *testing.T) *hostileDest {
	t.Helper()
	d := &hostileDest{root: t.TempDir()}
	d.dir = filepath.Join(d.root, "a", "b", "c", "dst")
	var err error
	if d.m, err = tffs.Open(d.dir, d.dir, tffs.Options{Create: true}); err != nil {
		t.Fatal(err)
	}
	return d
}

// contained fails the test for any file or directory under the root that
// is not the destination or inside it, and for any file in it that wants
// lands, which must be exactly there.
func (d *hostileDest) contained(t *testing.T, wants ...backends.Package) {
	t.Helper()
	var files []string
	filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == d.root || strings.HasPrefix(d.dir, p+string(filepath.Separator)) {
			return nil // the destination's parents
		}
		if p != d.dir && !strings.HasPrefix(p, d.dir+string(filepath.Separator)) {
			t.Errorf("written outside the destination: %s", p)
			return nil
		}
		if !e.IsDir() {
			rel, _ := filepath.Rel(d.dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	t.Logf("files in the destination: %v", files)
	for _, f := range files {
		if strings.Contains(filepath.Base(f), ".tfmirror-tmp-") {
			t.Errorf("temp file left: %s", f)
		}
	}
	for _, want := range wants {
		rel := filepath.ToSlash(filepath.Join(want.Provider.HostnameForDisplay(), want.Provider.Namespace, want.Provider.Type, want.Filename()))
		found := false
		for _, f := range files {
			found = found || f == rel
		}
		if !found {
			t.Errorf("%s did not land at %s; files: %v", want, rel, files)
		}
	}
}

// syncHostile plans and runs a sync of sel from src into d.
func syncHostile(t *testing.T, src backends.Reader, d *hostileDest, sel sync.Selection) syncResult {
	t.Helper()
	return syncUnder(t, 30*time.Second, src, d.m, sel, engine.Options{Attempts: 1})
}

func warningsOf(r backends.Reader) string {
	if w, ok := r.(backends.Warner); ok {
		return strings.Join(w.Warnings(), "\n")
	}
	return ""
}

func mustContainAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lack %q:\n%s", what, w, text)
		}
	}
}

// A network mirror whose index and version documents name versions and
// platforms that climb out of directories, and archive URLs that climb out
// of the server's root.
func TestHostileNetworkMirror(t *testing.T) {
	t.Parallel()
	good := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := backendtest.ProviderZip(t, good, "")
	h1 := sumsOfZip(t, z).H1
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/example.com/acme/alpha/index.json":
			versions := map[string]any{"1.0.0": map[string]any{}}
			for _, tr := range traversals {
				versions[tr] = map[string]any{}
			}
			writeJSONDoc(w, map[string]any{"versions": versions})
		case r.URL.Path == "/example.com/acme/alpha/1.0.0.json":
			archives := map[string]any{
				// The URL climbs out of the server's root: it only decides
				// what is requested, never where anything is written.
				"linux_amd64": map[string]any{"url": "../../../../../x/terraform-provider-alpha_1.0.0_linux_amd64.zip", "hashes": []string{string(h1)}},
			}
			for _, tr := range traversals {
				archives[tr+"_amd64"] = map[string]any{"url": "a.zip"}
				archives["linux_"+tr] = map[string]any{"url": "a.zip"}
			}
			writeJSONDoc(w, map[string]any{"archives": archives})
		case strings.HasSuffix(r.URL.Path, ".zip"):
			w.Header().Set("Content-Type", "application/zip")
			w.Write(z)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	src, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	d := newHostileDest(t)
	res := syncHostile(t, src, d, mustSelection(t, []string{"example.com/acme/alpha"}, ""))
	if msg := res.failure(); msg != "" || res.tr.Counts()[engine.Done] != 1 {
		t.Fatalf("sync: %v %s", res.tr.Counts(), msg)
	}
	d.contained(t, good)
	w := warningsOf(src)
	for _, tr := range traversals {
		mustContainAll(t, "warnings", w, fmt.Sprintf("%q", tr))
	}
	mustContainAll(t, "warnings", w, "skipped", `platform "../../x_amd64"`, `platform "linux_../../x"`)
	t.Logf("warnings:\n%s", w)
}

func writeJSONDoc(w http.ResponseWriter, v any) {
	b, _ := jsonMarshal(v)
	w.Write(b)
}

// An origin registry that lists hostile versions, platforms, file names:
// one bad version makes the list unusable (as for the clients), hostile
// platforms are skipped, a hostile file name or a download document for a
// hostile platform is refused.
func TestHostileRegistry(t *testing.T) {
	t.Parallel()
	h, reg, open, seeds := registryUnderFaults(t, 5*time.Second)
	isVersions := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/versions") }
	addToVersions := func(edit func(vs []any) []any) fault {
		return only(isVersions, rewriteJSON(func(doc map[string]any) {
			doc["versions"] = edit(doc["versions"].([]any))
		}))
	}
	cases := []struct {
		name  string
		fault fault
		want  []string // nil: the honest packages land
		warn  []string
	}{
		{name: "hostile versions", fault: addToVersions(func(vs []any) []any {
			for _, tr := range traversals {
				vs = append(vs, map[string]any{"version": tr, "protocols": []string{"5.0"}, "platforms": []any{}})
			}
			return vs
		}), want: []string{"invalid version in the list", `version ".."`}},
		{name: "hostile platforms", fault: addToVersions(func(vs []any) []any {
			v := vs[0].(map[string]any)
			plats := v["platforms"].([]any)
			for _, tr := range traversals {
				plats = append(plats, map[string]any{"os": tr, "arch": "amd64"}, map[string]any{"os": "linux", "arch": tr})
			}
			v["platforms"] = plats
			return vs
		}), warn: []string{"platform skipped", `platform "../../x_amd64"`, `platform "linux_../../x"`}},
		{name: "hostile file name", fault: only(isDownloadMeta, rewriteJSON(func(doc map[string]any) {
			doc["filename"] = "../../../../evil.zip"
		})), want: []string{`filename "../../../../evil.zip" is not a file name`}},
		{name: "another release's signed zip", fault: only(func(r *http.Request) bool {
			return isDownloadMeta(r) && strings.HasSuffix(r.URL.Path, "/linux/amd64")
		}, rewriteJSON(func(doc map[string]any) {
			// darwin_arm64's zip, consistently: its signed SHA256SUMS line,
			// its URL; every hash checks, only the name says what it is.
			doc["filename"] = strings.ReplaceAll(doc["filename"].(string), "linux_amd64", "darwin_arm64")
			doc["download_url"] = strings.ReplaceAll(doc["download_url"].(string), "linux_amd64", "darwin_arm64")
			doc["shasum"] = reg.SHA256("acme", "alpha", "1.0.0", "darwin_arm64")
			delete(doc, "packages")
		})), want: []string{`filename "terraform-provider-alpha_1.0.0_darwin_arm64.zip" is the release zip of alpha 1.0.0 darwin_arm64`}},
		{name: "download document for another platform", fault: only(isDownloadMeta, rewriteJSON(func(doc map[string]any) {
			doc["os"] = "../../x"
		})), want: []string{"it describes ../../x_", "not the platform asked for"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.set(tc.fault)
			defer h.set(nil)
			src := open()
			d := newHostileDest(t)
			res := syncHostile(t, src, d, mustSelection(t, []string{reg.Address("acme", "alpha")}, ""))
			msg := res.failure()
			t.Logf("failure %q\nwarnings %s", msg, warningsOf(src))
			if tc.want == nil {
				if msg != "" || res.tr.Counts()[engine.Done] != len(seeds) {
					t.Fatalf("sync: %v %s", res.tr.Counts(), msg)
				}
				d.contained(t, seedPackages(seeds)...)
			} else {
				mustContainAll(t, "the failure", msg, tc.want...)
				d.contained(t)
			}
			mustContainAll(t, "warnings", warningsOf(src), tc.warn...)
		})
	}
}

// An OCI registry whose tag list names hostile tags and whose index lists
// hostile platforms: the tags are not versions and are ignored (as OpenTofu
// ignores them), the platforms are skipped with a warning.
func TestHostileOCIRegistry(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	raw := newRawOCI(t, reg, "providers/example.com/acme/alpha")
	good := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := backendtest.ProviderZip(t, good, "")
	cfg := raw.blob(ocispec.MediaTypeEmptyJSON, []byte("{}"))
	layer := raw.blob(oci.MediaTypeZip, z)
	m := raw.manifest(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: oci.ArtifactTypeTarget, Config: cfg, Layers: []ocispec.Descriptor{layer}}, "")
	m.ArtifactType = oci.ArtifactTypeTarget
	entries := []ocispec.Descriptor{withPlatform(m, "linux", "amd64")}
	for _, tr := range traversals {
		entries = append(entries, withPlatform(m, tr, "amd64"), withPlatform(m, "linux", tr))
	}
	raw.manifest(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: oci.ArtifactTypeProvider, Manifests: entries}, "1.0.0")
	// The registry itself refuses such tags; a hostile one would list them.
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !isTagList(r) {
			return false
		}
		tags := append([]string{"1.0.0", "1.0.0_../../x", "1.0.0+../../x"}, traversals...)
		w.Header().Set("Content-Type", "application/json")
		writeJSONDoc(w, map[string]any{"name": "providers/example.com/acme/alpha", "tags": tags})
		return true
	})
	src := openOCI(t, reg, oci.Options{})
	d := newHostileDest(t)
	res := syncHostile(t, src, d, mustSelection(t, []string{"example.com/acme/alpha"}, ""))
	if msg := res.failure(); msg != "" || res.tr.Counts()[engine.Done] != 1 {
		t.Fatalf("sync: %v %s", res.tr.Counts(), msg)
	}
	d.contained(t, good)
	if n := reg.Count(http.MethodHead, "/manifests/") + reg.Count(http.MethodGet, "/manifests/1.0.0"); n == 0 {
		t.Error("the good tag was not resolved")
	}
	for _, q := range reg.Requests() {
		if strings.Contains(q.Path, "..") || strings.Contains(q.Path, "x/manifests") {
			t.Errorf("a hostile tag was requested: %s", q)
		}
	}
	w := warningsOf(src)
	mustContainAll(t, "warnings", w, "index entry", `platform "../../x_amd64"`, `platform "linux_../../x"`, "is ignored")
	t.Logf("warnings:\n%s", w)
}

func withPlatform(d ocispec.Descriptor, os, arch string) ocispec.Descriptor {
	d.Platform = &ocispec.Platform{OS: os, Architecture: arch}
	return d
}

// A filesystem mirror whose directory and file names are not what they
// should be: each is ignored with a warning, the honest package is copied,
// nothing leaves the destination.
func TestHostileFilesystemMirror(t *testing.T) {
	t.Parallel()
	srcDir := t.TempDir()
	good := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := backendtest.ProviderZip(t, good, "")
	backendtest.WritePacked(t, srcDir, []backendtest.Seed{{Package: good, Zip: z}})
	prov := filepath.Join(srcDir, "example.com", "acme", "alpha")
	for _, name := range []string{
		"terraform-provider-alpha_1.0.0_..._amd64.zip",
		"terraform-provider-alpha_1.0.0_linux_..%2f..%2fx.zip",
		"terraform-provider-alpha_..%2f..%2f1.0.0_linux_amd64.zip",
		"terraform-provider-alpha_1.0.0_linux_amd64 .zip",
	} {
		writeFile(t, filepath.Join(prov, name), z)
	}
	for _, dir := range []string{
		filepath.Join(prov, "...", "linux_amd64"),
		filepath.Join(prov, "1.0.0", "..._amd64"),
		filepath.Join(srcDir, "...", "acme", "alpha", "1.0.0", "linux_amd64"),
		filepath.Join(srcDir, "example.com", "a..b", "alpha", "1.0.0", "linux_amd64"),
		filepath.Join(srcDir, "example.com", "acme", "...", "1.0.0", "linux_amd64"),
	} {
		writeFile(t, filepath.Join(dir, "terraform-provider-alpha"), []byte("#!/bin/sh\n"))
	}
	// A symlinked platform directory pointing out of the mirror: read (it
	// is the user's own mirror), but nothing is written through it.
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "terraform-provider-alpha"), []byte("#!/bin/sh\n"))
	if err := os.Symlink(outside, filepath.Join(prov, "1.0.0", "darwin_arm64")); err != nil {
		t.Fatal(err)
	}
	src, err := tffs.Open(srcDir, srcDir, tffs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := newHostileDest(t)
	res := syncHostile(t, src, d, sync.Selection{})
	msg := res.failure()
	t.Logf("failure %q, done %v\nwarnings:\n%s", msg, res.tr.Counts(), warningsOf(src))
	d.contained(t, good)
	w := warningsOf(src)
	mustContainAll(t, "warnings", w, "..._amd64", "..%2f..%2f1.0.0", "ignored")
	before, _ := os.ReadDir(outside)
	if len(before) != 1 {
		t.Errorf("the directory outside the mirror changed: %v", before)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sumsOfZip(t *testing.T, z []byte) hashing.Sums {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	writeFile(t, p, z)
	s, err := hashing.HashPath(p, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
