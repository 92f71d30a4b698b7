package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

func TestBuild(t *testing.T) {
	ctx := t.Context()
	w, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	primary, err := fs.Open("primary", w.Primary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	secondary, err := fs.Open("secondary", w.Secondary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Everything the primary holds is stated by its index and verifies.
	findings, err := sync.VerifyPlace(ctx, primary, sync.Selection{}, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, r := range Releases() {
		want += len(r.Platforms)
	}
	if len(findings) != want {
		t.Errorf("primary: %d packages, want %d", len(findings), want)
	}
	for _, f := range findings {
		if f.Status != sync.StatusOK || f.Result == nil || !f.Result.Verified() {
			t.Errorf("primary: %s: %s %s", f.Package, f.Status, f.Detail)
		}
	}
	if w := primary.Warnings(); len(w) > 0 {
		t.Errorf("primary has junk: %v", w)
	}
	// The secondary lacks some, and holds exactly one different archive.
	plan, err := sync.MakePlan(ctx, primary, secondary, sync.Selection{}, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var conflicts []string
	for _, it := range plan.Items {
		if it.Status == sync.StatusConflict {
			conflicts = append(conflicts, it.Archive.Package.String())
		}
	}
	if !slices.Equal(conflicts, []string{Host + "/acme/cloud 2.0.0 linux_amd64"}) {
		t.Errorf("conflicts %v", conflicts)
	}
	if plan.Count(sync.StatusMissing) < 10 || plan.Count(sync.StatusPresent) < 10 {
		t.Errorf("plan: %d missing, %d present; the demo needs plenty of both", plan.Count(sync.StatusMissing), plan.Count(sync.StatusPresent))
	}
	// A zip is the same bytes every time, and holds an executable script.
	p, _ := backends.ParseProvider(Host + "/acme/cloud")
	v, _ := backends.ParseVersion("2.0.0")
	pkg := backends.Package{Provider: p, Version: v, Platform: backends.Platform{OS: "linux", Arch: "amd64"}}
	if !bytes.Equal(Zip(pkg, "", 1000), Zip(pkg, "", 1000)) || bytes.Equal(Zip(pkg, "", 0), Zip(pkg, "x", 0)) {
		t.Errorf("Zip must be deterministic, and salt must change it")
	}
}

func TestBuildRefusesAFile(t *testing.T) {
	f := t.TempDir() + "/file"
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(t.Context(), f); err == nil {
		t.Errorf("building into a file should fail")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Build(ctx, t.TempDir()); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled build: %v", err)
	}
}

func TestServe(t *testing.T) {
	ctx := t.Context()
	w, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := w.Serve(ctx, ServeOptions{BytesPerSecond: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	net, err := srv.Open()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := backends.ParseProvider(Host + "/acme/cloud")
	as, err := sync.Selection{}.ArchivesOf(ctx, net, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 25 {
		t.Fatalf("the network mirror lists %d archives of acme/cloud, want 25", len(as))
	}
	// Downloading through the throttle yields the archive its index states.
	f := sync.VerifyArchive(ctx, net, as[0], hashing.Options{})
	if f.Status != sync.StatusOK || !f.Result.Verified() {
		t.Errorf("%s over the network mirror: %s %s", as[0].Package, f.Status, f.Detail)
	}
	if _, err := os.Stat(srv.CertFile); err != nil {
		t.Errorf("the certificate is not where Served says: %v", err)
	}
}

// TestServeModules: the demo registry speaks the Module Registry Protocol
// to tfmirror's own client, its packages build, and the module directory
// starts with exactly the releases it should.
func TestServeModules(t *testing.T) {
	ctx := t.Context()
	w, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.ServeModules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reg, err := r.Open()
	if err != nil {
		t.Fatal(err)
	}
	mods, err := r.Modules()
	if err != nil || len(mods) != 2 {
		t.Fatalf("modules %v, %v", mods, err)
	}
	dir, err := modfs.Open(w.Modules, w.Modules, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Builder(t.TempDir())
	defer b.Close()
	for _, m := range mods {
		ls, err := reg.ListModule(ctx, m, backends.VersionConstraint{})
		if err != nil {
			t.Fatal(err)
		}
		var want, got, inDir []string
		for _, rel := range ModuleReleases() {
			if m.Short() == rel.Module {
				want = append(want, rel.Version)
				if inModuleDir(rel) {
					inDir = append(inDir, rel.Version)
				}
			}
		}
		for _, it := range ls.Items {
			if it.Err != nil || it.Source == nil || !strings.HasPrefix(it.Location, "https://"+r.Host+"/archives/") {
				t.Errorf("%s %s: location %q, %v", m, it.Version, it.Location, it.Err)
				continue
			}
			got = append(got, it.Version.String())
			pkg, err := b.Build(ctx, m, it.Version, *it.Source, nil)
			if err != nil {
				t.Errorf("%s %s: %v", m, it.Version, err)
				continue
			}
			if pkg.Files != 3 {
				t.Errorf("%s %s: %d files, want 3", m, it.Version, pkg.Files)
			}
			pkg.Remove()
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: versions %v, want %v", m, got, want)
		}
		var have []string
		if ls, err := dir.ListModule(ctx, m, backends.VersionConstraint{}); err == nil {
			for _, it := range ls.Items {
				have = append(have, it.Version.String())
			}
		} else if !errors.Is(err, backends.ErrNotFound) {
			t.Fatal(err)
		}
		if !slices.Equal(have, inDir) {
			t.Errorf("%s: the module directory holds %v, want %v", m, have, inDir)
		}
	}
}
