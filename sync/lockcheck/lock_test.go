package lockcheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

var (
	chkProviders = []string{"example.com/acme/alpha", "example.com/acme/beta"}
	chkPlatforms = []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}
)

func chkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// chkMirror is a packed filesystem mirror of two providers, two versions and
// four platforms, every zip different.
func chkMirror(t *testing.T) (string, *fs.Mirror) {
	t.Helper()
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, backendtest.Seeds(t, chkProviders, []string{"1.0.0", "1.2.0"}, chkPlatforms))
	return dir, chkOpen(t, dir)
}

func chkOpen(t *testing.T, dir string) *fs.Mirror {
	t.Helper()
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var plats = backendtest.Platforms

var filters = backendtest.ProviderFilters

func zipPath(dir, provider, version, platform string) string {
	p, _ := backends.ParseProvider(provider)
	return filepath.Join(dir, p.HostnameForDisplay(), p.Namespace, p.Type,
		"terraform-provider-"+p.Type+"_"+version+"_"+platform+".zip")
}

// independentSums hashes a mirror's zip file directly.
func independentSums(t *testing.T, path string) hashing.Sums {
	t.Helper()
	s, err := hashing.HashPath(path, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lockedOf(t *testing.T, f *lockfile.File, provider string) *lockfile.Provider {
	t.Helper()
	p, _ := backends.ParseProvider(provider)
	l, ok := f.Provider(p)
	if !ok {
		t.Fatalf("%s not locked:\n%s", provider, f.Bytes())
	}
	return l
}

func hasHash(hs []hashing.Hash, h hashing.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

func TestUpdateLockNewProviders(t *testing.T) {
	ctx := chkCtx(t)
	dir, m := chkMirror(t)
	f := lockfile.New(lockfile.HeaderTerraform)
	req := lockcheck.LockRequest{
		// One address with its host, one without: both must resolve.
		Selection: sync.Selection{Providers: filters(t, "example.com/acme/alpha", "acme/beta")},
		Platforms: plats(t, "linux_amd64", "darwin_arm64"),
	}
	updates, problems, err := lockcheck.UpdateLock(ctx, m, f, req)
	if err != nil || len(problems) > 0 {
		t.Fatalf("err %v, problems %+v", err, problems)
	}
	if len(updates) != 2 {
		t.Fatalf("updates: %+v", updates)
	}
	for _, prov := range chkProviders {
		l := lockedOf(t, f, prov)
		if l.Version.String() != "1.2.0" {
			t.Errorf("%s: locked %s, want the newest, 1.2.0", prov, l.Version)
		}
		if l.Constraints != "" {
			t.Errorf("%s: constraints %q invented", prov, l.Constraints)
		}
		if len(l.Hashes) != 4 {
			t.Errorf("%s: %d hashes, want h1+zh for 2 platforms: %v", prov, len(l.Hashes), l.Hashes)
		}
		for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
			s := independentSums(t, zipPath(dir, prov, "1.2.0", plat))
			if !hasHash(l.Hashes, s.H1) || !hasHash(l.Hashes, s.ZH) {
				t.Errorf("%s %s: lock lacks %v", prov, plat, s.List())
			}
		}
	}
}

func TestUpdateLockMergesAndKeeps(t *testing.T) {
	ctx := chkCtx(t)
	dir, m := chkMirror(t)
	src := `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "example.com/acme/alpha" {
  version     = "1.0.0"
  constraints = ">= 1.0.0, < 2.0.0"
  hashes = [
    "zh:0000000000000000000000000000000000000000000000000000000000000000",
  ]
}
`
	f, err := lockfile.Parse([]byte(src), "lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	updates, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{Platforms: plats(t, chkPlatforms...)})
	if err != nil || len(problems) > 0 {
		t.Fatalf("err %v, problems %+v", err, problems)
	}
	if len(updates) != 1 || len(updates[0].Added) != 8 {
		t.Fatalf("updates: %+v", updates)
	}
	l := lockedOf(t, f, "example.com/acme/alpha")
	if l.Version.String() != "1.0.0" || l.Constraints != ">= 1.0.0, < 2.0.0" {
		t.Errorf("version %s constraints %q: the locked version and constraints must stay", l.Version, l.Constraints)
	}
	if !hasHash(l.Hashes, "zh:0000000000000000000000000000000000000000000000000000000000000000") || len(l.Hashes) != 9 {
		t.Errorf("hashes: %v", l.Hashes)
	}
	if _, ok := f.Provider(backends.Provider{Hostname: "example.com", Namespace: "acme", Type: "beta"}); ok {
		t.Error("a provider that was neither locked nor selected was added")
	}
	if f.Header != lockfile.HeaderOpenTofu {
		t.Error("header changed")
	}
	// Running again adds nothing.
	again, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{Platforms: plats(t, chkPlatforms...)})
	if err != nil || len(problems) > 0 || len(again) != 1 || len(again[0].Added) != 0 {
		t.Errorf("second run: %+v %+v %v", again, problems, err)
	}
	_ = dir
}

func TestUpdateLockAllOrNothing(t *testing.T) {
	ctx := chkCtx(t)
	dir, _ := chkMirror(t)
	if err := os.Remove(zipPath(dir, "example.com/acme/beta", "1.2.0", "windows_amd64")); err != nil {
		t.Fatal(err)
	}
	m := chkOpen(t, dir)
	f := lockfile.New(lockfile.HeaderTerraform)
	before := string(f.Bytes())
	_, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{
		Selection: sync.Selection{Providers: filters(t, "acme/alpha", "acme/beta", "example.com/acme/gamma")},
		Platforms: plats(t, "linux_amd64", "windows_amd64"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 {
		t.Fatalf("problems: %+v", problems)
	}
	var details []string
	for _, p := range problems {
		if p.Status != sync.StatusMissing {
			t.Errorf("status %s: %s", p.Status, p.Detail)
		}
		details = append(details, p.Detail)
	}
	all := strings.Join(details, "\n")
	for _, want := range []string{"no provider matching example.com/acme/gamma", "example.com/acme/beta 1.2.0 for only darwin_arm64, linux_amd64, linux_arm64", "tfmirror sync SOURCE"} {
		if !strings.Contains(all, want) {
			t.Errorf("details lack %q:\n%s", want, all)
		}
	}
	if string(f.Bytes()) != before {
		t.Errorf("lock changed despite problems:\n%s", f.Bytes())
	}
}

func TestUpdateLockMovesVersion(t *testing.T) {
	ctx := chkCtx(t)
	_, m := chkMirror(t)
	f := lockfile.New(lockfile.HeaderTerraform)
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.0.0")
	if err := f.Set(lockfile.Provider{Addr: p, Version: v, Constraints: "~> 1.0", Hashes: []hashing.Hash{"h1:old="}}); err != nil {
		t.Fatal(err)
	}
	c, _ := backends.ParseVersionConstraint(">= 1.1")
	updates, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{Selection: sync.Selection{Versions: c}, Platforms: plats(t, "linux_amd64")})
	if err != nil || len(problems) > 0 || len(updates) != 1 {
		t.Fatalf("%+v %+v %v", updates, problems, err)
	}
	if updates[0].OldVersion == nil || updates[0].OldVersion.String() != "1.0.0" {
		t.Errorf("old version not reported: %+v", updates[0])
	}
	l := lockedOf(t, f, "example.com/acme/alpha")
	if l.Version.String() != "1.2.0" || hasHash(l.Hashes, "h1:old=") || len(l.Hashes) != 2 || l.Constraints != "~> 1.0" {
		t.Errorf("lock after move: %s %q %v", l.Version, l.Constraints, l.Hashes)
	}
}

// A zip with directory entries has a ZipH1 h1 that differs from its
// unpacked h1; the lock gets the unpacked one (what the clients record).
func TestUpdateLockZipWithDirectoryEntries(t *testing.T) {
	ctx := chkCtx(t)
	dir := t.TempDir()
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := backendtest.Zip(t,
		backendtest.Entry{Name: "docs/", Mode: os.ModeDir | 0o755},
		backendtest.Entry{Name: "docs/README", Body: []byte("read me\n"), Mode: 0o644},
		backendtest.Entry{Name: "terraform-provider-alpha_v1.0.0", Body: []byte("#!/bin/sh\n")})
	backendtest.WritePacked(t, dir, []backendtest.Seed{{Package: pkg, Zip: z}})
	m := chkOpen(t, dir)
	f := lockfile.New(lockfile.HeaderTerraform)
	_, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "acme/alpha")}, Platforms: plats(t, "linux_amd64")})
	if err != nil || len(problems) > 0 {
		t.Fatalf("%+v %v", problems, err)
	}
	unpacked := filepath.Join(t.TempDir(), "x")
	if err := hashing.Extract(zipPath(dir, "example.com/acme/alpha", "1.0.0", "linux_amd64"), unpacked, hashing.Options{}); err != nil {
		t.Fatal(err)
	}
	dirH1, err := hashing.DirH1(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	zipSums := independentSums(t, zipPath(dir, "example.com/acme/alpha", "1.0.0", "linux_amd64"))
	if dirH1 == zipSums.H1 {
		t.Fatal("test zip does not exercise the difference")
	}
	l := lockedOf(t, f, "example.com/acme/alpha")
	if !hasHash(l.Hashes, dirH1) || hasHash(l.Hashes, zipSums.H1) || !hasHash(l.Hashes, zipSums.ZH) {
		t.Errorf("hashes %v; want unpacked h1 %s and zh %s, not the zip's h1 %s", l.Hashes, dirH1, zipSums.ZH, zipSums.H1)
	}

	// A lock with only that h1 fails a packed install (the clients check a
	// zip with ZipH1), and check says why.
	onlyH1 := map[backends.Provider]sync.Locked{l.Addr: {Version: l.Version, Hashes: []hashing.Hash{dirH1}, Source: "lock.hcl"}}
	fs, err := lockcheck.CheckLock(ctx, m, onlyH1, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, "linux_amd64")})
	if err != nil || len(fs) != 1 {
		t.Fatalf("%+v %v", fs, err)
	}
	if fs[0].Status != sync.StatusMismatch || !strings.Contains(fs[0].Detail, "directory entries") {
		t.Errorf("finding: %s %s", fs[0].Status, fs[0].Detail)
	}
}

