package lockcheck_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// statedRegistry serves example.com/acme/alpha at 1.0.0 and 1.2.0 for every
// chkPlatforms platform, and returns the independent sums of each zip by
// "version platform".
func statedRegistry(t *testing.T, opts registrytest.Options) (*registrytest.Server, map[string]hashing.Sums) {
	t.Helper()
	sums := map[string]hashing.Sums{}
	var versions []registrytest.Version
	for _, v := range []string{"1.0.0", "1.2.0"} {
		ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
		for _, plat := range chkPlatforms {
			zb := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, plat), "")
			ver.Archives[plat] = zb
			path := filepath.Join(t.TempDir(), "a.zip")
			if err := os.WriteFile(path, zb, 0o644); err != nil {
				t.Fatal(err)
			}
			sums[v+" "+plat] = independentSums(t, path)
		}
		versions = append(versions, ver)
	}
	return registrytest.NewWithOptions(t, opts, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: versions}), sums
}

// From an OpenTofu 1.12 registry, whose download metadata lists every
// platform's h1: and zh: (packages), a lock for every platform of two
// versions reads one download document per version and no archive, and
// records what a lock made from the archives records: each platform's h1:
// and every zh:.
func TestUpdateLockFromRegistryPackagesDownloadsNoArchive(t *testing.T) {
	ctx := chkCtx(t)
	reg, sums := statedRegistry(t, registrytest.Options{})
	r, err := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	addr := reg.Address("acme", "alpha")
	for _, v := range []string{"1.0.0", "1.2.0"} {
		f := lockfile.New(lockfile.HeaderOpenTofu)
		req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, addr), Versions: mustConstraint(t, "= "+v)}, Platforms: plats(t, chkPlatforms...)}
		reg.Reset()
		if _, problems, err := lockcheck.UpdateLock(ctx, r, f, req); err != nil || len(problems) != 0 {
			t.Fatalf("%s: %v %+v", v, err, problems)
		}
		if n := reg.Count(registrytest.KindArchive); n != 0 {
			t.Errorf("%s: %d archive downloads, want none", v, n)
		}
		if n := reg.Count(registrytest.KindDownload); n != 1 {
			t.Errorf("%s: %d download-metadata requests, want one for the version", v, n)
		}
		l := lockedOf(t, f, addr)
		var want []hashing.Hash
		for _, plat := range chkPlatforms {
			want = append(want, sums[v+" "+plat].H1, sums[v+" "+plat].ZH)
		}
		if got, want := l.Hashes, hashing.SortUnique(want); strings.Join(hashing.Strings(got), " ") != strings.Join(hashing.Strings(want), " ") {
			t.Errorf("%s: locked\n  %s\nwant\n  %s", v, strings.Join(hashing.Strings(got), "\n  "), strings.Join(hashing.Strings(want), "\n  "))
		}
	}

	// Without packages, the same lock downloads each archive and records
	// the same hashes.
	reg.SetFaults(registrytest.Faults{NoPackages: true})
	r, _ = place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	reg.Reset()
	f := lockfile.New(lockfile.HeaderOpenTofu)
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, addr), Versions: mustConstraint(t, "= 1.2.0")}, Platforms: plats(t, chkPlatforms...)}
	if _, problems, err := lockcheck.UpdateLock(ctx, r, f, req); err != nil || len(problems) != 0 {
		t.Fatalf("without packages: %v %+v", err, problems)
	}
	if n := reg.Count(registrytest.KindArchive); n != len(chkPlatforms) {
		t.Errorf("without packages: %d archive downloads, want %d", n, len(chkPlatforms))
	}
	if l := lockedOf(t, f, addr); len(l.Hashes) != 2*len(chkPlatforms) {
		t.Errorf("without packages: %v", l.Hashes)
	}
}

