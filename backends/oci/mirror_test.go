package oci_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
	tfsync "github.com/tfmirror/tfmirror/sync"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	const prov = "registry.opentofu.org/acme/alpha"
	p := mustProvider(t, prov)

	zips := map[string][]byte{}
	sums := map[string]hashing.Sums{}
	for _, plat := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
		pkg := mustPkg(t, prov, "1.2.3", plat)
		zips[plat] = providerZip(t, pkg, "")
		sums[plat] = sumsOf(t, zips[plat])
		if o := mustPut(ctx, t, m, pkg, zips[plat]); o != oci.Uploaded {
			t.Errorf("%s: outcome %s, want uploaded", plat, o)
		}
	}
	// Nothing is visible before Flush: the version's tag is pushed there.
	if vs, err := m.Versions(ctx, p); err == nil && len(vs) > 0 {
		t.Fatalf("versions before Flush = %v, want none", vs)
	}
	if err := m.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}

	// Read back through a fresh Mirror: nothing cached.
	r := openTest(t, reg, testTemplate)
	vs, err := r.Versions(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].String() != "1.2.3" {
		t.Fatalf("versions = %v, want [1.2.3]", vs)
	}
	as, err := r.Archives(ctx, p, vs[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, a.Platform.String())
		plat := a.Platform.String()
		if a.Size != int64(len(zips[plat])) {
			t.Errorf("%s: size %d, want %d", plat, a.Size, len(zips[plat]))
		}
		hs := a.Hashes()
		if len(hs) != 1 || hs[0] != sums[plat].ZH {
			t.Errorf("%s: hashes %v, want [%s]", plat, hs, sums[plat].ZH)
		}
		if a.Evidence[0].Source.Kind != hashing.SourceOCIDigest || !strings.HasPrefix(a.Evidence[0].Source.Detail, reg.Host()+"/providers/registry.opentofu.org/acme/alpha@sha256:") {
			t.Errorf("%s: evidence source %v", plat, a.Evidence[0].Source)
		}
		// Fetch the blob and check it against both hashes, as verify does.
		computed, err := tfsync.HashArchive(ctx, r, a, hashing.Options{})
		if err != nil {
			t.Fatalf("%s: %v", plat, err)
		}
		if computed != sums[plat] {
			t.Errorf("%s: fetched blob hashes %v, want %v", plat, computed, sums[plat])
		}
		if res := hashing.Verify(computed, a.Evidence...); !res.Verified() {
			t.Errorf("%s: %v", plat, res.Err())
		}
	}
	if strings.Join(got, " ") != "darwin_arm64 linux_amd64 windows_amd64" {
		t.Fatalf("platforms = %v", got)
	}
	if ws := r.Warnings(); len(ws) > 0 {
		t.Errorf("warnings: %v", ws)
	}

	// A fourth platform, pushed later by another process: all four remain.
	later := openTest(t, reg, testTemplate)
	pkg4 := mustPkg(t, prov, "1.2.3", "linux_arm64")
	mustPut(ctx, t, later, pkg4, providerZip(t, pkg4, ""))
	if err := later.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	as, err = openTest(t, reg, testTemplate).Archives(ctx, p, vs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 4 {
		t.Fatalf("after adding linux_arm64: %d platforms, want 4: %v", len(as), as)
	}

	// The same archives again: nothing uploaded, no manifest or tag pushed.
	reg.ResetRequests()
	again := openTest(t, reg, testTemplate)
	for plat, z := range zips {
		pkg := mustPkg(t, prov, "1.2.3", plat)
		if o := mustPut(ctx, t, again, pkg, z); o != oci.Unchanged {
			t.Errorf("%s again: outcome %s, want unchanged", plat, o)
		}
	}
	if err := again.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	if n := reg.BlobUploads(); n != 0 {
		t.Errorf("identical re-push started %d blob uploads: %v", n, reg.Requests())
	}
	if n := reg.Count(http.MethodPut, "/"); n != 0 {
		t.Errorf("identical re-push made %d PUT requests: %v", n, reg.Requests())
	}

	// verify over the whole mirror, through the real selection code.
	findings, err := tfsync.VerifyPlace(ctx, openTest(t, reg, testTemplate), tfsync.Selection{}, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 4 {
		t.Fatalf("verify: %d findings, want 4: %v", len(findings), findings)
	}
	for _, f := range findings {
		if f.Status != tfsync.StatusOK || !f.Result.Verified() {
			t.Errorf("verify %s: %s %s", f.Package, f.Status, f.Detail)
		}
	}
}

func TestSameBlobInAnotherVersionIsNotUploadedAgain(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	a := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := mustPkg(t, "example.com/acme/alpha", "1.0.0+build.7", "linux_amd64")
	z := providerZip(t, a, "")
	mustPut(ctx, t, m, a, z)
	reg.ResetRequests()
	if o := mustPut(ctx, t, m, b, z); o != oci.BlobExisted {
		t.Errorf("outcome %s, want blob existed", o)
	}
	if n := reg.BlobUploads(); n != 0 {
		t.Errorf("%d blob uploads for a blob the registry had", n)
	}
	if err := m.Flush(ctx, a.Provider); err != nil {
		t.Fatal(err)
	}
	// Build metadata: "+" is written as "_" in the tag and read back.
	r := openTest(t, reg, testTemplate)
	vs, err := r.Versions(ctx, a.Provider)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	if strings.Join(got, " ") != "1.0.0+build.7 1.0.0" && strings.Join(got, " ") != "1.0.0 1.0.0+build.7" {
		t.Fatalf("versions = %v", got)
	}
	if reg.Count(http.MethodGet, "/tags/list") == 0 {
		t.Fatal("no tag listing seen")
	}
	raw := fetchRaw(t, reg, "providers/example.com/acme/alpha", "1.0.0_build.7", indexAccept)
	if !strings.Contains(string(raw.body), `"artifactType":"application/vnd.opentofu.provider"`) {
		t.Errorf("tag 1.0.0_build.7: %s", raw.body)
	}
}

func TestConflictAndForce(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	lin := mustPkg(t, "example.com/acme/alpha", "2.0.0", "linux_amd64")
	mac := mustPkg(t, "example.com/acme/alpha", "2.0.0", "darwin_amd64")
	mustPut(ctx, t, m, lin, providerZip(t, lin, ""))
	mustPut(ctx, t, m, mac, providerZip(t, mac, ""))
	if err := m.Flush(ctx, lin.Provider); err != nil {
		t.Fatal(err)
	}

	other := providerZip(t, lin, "rebuilt")
	w := openTest(t, reg, testTemplate)
	_, err := put(ctx, t, w, lin, other, false)
	if !errors.Is(err, backends.ErrConflict) {
		t.Fatalf("different zip without force: %v, want ErrConflict", err)
	}
	for _, want := range []string{"repository " + reg.Host() + "/providers/example.com/acme/alpha", "linux_amd64", "conflict", string(sumsOf(t, other).ZH)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("conflict message %q lacks %q", err, want)
		}
	}
	if o, err := put(ctx, t, w, lin, other, true); err != nil || o != oci.Uploaded {
		t.Fatalf("with force: %v %v", o, err)
	}
	if err := w.Flush(ctx, lin.Provider); err != nil {
		t.Fatal(err)
	}
	as, err := openTest(t, reg, testTemplate).Archives(ctx, lin.Provider, lin.Version)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 {
		t.Fatalf("%d platforms after force, want 2", len(as))
	}
	for _, a := range as {
		want := sumsOf(t, providerZip(t, a.Package, "")).ZH
		if a.Platform == lin.Platform {
			want = sumsOf(t, other).ZH
		}
		if a.Hashes()[0] != want {
			t.Errorf("%s: %s, want %s", a.Platform, a.Hashes()[0], want)
		}
	}
}