func TestUpdateLockRefusesWhatThePlaceContradicts(t *testing.T) {
	ctx := chkCtx(t)
	dir, _ := chkMirror(t)
	// The mirror's own index states a different hash for one archive.
	doc := map[string]any{"archives": map[string]any{"linux_amd64": map[string]any{
		"url":    "terraform-provider-alpha_1.2.0_linux_amd64.zip",
		"hashes": []string{"zh:1111111111111111111111111111111111111111111111111111111111111111"},
	}}}
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(dir, "example.com/acme/alpha/1.2.0.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "example.com/acme/alpha/index.json"), []byte(`{"versions":{"1.2.0":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m := chkOpen(t, dir)
	f := lockfile.New(lockfile.HeaderTerraform)
	_, problems, err := lockcheck.UpdateLock(ctx, m, f, lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "acme/alpha")}, Platforms: plats(t, "linux_amd64")})
	if err != nil || len(problems) != 1 || problems[0].Status != sync.StatusMismatch {
		t.Fatalf("%+v %v", problems, err)
	}
	if len(f.Providers()) != 0 {
		t.Error("locked anyway")
	}
}

func lockAll(t *testing.T, ctx context.Context, r backends.Reader, platforms ...string) *lockfile.File {
	t.Helper()
	f := lockfile.New(lockfile.HeaderTerraform)
	_, problems, err := lockcheck.UpdateLock(ctx, r, f, lockcheck.LockRequest{
		Selection: sync.Selection{Providers: filters(t, chkProviders...)},
		Platforms: plats(t, platforms...),
	})
	if err != nil || len(problems) > 0 {
		t.Fatalf("lock: %+v %v", problems, err)
	}
	return f
}