// A packages field whose zh: for another platform is not the zip the
// signed SHA256SUMS lists is refused: its h1: beside it cannot be trusted.
func TestUpdateLockRefusesUnsignedPackages(t *testing.T) {
	ctx := chkCtx(t)
	reg, _ := statedRegistry(t, registrytest.Options{Faults: registrytest.Faults{UnsignedPackages: true}})
	r, err := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	addr := reg.Address("acme", "alpha")
	f := lockfile.New(lockfile.HeaderOpenTofu)
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, addr), Versions: mustConstraint(t, "= 1.2.0")}, Platforms: plats(t, chkPlatforms...)}
	_, _, err = lockcheck.UpdateLock(ctx, r, f, req)
	if err == nil || !strings.Contains(err.Error(), "does not list for a") {
		t.Fatalf("err = %v, want the unsigned packages entry named", err)
	}
	if len(f.Providers()) != 0 {
		t.Errorf("locked anyway:\n%s", f.Bytes())
	}
}

// ociAlpha syncs acme/alpha 1.2.0 (on platforms, or on every platform)
// from src into an OCI mirror on a real registry of its own.
func ociAlpha(t *testing.T, ctx context.Context, src backends.Reader, platforms ...string) (*ocitest.Registry, *oci.Mirror) {
	t.Helper()
	reg := ocitest.New(t)
	tmpl := reg.Host() + "/providers/${hostname}/${namespace}/${type}"
	dst, err := oci.Open("oci://"+tmpl, tmpl, oci.Options{RootCAs: reg.RootCAs(), Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	sel := sync.Selection{Providers: filters(t, "acme/alpha"), Versions: mustConstraint(t, "= 1.2.0")}
	if len(platforms) > 0 {
		sel.Platforms = plats(t, platforms...)
	}
	plan, err := sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum := sync.Sync(ctx, engine.NewEngine(ctx, engine.Options{Jobs: 2}), dst, false, sync.Sinks{}, plan); !sum.OK() {
		t.Fatalf("sync: %+v", sum)
	}
	return reg, dst
}

// From an OCI mirror, a lock records each platform's layer digest as zh:
// (as OpenTofu's providers lock -oci-mirror does) without fetching a blob;
// --hashes all (Download) fetches and hashes them instead.
func TestUpdateLockFromOCIFetchesNoBlob(t *testing.T) {
	ctx := chkCtx(t)
	srcDir, src := chkMirror(t)
	reg, dst := ociAlpha(t, ctx, src)

	reg.ResetRequests()
	f := lockfile.New(lockfile.HeaderOpenTofu)
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "example.com/acme/alpha")}, Platforms: plats(t, chkPlatforms...)}
	ups, problems, err := lockcheck.UpdateLock(ctx, dst, f, req)
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v %+v", err, problems)
	}
	// The registry states only the layers' zh:: every platform is locked
	// without an h1:, and the update says so.
	if len(ups) != 1 || len(ups[0].NoH1) != len(chkPlatforms) || len(ups[0].Warnings("REG")) != 1 || !strings.Contains(ups[0].Warnings("REG")[0], "-lockfile=readonly") {
		t.Errorf("no h1: not reported: %+v", ups)
	}
	if n := reg.Count(http.MethodGet, "/blobs/"); n != 0 {
		t.Errorf("%d blob fetches, want none: %v", n, reg.Requests())
	}
	var want []hashing.Hash
	for _, plat := range chkPlatforms {
		want = append(want, independentSums(t, zipPath(srcDir, "example.com/acme/alpha", "1.2.0", plat)).ZH)
	}
	l := lockedOf(t, f, "example.com/acme/alpha")
	if got, want := hashing.Strings(l.Hashes), hashing.Strings(hashing.SortUnique(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("locked %v, want the layer digests %v", got, want)
	}

	reg.ResetRequests()
	all := lockfile.New(lockfile.HeaderOpenTofu)
	req.Download = true
	ups, problems, err = lockcheck.UpdateLock(ctx, dst, all, req)
	if err != nil || len(problems) != 0 {
		t.Fatalf("download: %v %+v", err, problems)
	}
	if len(ups) != 1 || len(ups[0].NoH1) != 0 {
		t.Errorf("with Download, every platform has its h1:: %+v", ups)
	}
	if n := reg.Count(http.MethodGet, "/blobs/"); n != len(chkPlatforms) {
		t.Errorf("with Download: %d blob fetches, want %d", n, len(chkPlatforms))
	}
	if l := lockedOf(t, all, "example.com/acme/alpha"); len(l.Hashes) != 2*len(chkPlatforms) {
		t.Errorf("with Download: %v, want every h1: and zh:", l.Hashes)
	}
}

