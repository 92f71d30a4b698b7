package oci_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// While another push rewrites a blob's link, distribution 2.8 answers a
// manifest that names the blob with MANIFEST_BLOB_UNKNOWN. The push is
// tried again, and succeeds once the registry finds the blob.
func TestPushRetriesAConcurrentPushsAnswer(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	var refused atomic.Int32
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/sha256:") && refused.Add(1) <= 2 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match uploaded content"},{"code":"MANIFEST_BLOB_UNKNOWN","message":"blob unknown to registry"}]}`)
			return true
		}
		return false
	})
	m := openTest(t, reg, testTemplate)
	mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	if n := refused.Load(); n != 3 {
		t.Errorf("the manifest was pushed %d times, want 3 (two refused)", n)
	}
	as, err := m.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives: %v %v", as, err)
	}
}

// pushForeign pushes one platform of a provider version the way other
// tools (oras push, OpenTofu's own fixtures) lay it out: no tfmirror
// annotation on the index.
func pushForeign(t *testing.T, reg *ocitest.Registry, repo, tag string, pkg backends.Package, zip []byte) {
	t.Helper()
	ctx := testCtx(t)
	r, err := remote.NewRepository(reg.Host() + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	r.Client = &http.Client{Transport: &http.Transport{TLSClientConfig: reg.TLSConfig()}}
	push := func(desc ocispec.Descriptor, b []byte) {
		if err := r.Push(ctx, desc, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	layer := content.NewDescriptorFromBytes(oci.MediaTypeZip, zip)
	push(layer, zip)
	push(ocispec.DescriptorEmptyJSON, ocispec.DescriptorEmptyJSON.Data)
	man, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: oci.ArtifactTypeTarget, Config: ocispec.DescriptorEmptyJSON, Layers: []ocispec.Descriptor{layer}})
	mdesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man)
	push(mdesc, man)
	mdesc.ArtifactType = oci.ArtifactTypeTarget
	mdesc.Platform = &ocispec.Platform{OS: pkg.Platform.OS, Architecture: pkg.Platform.Arch}
	idx, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: oci.ArtifactTypeProvider, Manifests: []ocispec.Descriptor{mdesc}})
	idesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, idx)
	if err := r.PushReference(ctx, idesc, bytes.NewReader(idx), tag); err != nil {
		t.Fatal(err)
	}
}

// Two providers that one template maps to one repository (each write
// alone narrows the selection to one provider, so the template rule holds):
// the second refuses to add its platforms to the first's index, which
// tfmirror's annotation names, and does not list the first's version as
// its own.
func TestRefusesAnotherProvidersIndex(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	alpha := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	beta := mustPkg(t, "example.com/acme/beta", "1.0.0", "darwin_arm64")
	first := openTest(t, reg, "/shared")
	mustPut(ctx, t, first, alpha, providerZip(t, alpha, ""))
	if err := first.Flush(ctx, alpha.Provider); err != nil {
		t.Fatal(err)
	}

	second := openTest(t, reg, "/shared")
	as, err := second.Archives(ctx, beta.Provider, beta.Version)
	if err != nil || len(as) != 0 {
		t.Fatalf("beta's archives at 1.0.0: %v %v; want none: the tag holds alpha's index", as, err)
	}
	if ws := strings.Join(second.Warnings(), "\n"); !strings.Contains(ws, "the index of example.com/acme/alpha") {
		t.Errorf("warnings %q do not say whose the index is", ws)
	}
	_, err = put(ctx, t, second, beta, providerZip(t, beta, ""), true)
	if !errors.Is(err, oci.ErrOtherProvider) {
		t.Fatalf("beta into alpha's index: %v, want ErrOtherProvider (even with force)", err)
	}
	for _, w := range []string{`tag "1.0.0"`, "the index of example.com/acme/alpha", oci.AnnotationProvider, "example.com/acme/beta"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}
	got, err := first.Archives(ctx, alpha.Provider, alpha.Version)
	if err != nil || len(got) != 1 || got[0].Platform != alpha.Platform {
		t.Fatalf("alpha's index changed: %v %v", got, err)
	}
}

// An index another tool wrote has no annotation: whose it is, is read from
// the executable in its zip. Another type's index is refused; one of the
// same type is merged into, and gets the annotation.
func TestForeignIndexJudgedByItsExecutable(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	beta := mustPkg(t, "example.com/acme/beta", "1.0.0", "linux_amd64")
	pushForeign(t, reg, "foreign/one", "1.0.0", beta, providerZip(t, beta, ""))

	alpha := mustPkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	m := openTest(t, reg, "/foreign/one")
	_, err := put(ctx, t, m, alpha, providerZip(t, alpha, ""), false)
	if !errors.Is(err, oci.ErrOtherProvider) {
		t.Fatalf("alpha into a foreign index of beta: %v, want ErrOtherProvider", err)
	}
	for _, w := range []string{`provider type "beta"`, "terraform-provider-beta_v1.0.0", "linux_amd64"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}

	betaDarwin := mustPkg(t, "example.com/acme/beta", "1.0.0", "darwin_arm64")
	m = openTest(t, reg, "/foreign/one")
	mustPut(ctx, t, m, betaDarwin, providerZip(t, betaDarwin, ""))
	if err := m.Flush(ctx, beta.Provider); err != nil {
		t.Fatal(err)
	}
	as, err := openTest(t, reg, "/foreign/one").Archives(ctx, beta.Provider, beta.Version)
	if err != nil || len(as) != 2 {
		t.Fatalf("beta 1.0.0 after the merge: %v %v, want both platforms", as, err)
	}
	// Now annotated: alpha is refused by the annotation.
	_, err = put(ctx, t, openTest(t, reg, "/foreign/one"), alpha, providerZip(t, alpha, ""), false)
	if !errors.Is(err, oci.ErrOtherProvider) || !strings.Contains(err.Error(), "the index of example.com/acme/beta") {
		t.Fatalf("alpha into beta's annotated index: %v", err)
	}
}