func byPkg(fs []sync.Finding) map[string]sync.Finding {
	out := map[string]sync.Finding{}
	for _, f := range fs {
		out[f.Package.Provider.Type+" "+f.Package.Platform.String()] = f
	}
	return out
}

func TestCheckLockFilesystemMirror(t *testing.T) {
	ctx := chkCtx(t)
	dir, m := chkMirror(t)
	f := lockAll(t, ctx, m, chkPlatforms...)
	locked := lockcheck.LockedFromFile(f, "team.lock.hcl")

	findings, err := lockcheck.CheckLock(ctx, m, locked, lockcheck.CheckOptions{Kind: place.FS})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 8 {
		t.Fatalf("%d findings, want 2 providers x 4 platforms (the default: those the mirror holds)", len(findings))
	}
	for _, fd := range findings {
		if fd.Status != sync.StatusOK {
			t.Errorf("%s: %s %s", fd.Package, fd.Status, fd.Detail)
		}
	}

	// Break the mirror: a platform gone, another zip swapped for a
	// different one.
	if err := os.Remove(zipPath(dir, "example.com/acme/beta", "1.2.0", "darwin_arm64")); err != nil {
		t.Fatal(err)
	}
	swapped := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.2.0", "linux_arm64"), "rebuilt")
	if err := os.WriteFile(zipPath(dir, "example.com/acme/alpha", "1.2.0", "linux_arm64"), swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	m = chkOpen(t, dir)
	findings, err = lockcheck.CheckLock(ctx, m, locked, lockcheck.CheckOptions{Kind: place.FS})
	if err != nil {
		t.Fatal(err)
	}
	// The mirror alone cannot tie the locked hashes of the packages gone
	// or swapped to their platforms: each is a package of some platform
	// init would miss, and a package held with none of the locked hashes
	// is named as the likely wrong one.
	got := byPkg(findings)
	miss := got["beta _"]
	if miss.Status != sync.StatusMissing || !strings.Contains(miss.Detail, "init on some platform would fail") || !strings.Contains(miss.Detail, "tfmirror sync SOURCE "+dir+" -p example.com/acme/beta -v 1.2.0 --platform OS_ARCH") {
		t.Errorf("missing platform: %s %s", miss.Status, miss.Detail)
	}
	bad := got["alpha _"]
	if bad.Status != sync.StatusMissing || !strings.Contains(bad.Detail, "holds linux_arm64 with none of the locked hashes") || !strings.Contains(bad.Detail, "--platform linux_arm64 --force") {
		t.Errorf("swapped zip: %s %s", bad.Status, bad.Detail)
	}
	// With the lock's platforms named, the swapped zip is a mismatch.
	findings, err = lockcheck.CheckLock(ctx, m, locked, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, chkPlatforms...)})
	if err != nil {
		t.Fatal(err)
	}
	got = byPkg(findings)
	if bad := got["alpha linux_arm64"]; bad.Status != sync.StatusMismatch || !strings.Contains(bad.Detail, "checksum error") || !strings.Contains(bad.Detail, "tfmirror lock "+dir+" --lock team.lock.hcl --platform linux_arm64") {
		t.Errorf("swapped zip, --platform: %s %s", bad.Status, bad.Detail)
	}
	if miss := got["beta darwin_arm64"]; miss.Status != sync.StatusMissing || !strings.Contains(miss.Detail, "init on darwin_arm64 would fail") {
		t.Errorf("missing platform, --platform: %s %s", miss.Status, miss.Detail)
	}
	if ok := got["alpha linux_amd64"]; ok.Status != sync.StatusOK {
		t.Errorf("untouched package: %s %s", ok.Status, ok.Detail)
	}

	// Explicit platforms: one the mirror never had.
	findings, err = lockcheck.CheckLock(ctx, m, locked, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, "freebsd_amd64")})
	if err != nil || len(findings) != 2 {
		t.Fatalf("%+v %v", findings, err)
	}
	for _, fd := range findings {
		if fd.Status != sync.StatusMissing {
			t.Errorf("%s: %s", fd.Package, fd.Status)
		}
	}
}