// From a network mirror whose version documents list h1: and zh: (a
// directory tfmirror wrote with --hashes all, served), a lock downloads no
// archive and records both hashes of every platform.
func TestUpdateLockFromNetMirrorDownloadsNoArchive(t *testing.T) {
	ctx := chkCtx(t)
	srcDir, src := chkMirror(t)
	all, err := fs.Open(srcDir, srcDir, fs.Options{Hashing: hashing.Options{AllHashes: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range chkProviders {
		pr, _ := backends.ParseProvider(p)
		if err := all.Flush(ctx, pr); err != nil { // index documents with h1: and zh:
			t.Fatal(err)
		}
	}
	var zips atomic.Int32
	h := netmirror.NewHandler(src, log.New(io.Discard, "", 0), hashing.Options{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".zip") {
			zips.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	r, err := place.Open(ctx, srv.URL+"/", place.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	f := lockfile.New(lockfile.HeaderOpenTofu)
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, chkProviders...), Versions: mustConstraint(t, "= 1.2.0")}, Platforms: plats(t, chkPlatforms...)}
	if _, problems, err := lockcheck.UpdateLock(ctx, r, f, req); err != nil || len(problems) != 0 {
		t.Fatalf("%v %+v", err, problems)
	}
	if n := zips.Load(); n != 0 {
		t.Errorf("%d archive downloads, want none", n)
	}
	for _, p := range chkProviders {
		var want []hashing.Hash
		for _, plat := range chkPlatforms {
			s := independentSums(t, zipPath(srcDir, p, "1.2.0", plat))
			want = append(want, s.H1, s.ZH)
		}
		if got, want := hashing.Strings(lockedOf(t, f, p).Hashes), hashing.Strings(hashing.SortUnique(want)); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: locked %v, want %v", p, got, want)
		}
	}
}

// countingTransport counts the GETs of archives (keys ending in .zip).
type countingTransport struct {
	next http.RoundTripper
	zips atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".zip") {
		c.zips.Add(1)
	}
	return c.next.RoundTrip(r)
}

// From object storage holding the network-mirror layout, whose version
// documents list h1: and zh:, a lock gets no archive from the bucket.
func TestUpdateLockFromS3GetsNoArchive(t *testing.T) {
	ctx := chkCtx(t)
	srcDir, src := chkMirror(t)
	srv := s3test.Start(t)
	// The counting transport is not the SDK's kind, to which the machine's
	// AWS_CA_BUNDLE would be added.
	t.Setenv("AWS_CA_BUNDLE", "")
	opts := srv.Options()
	ct := &countingTransport{next: opts.HTTPClient.Transport}
	opts.HTTPClient = &http.Client{Transport: ct}
	target := srv.Bucket(t) + "/tf"
	dst, err := s3.Open(ctx, "s3://"+target, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	sel := sync.Selection{Providers: filters(t, "example.com/acme/alpha"), Versions: mustConstraint(t, "= 1.2.0")}
	plan, err := sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum := sync.Sync(ctx, engine.NewEngine(ctx, engine.Options{Jobs: 2}), dst, false, sync.Sinks{}, plan); !sum.OK() {
		t.Fatalf("sync: %+v", sum)
	}
	ct.zips.Store(0)
	f := lockfile.New(lockfile.HeaderOpenTofu)
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "example.com/acme/alpha")}, Platforms: plats(t, chkPlatforms...)}
	if _, problems, err := lockcheck.UpdateLock(ctx, dst, f, req); err != nil || len(problems) != 0 {
		t.Fatalf("%v %+v", err, problems)
	}
	if n := ct.zips.Load(); n != 0 {
		t.Errorf("%d archive GETs from the bucket, want none", n)
	}
	var want []hashing.Hash
	for _, plat := range chkPlatforms {
		s := independentSums(t, zipPath(srcDir, "example.com/acme/alpha", "1.2.0", plat))
		want = append(want, s.H1, s.ZH)
	}
	if got, want := hashing.Strings(lockedOf(t, f, "example.com/acme/alpha").Hashes), hashing.Strings(hashing.SortUnique(want)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("locked %v, want %v", got, want)
	}
}
