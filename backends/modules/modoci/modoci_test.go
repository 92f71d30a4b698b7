package modoci_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

var mod = modules.Module{Host: "registry.example.com", Namespace: "Acme", Name: "net_work", System: "aws"}

func open(t *testing.T, reg *ocitest.Registry, creds credentials.Store) *modoci.Store {
	t.Helper()
	if creds == nil {
		creds = credentials.NewMemoryStore()
	}
	s, err := modoci.Open("oci://"+reg.Host()+"/mods/${namespace}/${name}-${system}", reg.Host()+"/mods/${namespace}/${name}-${system}",
		modoci.Options{HTTP: reg.Client(), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// buildPkg packs files (name -> body) as the package of mod at ver.
func buildPkg(t *testing.T, ver string, files map[string]string, subdir string) *modules.Package {
	pkg := modulestest.Build(t, mod, ver, files, subdir)
	pkg.Source = "git::https://user:pw@example.com/acme/net.git?ref=v" + ver + "&token=secret"
	pkg.Revision = "0123456789abcdef0123456789abcdef01234567"
	return pkg
}

// tofuInstall fetches an oci:// module source the way OpenTofu's getter
// does (resolve, media type, manifest digest, artifactType, exactly one
// archive/zip layer, verified blob) and extracts it with go-getter's zip
// rules (no empty archive, no "..", modes from the headers). It returns
// the module directory's files.
func tofuInstall(t *testing.T, reg *ocitest.Registry, source string) map[string]string {
	t.Helper()
	pkgAddr, subdir := modules.SplitSubdir(source)
	u, err := url.Parse(pkgAddr)
	if err != nil || u.Scheme != "oci" {
		t.Fatalf("source %q: %v", source, err)
	}
	r, err := remote.NewRepository(u.Host + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	r.Client = &auth.Client{Client: reg.Client()}
	ref := "latest"
	q := u.Query()
	if d := q.Get("digest"); d != "" {
		ref = d
	} else if tg := q.Get("tag"); tg != "" {
		ref = tg
	}
	ctx := context.Background()
	desc, err := r.Resolve(ctx, ref)
	if err != nil {
		t.Fatalf("resolve %s: %v", ref, err)
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		t.Fatalf("selected object is not an OCI image manifest: %s", desc.MediaType)
	}
	rc, err := r.Fetch(ctx, desc)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := content.ReadAll(rc, desc)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.MediaType != desc.MediaType || m.ArtifactType != "application/vnd.opentofu.modulepkg" {
		t.Fatalf("manifest mediaType %q artifactType %q", m.MediaType, m.ArtifactType)
	}
	var layers []ocispec.Descriptor
	for _, l := range m.Layers {
		if l.MediaType == "archive/zip" {
			layers = append(layers, l)
		}
	}
	if len(layers) != 1 {
		t.Fatalf("%d archive/zip layers", len(layers))
	}
	rc, err = r.Fetch(ctx, layers[0])
	if err != nil {
		t.Fatal(err)
	}
	blob, err := content.ReadAll(rc, layers[0])
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("blob: %v", err)
	}
	zr, err := zip.NewReader(bytes.NewReader(blob), int64(len(blob)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) == 0 {
		t.Fatal("empty archive")
	}
	files := map[string]string{}
	for _, f := range zr.File {
		for _, part := range strings.FieldsFunc(f.Name, func(r rune) bool { return r == '/' || r == '\\' }) {
			if part == ".." {
				t.Fatalf("entry contains '..': %s", f.Name)
			}
		}
		if f.Mode()&0o777 == 0 || f.Mode()&0o400 == 0 {
			t.Fatalf("entry %s would extract unreadable (mode %v)", f.Name, f.Mode())
		}
		if !strings.HasPrefix(f.Name, subdir) {
			continue
		}
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(strings.TrimPrefix(f.Name, subdir), "/")] = string(b)
	}
	return files
}

func TestPutRoundTrip(t *testing.T) {
	reg := ocitest.New(t)
	s := open(t, reg, nil)
	ctx := context.Background()
	files := map[string]string{"main.tf": "root", "modules/vpc/main.tf": "vpc"}
	pkg := buildPkg(t, "1.0.0+build.1", files, "modules/vpc")

	st, err := s.Put(ctx, pkg, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	repo := reg.Host() + "/mods/acme/net_work-aws"
	if st.Present || st.Bytes != pkg.Size || !strings.HasPrefix(st.Address, "oci://"+repo+"//modules/vpc?digest=sha256:") ||
		st.TagAddress != "oci://"+repo+"//modules/vpc?tag=1.0.0_build.1" {
		t.Fatalf("stored %+v", st)
	}
	if len(st.Checks) != 1 || st.Checks[0].Status != hashing.Match {
		t.Errorf("checks %+v", st.Checks)
	}
	if n := reg.BlobUploads(); n != 2 {
		t.Errorf("%d blob uploads, want 2 (layer and empty config)", n)
	}
	// What OpenTofu would install, by digest and by tag.
	for _, addr := range []string{st.Address, st.TagAddress} {
		got := tofuInstall(t, reg, addr)
		if len(got) != 1 || got["main.tf"] != "vpc" {
			t.Errorf("%s installs %v", addr, got)
		}
	}
	// The manifest, byte for byte as OpenTofu reads it.
	r, _ := remote.NewRepository(repo)
	r.Client = &auth.Client{Client: reg.Client()}
	desc, rc, err := r.FetchReference(ctx, "1.0.0_build.1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(rc)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decoding raw: %v", err)
	}
	cfg := m["config"].(map[string]any)
	ann := m["annotations"].(map[string]any)
	if m["mediaType"] != ocispec.MediaTypeImageManifest || m["artifactType"] != modoci.ArtifactType ||
		cfg["mediaType"] != "application/vnd.oci.empty.v1+json" || len(m["layers"].([]any)) != 1 {
		t.Errorf("manifest %s", raw)
	}
	if ann[modules.AnnotationSource] != "git::https://example.com/acme/net.git?ref=v1.0.0+build.1" || ann[modules.AnnotationRevision] != pkg.Revision ||
		ann[modules.AnnotationSubdir] != "modules/vpc" || ann[modules.AnnotationH1] != string(pkg.Sums.H1) || ann[modules.AnnotationVersion] != "1.0.0+build.1" {
		t.Errorf("annotations %v", ann)
	}
	if strings.Contains(string(raw), "secret") || strings.Contains(string(raw), "pw@") {
		t.Errorf("the manifest publishes credentials: %s", raw)
	}
	if !strings.HasSuffix(st.Address, desc.Digest.String()) {
		t.Errorf("address %s does not pin manifest %s", st.Address, desc.Digest)
	}

	// Again: nothing is uploaded, the address is the same.
	reg.ResetRequests()
	again, err := s.Put(ctx, buildPkg(t, "1.0.0+build.1", files, "modules/vpc"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Present || again.Address != st.Address || again.Bytes != 0 {
		t.Errorf("second put %+v", again)
	}
	if n := reg.BlobUploads() + reg.Count(http.MethodPut, "/manifests/"); n != 0 {
		t.Errorf("second put sent %d uploads: %v", n, reg.Requests())
	}

	// The same files in a differently encoded zip are the same package.
	restored := storedZip(t, pkg)
	reg.ResetRequests()
	same, err := s.Put(ctx, restored, false, nil)
	if err != nil || !same.Present || same.Checks[0].Scheme != hashing.SchemeH1 {
		t.Errorf("re-encoded zip: %+v %v", same, err)
	}

	// Different files under the same version: a conflict, unless forced.
	other := buildPkg(t, "1.0.0+build.1", map[string]string{"main.tf": "changed", "modules/vpc/main.tf": "vpc"}, "modules/vpc")
	_, err = s.Put(ctx, other, false, nil)
	if !errors.Is(err, backends.ErrConflict) || !strings.Contains(err.Error(), "1.0.0+build.1") {
		t.Fatalf("conflict: %v", err)
	}
	forced, err := s.Put(ctx, other, true, nil)
	if err != nil || forced.Present || forced.Address == st.Address {
		t.Fatalf("forced: %+v %v", forced, err)
	}
	if got := tofuInstall(t, reg, strings.Replace(forced.TagAddress, "//modules/vpc", "", 1)); got["main.tf"] != "changed" {
		t.Errorf("after force the tag installs %v", got)
	}
	// The old digest still installs the old package.
	if got := tofuInstall(t, reg, st.Address); got["main.tf"] != "vpc" {
		t.Errorf("old digest: %v", got)
	}

	// Listing and resolving.
	if _, err := s.Put(ctx, buildPkg(t, "1.1.0", files, ""), false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, buildPkg(t, "2.0.0-rc1", files, ""), false, nil); err != nil {
		t.Fatal(err)
	}
	ls, err := s.ListModule(ctx, mod, backends.VersionConstraint{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, it := range ls.Items {
		if it.Err != nil {
			t.Fatal(it.Err)
		}
		listed = append(listed, it.Listed)
	}
	if strings.Join(listed, " ") != "2.0.0-rc1 1.1.0 1.0.0_build.1" {
		t.Errorf("listed %v", listed)
	}
	for _, c := range []struct{ constraint, want string }{
		{"", "1.1.0"},
		{"~> 1.0.0", "1.0.0+build.1"},
		{"= 2.0.0-rc1", "2.0.0-rc1"},
	} {
		vc, _ := backends.ParseVersionConstraint(c.constraint)
		res, err := s.Resolve(ctx, mod, vc)
		if err != nil || res.Version.String() != c.want {
			t.Errorf("resolve %q: %v %v", c.constraint, res.Version, err)
		}
	}
	vc, _ := backends.ParseVersionConstraint(">= 3")
	if _, err := s.Resolve(ctx, mod, vc); !errors.Is(err, backends.ErrNotFound) || !strings.Contains(err.Error(), ">= 3") {
		t.Errorf("resolve >= 3: %v", err)
	}
	if _, err := s.ListModule(ctx, modules.Module{Host: "h.com", Namespace: "no", Name: "such", System: "aws"}, backends.VersionConstraint{}); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("unknown repository: %v", err)
	}
}

// storedZip rewrites pkg's zip with entries stored, not deflated: the same
// files, other bytes.
func storedZip(t *testing.T, pkg *modules.Package) *modules.Package {
	t.Helper()
	zr, err := zip.OpenReader(pkg.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := filepath.Join(t.TempDir(), "stored.zip")
	f, _ := os.Create(out)
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		fh := e.FileHeader
		fh.Method = zip.Store
		w, _ := zw.CreateHeader(&fh)
		rc, _ := e.Open()
		if _, err := io.Copy(w, rc); err != nil {
			t.Fatal(err)
		}
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(out, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sums.H1 != pkg.Sums.H1 || sums.ZH == pkg.Sums.ZH {
		t.Fatalf("re-encoding: %v vs %v", sums, pkg.Sums)
	}
	fi, _ := os.Stat(out)
	cp := *pkg
	cp.Path, cp.Sums, cp.Size = out, sums, fi.Size()
	return &cp
}

func TestPutOverForeignTag(t *testing.T) {
	reg := ocitest.New(t)
	s := open(t, reg, nil)
	ctx := context.Background()
	pkg := buildPkg(t, "1.0.0", map[string]string{"main.tf": "x"}, "")
	// Something else already sits at the tag: an artifact of another type.
	r, _ := remote.NewRepository(reg.Host() + "/mods/acme/net_work-aws")
	r.Client = &auth.Client{Client: reg.Client()}
	blob := []byte("hello")
	bdesc := content.NewDescriptorFromBytes("text/plain", blob)
	if err := r.Push(ctx, bdesc, bytes.NewReader(blob)); err != nil {
		t.Fatal(err)
	}
	mdesc, err := oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, "application/vnd.example.other", oras.PackManifestOptions{Layers: []ocispec.Descriptor{bdesc}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Tag(ctx, mdesc, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Put(ctx, pkg, false, nil)
	if !errors.Is(err, backends.ErrConflict) || !errors.Is(err, modoci.ErrNotModule) || !strings.Contains(err.Error(), "application/vnd.example.other") {
		t.Fatalf("got %v", err)
	}
	if _, err := s.Put(ctx, pkg, true, nil); err != nil {
		t.Fatalf("forced: %v", err)
	}
}

func TestPutCredentials(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{Users: map[string]string{"alice": "pw"}})
	ctx := context.Background()
	pkg := buildPkg(t, "1.0.0", map[string]string{"main.tf": "x"}, "")
	_, err := open(t, reg, nil).Put(ctx, pkg, false, nil)
	if !errors.Is(err, backends.ErrUnauthorized) || !strings.Contains(err.Error(), "docker login "+reg.Host()) {
		t.Fatalf("anonymous: %v", err)
	}
	creds := credentials.NewMemoryStore()
	creds.Put(ctx, reg.Host(), auth.Credential{Username: "alice", Password: "pw"})
	if _, err := open(t, reg, creds).Put(ctx, pkg, false, nil); err != nil {
		t.Fatalf("with credentials: %v", err)
	}
}

func TestCorruptLayerIsNotPresent(t *testing.T) {
	reg := ocitest.New(t)
	s := open(t, reg, nil)
	ctx := context.Background()
	pkg := buildPkg(t, "1.0.0", map[string]string{"main.tf": "x"}, "")
	st, err := s.Put(ctx, pkg, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A damaged manifest (bytes that do not match its digest) is an error,
	// never "already present".
	q, _ := url.Parse(st.Address)
	d := digest.Digest(q.Query().Get("digest"))
	reg.CorruptBlob(t, d.String())
	if _, err := s.Put(ctx, pkg, false, nil); err == nil {
		t.Fatal("a corrupt manifest was taken for the package")
	}
}

func TestSafeSource(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"git::https://u:p@example.com/r.git?ref=v1&token=x", "git::https://example.com/r.git?ref=v1"},
		{"https://example.com/x.zip?X-Amz-Signature=abc", "https://example.com/x.zip"},
		{"https://example.com/x?archive=zip", "https://example.com/x?archive=zip"},
		{"git@github.com:o/r.git?ref=v1", "git@github.com:o/r.git?ref=v1"},
		{"file:///tmp/x", "file:///tmp/x"},
	} {
		if got := modoci.SafeSource(c.in); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}