func TestCheckLockVersionAndHashRules(t *testing.T) {
	ctx := chkCtx(t)
	dir, m := chkMirror(t)
	alpha, _ := backends.ParseProvider("example.com/acme/alpha")
	beta, _ := backends.ParseProvider("example.com/acme/beta")
	v120, _ := backends.ParseVersion("1.2.0")
	v900, _ := backends.ParseVersion("9.0.0")
	zhOnly := independentSums(t, zipPath(dir, "example.com/acme/alpha", "1.2.0", "linux_amd64")).ZH
	locked := map[backends.Provider]sync.Locked{
		alpha: {Version: v120, Hashes: []hashing.Hash{zhOnly}, Source: "l.hcl"},
		beta:  {Version: v900, Source: "l.hcl"},
	}
	findings, err := lockcheck.CheckLock(ctx, m, locked, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, "linux_amd64", "linux_arm64")})
	if err != nil {
		t.Fatal(err)
	}
	got := byPkg(findings)
	if f := got["alpha linux_amd64"]; f.Status != sync.StatusOK || !strings.Contains(f.Detail, "zh matches") {
		t.Errorf("zh: against a packed zip is checked: %s %s", f.Status, f.Detail)
	}
	if f := got["alpha linux_arm64"]; f.Status != sync.StatusMismatch {
		t.Errorf("another platform's zip against a lone zh: %s %s", f.Status, f.Detail)
	}
	if f := got["beta linux_amd64"]; f.Status != sync.StatusMissing || !strings.Contains(f.Detail, "does not hold the locked version 9.0.0") || !strings.Contains(f.Detail, "1.2.0, 1.0.0") {
		t.Errorf("missing version: %s %s", f.Status, f.Detail)
	}

	// No hashes at all: init works, unchecked.
	locked[beta] = sync.Locked{Version: v120, Source: "l.hcl"}
	findings, err = lockcheck.CheckLock(ctx, m, map[backends.Provider]sync.Locked{beta: locked[beta]}, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, "linux_amd64")})
	if err != nil || len(findings) != 1 || findings[0].Status != sync.StatusOK || !strings.Contains(findings[0].Detail, "without checking") {
		t.Errorf("no hashes: %+v %v", findings, err)
	}
}

