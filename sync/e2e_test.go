package sync_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// checkedBy reports whether every job was vouched for by a source of kind k.
func checkedBy(t *testing.T, tr *engine.Tracker, k hashing.SourceKind) {
	t.Helper()
	for _, j := range tr.Jobs {
		ok := false
		for _, c := range j.Checks {
			ok = ok || c.Source.Kind == k && c.Status == hashing.Match
		}
		if !ok {
			t.Errorf("%s: no %s check matched: %+v", j.Info.Package, k, j.Checks)
		}
	}
}

func mustSelection(t *testing.T, providers []string, constraint string) sync.Selection {
	t.Helper()
	var sel sync.Selection
	for _, p := range providers {
		f, err := backends.ParseProviderFilter(p)
		if err != nil {
			t.Fatal(err)
		}
		sel.Providers = append(sel.Providers, f)
	}
	vc, err := backends.ParseVersionConstraint(constraint)
	if err != nil {
		t.Fatal(err)
	}
	sel.Versions = vc
	return sel
}

// Origin registry (TLS, signed SHA256SUMS) -> filesystem mirror.
func TestE2ERegistryToFS(t *testing.T) {
	var versions []registrytest.Version
	for _, v := range []string{"1.0.0", "2.0.0"} {
		ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
		for _, plat := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
			ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, plat), "")
		}
		versions = append(versions, ver)
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: versions})
	ctx := context.Background()
	src, err := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	dstDir := filepath.Join(t.TempDir(), "m")
	dst, _ := fs.Open(dstDir, dstDir, fs.Options{Create: true})
	sel := mustSelection(t, []string{"acme/alpha"}, "~> 2.0")
	plan, tr := syncAll(t, ctx, src, dst, sel, engine.Options{})
	if plan.Count(sync.StatusMissing) != 3 || tr.Counts()[engine.Done] != 3 {
		t.Fatalf("plan %v, counts %v, failures %v", plan.Findings(), tr.Counts(), failures(tr))
	}
	checkedBy(t, tr, hashing.SourceRegistrySigned)
	for _, j := range tr.Jobs {
		for _, c := range j.Checks {
			if c.Source.Kind == hashing.SourceRegistrySigned && c.Source.Detail != "key "+reg.KeyID()+", fingerprint "+reg.Fingerprint() {
				t.Errorf("the check does not record the signing key %s: %q", reg.KeyID(), c.Source.Detail)
			}
		}
	}
	assertClean(t, dst)
	archives := reg.Count(registrytest.KindArchive)
	if plan2, tr2 := syncAll(t, ctx, src, dst, sel, engine.Options{}); plan2.Count(sync.StatusPresent) != 3 || len(tr2.Jobs) != 0 {
		t.Fatalf("second run: %v", plan2.Findings())
	}
	if reg.Count(registrytest.KindArchive) != archives {
		t.Fatal("the no-op re-run downloaded archives")
	}
}

// A tampered registry archive never reaches the destination.
func TestE2ERegistryTamperedArchive(t *testing.T) {
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{
		"linux_amd64": backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64"), ""),
	}}
	reg := registrytest.NewWithOptions(t, registrytest.Options{Faults: registrytest.Faults{TamperArchive: true}},
		registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	ctx := context.Background()
	src, _ := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	dstDir := t.TempDir()
	dst, _ := fs.Open(dstDir, dstDir, fs.Options{})
	_, tr := syncAll(t, ctx, src, dst, mustSelection(t, []string{"acme/alpha"}, "1.0.0"), engine.Options{Backoff: 1})
	if tr.Counts()[engine.Failed] != 1 {
		t.Fatalf("counts %v", tr.Counts())
	}
	t.Log(tr.Failures()[0].Err)
	assertNoTempFiles(t, dstDir)
	if as, _ := dst.Archives(ctx, ver2pkg(t).Provider, ver2pkg(t).Version); len(as) != 0 {
		t.Fatal("a tampered archive is visible")
	}
}

func ver2pkg(t *testing.T) backends.Package {
	return backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
}

// Filesystem mirror -> OCI registry (the real distribution registry), then
// the OCI mirror verifies clean and a re-run uploads nothing.
func TestE2EFSToOCI(t *testing.T) {
	w := newWorld(t)
	reg := ocitest.New(t)
	ctx := context.Background()
	dstArg := "oci://" + reg.Host() + "/mirror/${namespace}/${type}"
	r, err := place.Open(ctx, dstArg, place.Options{CACertFile: reg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	dst := r.(backends.Writer)
	plan, tr := syncAll(t, ctx, w.src, dst, sync.Selection{}, engine.Options{})
	if tr.Counts()[engine.Done] != len(w.seeds) {
		t.Fatalf("plan %d items, counts %v, failures %v", len(plan.Items), tr.Counts(), failures(tr))
	}
	checkedBy(t, tr, hashing.SourceMirrorIndex)
	// The OCI mirror cannot list providers: verify with them named.
	sel := mustSelection(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, "")
	findings, err := sync.VerifyPlace(ctx, dst, sel, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != len(w.seeds) {
		t.Fatalf("verify found %d packages, want %d", len(findings), len(w.seeds))
	}
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			t.Errorf("verify OCI: %s %s", f.Status, f.Detail)
		}
	}
	reg.ResetRequests()
	plan2, _ := syncAll(t, ctx, w.src, dst, sync.Selection{}, engine.Options{})
	if plan2.Count(sync.StatusPresent) != len(w.seeds) || reg.BlobUploads() != 0 {
		t.Fatalf("re-run: %d present, %d blob uploads", plan2.Count(sync.StatusPresent), reg.BlobUploads())
	}
}

// Network mirror (a filesystem mirror served over TLS) -> filesystem mirror.
func TestE2ENetMirrorToFS(t *testing.T) {
	w := newWorld(t)
	srv := httptest.NewTLSServer(netmirror.NewHandler(w.src, log.New(io.Discard, "", 0), hashing.Options{}))
	defer srv.Close()
	ctx := context.Background()
	src, err := place.Open(ctx, srv.URL+"/", place.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	dstDir := filepath.Join(t.TempDir(), "m")
	dst, _ := fs.Open(dstDir, dstDir, fs.Options{Create: true})
	sel := mustSelection(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, "")
	plan, tr := syncAll(t, ctx, src, dst, sel, engine.Options{})
	if tr.Counts()[engine.Done] != len(w.seeds) {
		t.Fatalf("plan %v, counts %v, failures %v", plan.Findings(), tr.Counts(), failures(tr))
	}
	checkedBy(t, tr, hashing.SourceMirrorIndex)
	assertClean(t, dst)
}