func TestConcurrentCommitsOneVersion(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	plats := []string{"linux_amd64", "linux_arm64", "linux_386", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_386", "freebsd_amd64"}
	var wg sync.WaitGroup
	errs := make(chan error, len(plats))
	for _, plat := range plats {
		pkg := mustPkg(t, "example.com/acme/alpha", "3.0.0", plat)
		z := providerZip(t, pkg, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := m.Stage(ctx, pkg)
			if err != nil {
				errs <- err
				return
			}
			st.Write(z)
			errs <- st.Commit(ctx, hashing.Sums{}, false)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	p := mustProvider(t, "example.com/acme/alpha")
	if err := m.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	if n := reg.Count(http.MethodPut, "/manifests/3.0.0"); n != 1 {
		t.Errorf("index pushed %d times, want once", n)
	}
	v, _ := backends.ParseVersion("3.0.0")
	as, err := openTest(t, reg, testTemplate).Archives(ctx, p, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != len(plats) {
		t.Fatalf("%d platforms, want %d", len(as), len(plats))
	}
}

func TestCatalogue(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	for _, prov := range []string{"example.com/acme/alpha", "registry.opentofu.org/hashicorp/null"} {
		pkg := mustPkg(t, prov, "1.0.0", "linux_amd64")
		mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
		if err := m.Flush(ctx, pkg.Provider); err != nil {
			t.Fatal(err)
		}
	}
	// A repository the template cannot have made is not a provider.
	pushRawBlob(ctx, t, reg, "unrelated/image", []byte("x"))

	ps, err := openTest(t, reg, testTemplate).Providers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ps) != "[example.com/acme/alpha registry.opentofu.org/hashicorp/null]" {
		t.Errorf("providers = %v", ps)
	}

	// Without ${hostname} the catalogue cannot be read back, nor the host
	// a NAMESPACE/TYPE means: the full address is needed (a usage error),
	// and given, it is found.
	short := openTest(t, reg, "/short/${namespace}/${type}")
	if _, err := short.Providers(ctx); !errors.Is(err, backends.ErrNoCatalogue) {
		t.Errorf("providers without ${hostname}: %v, want ErrNoCatalogue", err)
	}
	pkg := mustPkg(t, "registry.opentofu.org/acme/beta", "0.1.0", "linux_amd64")
	mustPut(ctx, t, short, pkg, providerZip(t, pkg, ""))
	if err := short.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	bare, _ := backends.ParseProviderFilter("acme/beta")
	if _, err := (tfsync.Selection{Providers: []backends.ProviderFilter{bare}}).Resolve(ctx, openTest(t, reg, "/short/${namespace}/${type}")); !errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), "HOSTNAME/acme/beta") {
		t.Errorf("resolve acme/beta without a host: %v, want a usage error asking for HOSTNAME/acme/beta", err)
	}
	full, _ := backends.ParseProviderFilter("registry.opentofu.org/acme/beta")
	as, err := tfsync.Selection{Providers: []backends.ProviderFilter{full}}.Resolve(ctx, openTest(t, reg, "/short/${namespace}/${type}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].Provider.String() != "registry.opentofu.org/acme/beta" {
		t.Errorf("resolve registry.opentofu.org/acme/beta: %v", as)
	}
}

func TestTwoProvidersOneRepositoryRefused(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, "/all/${namespace}")
	a := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	b := mustPkg(t, "example.com/acme/beta", "1.0.0", "linux_amd64")
	mustPut(ctx, t, m, a, providerZip(t, a, ""))
	_, err := m.Stage(ctx, b)
	if err == nil || !strings.Contains(err.Error(), "both map to repository") {
		t.Fatalf("second provider in one repository: %v", err)
	}
}

func TestMissingRepository(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	_, err := m.Versions(ctx, mustProvider(t, "example.com/acme/nothing"))
	if !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("missing repository: %v, want ErrNotFound", err)
	}
	for _, want := range []string{"NAME_UNKNOWN", "providers/example.com/acme/nothing", "does not exist"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestVerifyFindsCorruptBlob(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := providerZip(t, pkg, "")
	mustPut(ctx, t, m, pkg, z)
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	reg.CorruptBlob(t, "sha256:"+sumsOf(t, z).ZH.Value())

	r := openTest(t, reg, testTemplate)
	as, err := r.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives: %v %v", as, err)
	}
	rc, err := r.Open(ctx, as[0])
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, rc)
	if !errors.Is(err, oci.ErrDigestMismatch) {
		t.Fatalf("reading a corrupt blob: %v, want ErrDigestMismatch", err)
	}
	findings, err := tfsync.VerifyPlace(ctx, r, tfsync.Selection{}, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Status == tfsync.StatusOK {
		t.Fatalf("verify of a corrupt blob: %+v", findings)
	}
	if !strings.Contains(findings[0].Detail, "does not match its digest") {
		t.Errorf("detail %q", findings[0].Detail)
	}
}

// Two writers (say, CI jobs each pushing the platform they built) read the
// version's index before either pushes it: the second keeps the first's
// platform.
func TestParallelWritersKeepEachOthersPlatforms(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	seed := mustPkg(t, "example.com/acme/alpha", "5.0.0", "freebsd_amd64")
	w0 := openTest(t, reg, testTemplate)
	mustPut(ctx, t, w0, seed, providerZip(t, seed, ""))
	if err := w0.Flush(ctx, seed.Provider); err != nil {
		t.Fatal(err)
	}
	a, b, wb := firstOfTwoWriters(ctx, t, reg)
	if err := wb.Flush(ctx, b.Provider); err != nil {
		t.Fatal(err)
	}
	if got := listedPlatforms(ctx, t, reg, a); got != "darwin_arm64 freebsd_amd64 linux_amd64" {
		t.Fatalf("platforms after two writers: %s", got)
	}
}

// firstOfTwoWriters stages linux_amd64 (a) and darwin_arm64 (b) of alpha
// 5.0.0 in two mirrors, each reading the version's tag, and flushes a's:
// b's writer now holds a stale base.
func firstOfTwoWriters(ctx context.Context, t *testing.T, reg *ocitest.Registry) (a, b backends.Package, wb *oci.Mirror) {
	t.Helper()
	a = mustPkg(t, "example.com/acme/alpha", "5.0.0", "linux_amd64")
	b = mustPkg(t, "example.com/acme/alpha", "5.0.0", "darwin_arm64")
	wa := openTest(t, reg, testTemplate)
	wb = openTest(t, reg, testTemplate)
	mustPut(ctx, t, wa, a, providerZip(t, a, ""))
	mustPut(ctx, t, wb, b, providerZip(t, b, ""))
	if err := wa.Flush(ctx, a.Provider); err != nil {
		t.Fatal(err)
	}
	return a, b, wb
}

// listedPlatforms are the platforms pkg's version lists, read by a new
// mirror, space-separated.
func listedPlatforms(ctx context.Context, t *testing.T, reg *ocitest.Registry, pkg backends.Package) string {
	t.Helper()
	as, err := openTest(t, reg, testTemplate).Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range as {
		got = append(got, x.Platform.String())
	}
	return strings.Join(got, " ")
}

// The second writer finds the tag moved, but the registry does not serve
// the index it names at the first asking (distribution 2.8 rewrites a
// manifest's link in place while another push of it runs). The writer asks
// again rather than push its own platforms alone over the first's.
func TestWriterKeepsPlatformsOfAnIndexNotServedAtFirst(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	a, b, wb := firstOfTwoWriters(ctx, t, reg)
	var refused atomic.Int32
	reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/manifests/sha256:") && refused.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`)
			return true
		}
		return false
	})
	if err := wb.Flush(ctx, b.Provider); err != nil {
		t.Fatal(err)
	}
	reg.Intercept(nil)
	if refused.Load() == 0 {
		t.Fatal("the second writer never read the first's index")
	}
	if got := listedPlatforms(ctx, t, reg, a); got != "darwin_arm64 linux_amd64" {
		t.Fatalf("platforms after two writers: %s", got)
	}
}