// An unpacked filesystem mirror can only be vouched for by h1:; a lock with
// only zh: lets anything through.
func TestCheckLockUnpackedMirror(t *testing.T) {
	ctx := chkCtx(t)
	srcDir, src := chkMirror(t)
	dstDir := filepath.Join(t.TempDir(), "unpacked")
	dst, err := fs.Open(dstDir, dstDir, fs.Options{Create: true, Unpacked: true})
	if err != nil {
		t.Fatal(err)
	}
	sel := sync.Selection{Providers: filters(t, "acme/alpha"), Versions: mustConstraint(t, "= 1.2.0"), Platforms: plats(t, "linux_amd64")}
	plan, err := sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var specs []engine.Task
	for _, it := range plan.Items {
		specs = append(specs, sync.Transfer{Src: src, Dst: dst, Archive: it.Archive})
	}
	eng := engine.NewEngine(ctx, engine.Options{Jobs: 1})
	eng.Enqueue(specs...)
	eng.Close()
	for range eng.Events() {
	}
	dst = chkOpen(t, dstDir)

	zh := independentSums(t, zipPath(srcDir, "example.com/acme/alpha", "1.2.0", "linux_amd64")).ZH
	alpha, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.2.0")
	onlyZH := map[backends.Provider]sync.Locked{alpha: {Version: v, Hashes: []hashing.Hash{zh, "zh:2222222222222222222222222222222222222222222222222222222222222222"}, Source: "l.hcl"}}
	findings, err := lockcheck.CheckLock(ctx, dst, onlyZH, lockcheck.CheckOptions{Kind: place.FS})
	if err != nil || len(findings) != 1 {
		t.Fatalf("%+v %v", findings, err)
	}
	if f := findings[0]; f.Status != sync.StatusOK || !strings.Contains(f.Detail, "WITHOUT checking") || !strings.Contains(f.Detail, "tfmirror lock") {
		t.Errorf("zh-only lock on an unpacked mirror: %s %s", f.Status, f.Detail)
	}

	// tfmirror lock on the unpacked mirror records the directory's h1, and
	// then check finds it; a wrong h1 is a mismatch.
	f := lockfile.New(lockfile.HeaderTerraform)
	if _, problems, err := lockcheck.UpdateLock(ctx, dst, f, lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "acme/alpha")}, Platforms: plats(t, "linux_amd64")}); err != nil || len(problems) > 0 {
		t.Fatalf("%+v %v", problems, err)
	}
	l := lockedOf(t, f, "example.com/acme/alpha")
	if len(l.Hashes) != 1 || l.Hashes[0].Scheme() != hashing.SchemeH1 {
		t.Errorf("unpacked package lock hashes: %v (only h1 can be known)", l.Hashes)
	}
	if srcH1 := independentSums(t, zipPath(srcDir, "example.com/acme/alpha", "1.2.0", "linux_amd64")).H1; l.Hashes[0] != srcH1 {
		t.Errorf("unpacked h1 %s differs from the zip's %s", l.Hashes[0], srcH1)
	}
	findings, err = lockcheck.CheckLock(ctx, dst, lockcheck.LockedFromFile(f, "l.hcl"), lockcheck.CheckOptions{Kind: place.FS})
	if err != nil || len(findings) != 1 || findings[0].Status != sync.StatusOK {
		t.Errorf("%+v %v", findings, err)
	}
	wrong := map[backends.Provider]sync.Locked{alpha: {Version: v, Hashes: []hashing.Hash{"h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}, Source: "l.hcl"}}
	findings, err = lockcheck.CheckLock(ctx, dst, wrong, lockcheck.CheckOptions{Kind: place.FS})
	// Its h1 tied to no package, the lock is about a platform the mirror
	// lacks, or the one it holds with none of the locked hashes.
	if err != nil || len(findings) != 1 || findings[0].Status != sync.StatusMissing || !strings.Contains(findings[0].Detail, "holds linux_amd64 with none of the locked hashes") {
		t.Errorf("%+v %v", findings, err)
	}
}

func mustConstraint(t *testing.T, s string) backends.VersionConstraint {
	t.Helper()
	c, err := backends.ParseVersionConstraint(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Against an OCI mirror, OpenTofu needs the layer's zh: in the lock before
// it downloads anything: a lock made from a filesystem mirror by Terraform
// (h1: only) fails.
func TestCheckLockOCIMirror(t *testing.T) {
	ctx := chkCtx(t)
	srcDir, src := chkMirror(t)
	_, dst := ociAlpha(t, ctx, src, "linux_amd64", "darwin_arm64")

	alpha, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.2.0")
	amd := independentSums(t, zipPath(srcDir, "example.com/acme/alpha", "1.2.0", "linux_amd64"))
	arm := independentSums(t, zipPath(srcDir, "example.com/acme/alpha", "1.2.0", "darwin_arm64"))
	h1Only := map[backends.Provider]sync.Locked{alpha: {Version: v, Hashes: []hashing.Hash{amd.H1, arm.H1}, Source: "l.hcl"}}
	findings, err := lockcheck.CheckLock(ctx, dst, h1Only, lockcheck.CheckOptions{Kind: place.OCI})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 2 {
		t.Fatalf("findings: %+v", findings)
	}
	for _, f := range findings {
		if f.Status != sync.StatusMismatch || !strings.Contains(f.Detail, "only h1:") || !strings.Contains(f.Detail, "tfmirror lock oci://") || !strings.Contains(f.Detail, "the package's h1 matches the lock") {
			t.Errorf("%s: %s %s", f.Package, f.Status, f.Detail)
		}
	}
	// The same lock is fine for a filesystem mirror holding the same zips.
	fsFindings, err := lockcheck.CheckLock(ctx, src, h1Only, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, "linux_amd64", "darwin_arm64")})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fsFindings {
		if f.Status != sync.StatusOK {
			t.Errorf("fs: %s: %s %s", f.Package, f.Status, f.Detail)
		}
	}

	// tfmirror lock against the OCI mirror adds the zh: (the layer digests);
	// then check passes.
	f := lockfile.New(lockfile.HeaderOpenTofu)
	if err := f.Set(lockfile.Provider{Addr: alpha, Version: v, Hashes: []hashing.Hash{amd.H1, arm.H1}}); err != nil {
		t.Fatal(err)
	}
	updates, problems, err := lockcheck.UpdateLock(ctx, dst, f, lockcheck.LockRequest{Platforms: plats(t, "linux_amd64", "darwin_arm64")})
	if err != nil || len(problems) > 0 {
		t.Fatalf("%+v %v", problems, err)
	}
	if len(updates) != 1 || len(updates[0].Added) != 2 {
		t.Errorf("added: %+v (want the two zh:)", updates)
	}
	findings, err = lockcheck.CheckLock(ctx, dst, lockcheck.LockedFromFile(f, "l.hcl"), lockcheck.CheckOptions{Kind: place.OCI})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			t.Errorf("after lock: %s: %s %s", f.Package, f.Status, f.Detail)
		}
	}

	// A zh: for another zip: the registry holds something else.
	other := map[backends.Provider]sync.Locked{alpha: {Version: v, Hashes: []hashing.Hash{"zh:3333333333333333333333333333333333333333333333333333333333333333"}, Source: "l.hcl"}}
	findings, err = lockcheck.CheckLock(ctx, dst, other, lockcheck.CheckOptions{Kind: place.OCI, Platforms: plats(t, "linux_amd64")})
	if err != nil || len(findings) != 1 || findings[0].Status != sync.StatusMismatch || !strings.Contains(findings[0].Detail, "none of the 1 locked zh:") {
		t.Errorf("%+v %v", findings, err)
	}
}

