package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
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