// unspecifiedMirror holds OpenTofu's fixture provider, whose only version is
// 0.0.0 (unpacked), and example.com/acme/alpha at 0.0.0 and 1.0.0 (packed).
func unspecifiedMirror(t *testing.T) *fs.Mirror {
	t.Helper()
	dir := t.TempDir()
	pkgDir := filepath.Join(dir, "registry.opentofu.org", "testnamespace", "unspecified", "0.0.0", "linux_amd64")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pkgDir, "unspecified-provider"), []byte("#!/bin/sh\n"), 0o755)
	backendtest.WritePacked(t, dir, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"0.0.0", "1.0.0"}, []string{"linux_amd64"}))
	return chkOpen(t, dir)
}

// 0.0.0 is never selected (by every version, latest or a constraint that
// names it), never locked for a provider that has nothing else, and a lock
// that holds it gets no hashes until it is moved to a released version.
func TestUnspecifiedNeverSelectedOrLocked(t *testing.T) {
	ctx := chkCtx(t)
	m := unspecifiedMirror(t)
	for _, c := range []string{"", "latest", ">= 0.0.0", "= 0.0.0"} {
		vc, _ := backends.ParseVersionConstraint(c)
		as, err := sync.Selection{Versions: vc}.Resolve(ctx, m)
		if err != nil && !errors.Is(err, sync.ErrNothingSelected) {
			t.Fatal(err)
		}
		for _, a := range as {
			if backends.Unspecified(a.Version) {
				t.Errorf("-v %q selected %s", c, a.Package)
			}
		}
	}

	f := lockfile.New(lockfile.HeaderTerraform)
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, "registry.opentofu.org/testnamespace/unspecified")}, Platforms: plats(t, "linux_amd64")}
	_, problems, err := lockcheck.UpdateLock(ctx, m, f, req)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0].Detail, "0.0.0 is OpenTofu's unspecified version") || len(f.Providers()) != 0 {
		t.Fatalf("locking a provider that has only 0.0.0: %v %+v\n%s", err, problems, f.Bytes())
	}
	req.Selection.Providers = filters(t, "example.com/acme/alpha")
	if _, problems, err := lockcheck.UpdateLock(ctx, m, f, req); err != nil || len(problems) != 0 {
		t.Fatalf("%v %+v", err, problems)
	}
	if l := lockedOf(t, f, "example.com/acme/alpha"); l.Version.String() != "1.0.0" {
		t.Errorf("locked %s, want 1.0.0", l.Version)
	}

	src := "provider \"example.com/acme/alpha\" {\n  version = \"0.0.0\"\n}\n"
	locked, err := lockfile.Parse([]byte(src), "lock.hcl")
	if err != nil || len(locked.Warnings) != 1 || !strings.Contains(locked.Warnings[0], "lock.hcl:2:13: example.com/acme/alpha: version 0.0.0 is OpenTofu's unspecified version") {
		t.Fatalf("reading a lock of 0.0.0: %v %q", err, locked.Warnings)
	}
	req.Selection.Providers = nil
	_, problems, err = lockcheck.UpdateLock(ctx, m, locked, req)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0].Detail, "not adding hashes") {
		t.Fatalf("hashing a lock of 0.0.0: %v %+v", err, problems)
	}
	if l := lockedOf(t, locked, "example.com/acme/alpha"); len(l.Hashes) != 0 {
		t.Errorf("hashes added to 0.0.0: %v", l.Hashes)
	}
	req.Selection.Versions, _ = backends.ParseVersionConstraint("latest")
	if _, problems, err := lockcheck.UpdateLock(ctx, m, locked, req); err != nil || len(problems) != 0 {
		t.Fatalf("moving the lock: %v %+v", err, problems)
	}
	if l := lockedOf(t, locked, "example.com/acme/alpha"); l.Version.String() != "1.0.0" || len(l.Hashes) != 2 {
		t.Errorf("moved to %s with %v", l.Version, l.Hashes)
	}

	zero, _ := backends.ParseVersion("0.0.0")
	if err := f.Set(lockfile.Provider{Addr: backends.Provider{Hostname: "example.com", Namespace: "acme", Type: "alpha"}, Version: zero}); !errors.Is(err, lockfile.ErrUnspecified) {
		t.Errorf("Set of 0.0.0: %v", err)
	}
}

// Locking from an origin registry for one platform records, as the clients
// do, that platform's h1: and the zh: of every platform in the signed
// SHA256SUMS, so init on another platform can check its package; merged
// with a lock entry that already holds other hashes, nothing is dropped.
func TestUpdateLockFromRegistryRecordsEverySignedHash(t *testing.T) {
	ctx := chkCtx(t)
	ver := registrytest.Version{Version: "1.2.0", Archives: map[string][]byte{}}
	for _, plat := range chkPlatforms {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.2.0", plat), "")
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	r, err := place.Open(ctx, "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	addr := reg.Address("acme", "alpha")
	wantZH := map[hashing.Hash]string{}
	for _, plat := range chkPlatforms {
		wantZH[hashing.Hash("zh:"+reg.SHA256("acme", "alpha", "1.2.0", plat))] = plat
	}
	zipFile := filepath.Join(t.TempDir(), "linux_amd64.zip")
	os.WriteFile(zipFile, ver.Archives["linux_amd64"], 0o644)
	h1 := independentSums(t, zipFile).H1

	f := lockfile.New(lockfile.HeaderTerraform)
	vc, _ := backends.ParseVersionConstraint("1.2.0")
	req := lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, addr), Versions: vc}, Platforms: plats(t, "linux_amd64")}
	updates, problems, err := lockcheck.UpdateLock(ctx, r, f, req)
	if err != nil || len(problems) != 0 || len(updates) != 1 {
		t.Fatalf("%v %+v %+v", err, problems, updates)
	}
	l := lockedOf(t, f, addr)
	if len(l.Hashes) != 1+len(chkPlatforms) || !hasHash(l.Hashes, h1) {
		t.Errorf("hashes %v: want linux_amd64's h1: %s and %d zh:", l.Hashes, h1, len(chkPlatforms))
	}
	for zh, plat := range wantZH {
		if !hasHash(l.Hashes, zh) {
			t.Errorf("%s's %s missing", plat, zh)
		}
	}
	for _, a := range updates[0].Added {
		if want, ok := wantZH[a.Hash]; ok && a.Platform.String() != want {
			t.Errorf("%s reported for %s, want %s", a.Hash, a.Platform, want)
		}
	}

	// An entry that already holds other hashes (another platform's h1:, a
	// scheme tfmirror does not know) keeps them all.
	src := fmt.Sprintf(`provider %q {
  version     = "1.2.0"
  constraints = "~> 1.2"
  hashes = [
    "h1:someOtherPlatformsHash0000000000000000000000=",
    "x1:unknown-scheme",
  ]
}
`, addr)
	merged, err := lockfile.Parse([]byte(src), "lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if _, problems, err := lockcheck.UpdateLock(ctx, r, merged, lockcheck.LockRequest{Platforms: plats(t, "darwin_arm64")}); err != nil || len(problems) != 0 {
		t.Fatalf("%v %+v", err, problems)
	}
	l = lockedOf(t, merged, addr)
	for _, h := range []hashing.Hash{"h1:someOtherPlatformsHash0000000000000000000000=", "x1:unknown-scheme"} {
		if !hasHash(l.Hashes, h) {
			t.Errorf("%s dropped", h)
		}
	}
	for zh := range wantZH {
		if !hasHash(l.Hashes, zh) {
			t.Errorf("%s missing after the merge", zh)
		}
	}
	if len(l.Hashes) != 3+len(chkPlatforms) || l.Constraints != "~> 1.2" {
		t.Errorf("merged: %v, constraints %q", l.Hashes, l.Constraints)
	}
}

// A mirror that lacks a platform the lock vouches for, for every provider,
// does not pass: the lock's hashes for that platform match no archive, and
// init there would fail. (Before, the default platforms were those the
// mirror holds, so every row was ok.)
func TestCheckLockReportsHashesNothingMatches(t *testing.T) {
	ctx := chkCtx(t)
	full := t.TempDir()
	backendtest.WritePacked(t, full, backendtest.Seeds(t, chkProviders, []string{"1.2.0"}, []string{"linux_amd64", "darwin_arm64"}))
	locked := lockcheck.LockedFromFile(lockAll(t, ctx, chkOpen(t, full), "linux_amd64", "darwin_arm64"), "team.lock.hcl")

	half := t.TempDir()
	backendtest.WritePacked(t, half, backendtest.Seeds(t, chkProviders, []string{"1.2.0"}, []string{"linux_amd64"}))
	findings, err := lockcheck.CheckLock(ctx, chkOpen(t, half), locked, lockcheck.CheckOptions{Kind: place.FS})
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, f := range findings {
		if f.Status == sync.StatusMissing {
			missing++
			if !strings.Contains(f.Detail, "1 of the 4 hashes team.lock.hcl locks") || !strings.Contains(f.Detail, "--platform OS_ARCH") {
				t.Errorf("%s: %s", f.Package, f.Detail)
			}
		}
	}
	if missing != len(chkProviders) {
		t.Fatalf("%d providers reported with unmatched hashes, want %d: %+v", missing, len(chkProviders), findings)
	}
	// --platform says which platforms matter: the others' hashes do not.
	findings, err = lockcheck.CheckLock(ctx, chkOpen(t, half), locked, lockcheck.CheckOptions{Kind: place.FS, Platforms: plats(t, "linux_amd64")})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			t.Errorf("with --platform linux_amd64: %s %s %s", f.Package, f.Status, f.Detail)
		}
	}
}
