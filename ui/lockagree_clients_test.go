package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// buildTfmirror builds the tfmirror command, for a test that compares the
// UI with what the command line prints.
func buildTfmirror(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build tfmirror to compare with")
	}
	bin := filepath.Join(t.TempDir(), "tfmirror")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/tfmirror/tfmirror").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cliVerdicts runs `tfmirror check DIR --lock LOCK --json [--platform P]`
// and returns each row's status by "PROVIDER PLATFORM" (rows of one
// platform; a row of the provider version has "_"),
// each provider's verdict (ok, fails) and its note rows.
func cliVerdicts(t *testing.T, bin string, env []string, dir, lock string, plats []string) (cells, providers map[string]string, notes []string) {
	t.Helper()
	args := []string{"check", dir, "--lock", lock, "--json"}
	for _, p := range plats {
		args = append(args, "--platform", p)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		t.Fatalf("tfmirror %s: exit %d: %v", strings.Join(args, " "), code, err)
	}
	var rows []struct{ Provider, Platform, Status, Detail string }
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	cells, providers = map[string]string{}, map[string]string{}
	for _, r := range rows {
		if providers[r.Provider] == "" {
			providers[r.Provider] = "ok"
		}
		if r.Status != "ok" {
			providers[r.Provider] = "fails"
		}
		if strings.HasPrefix(r.Detail, "note: assumed ") {
			notes = append(notes, strings.TrimPrefix(r.Detail, "note: "))
		}
		if _, err := backends.ParsePlatform(r.Platform); err == nil {
			cells[r.Provider+" "+r.Platform] = r.Status
		}
	}
	return cells, providers, notes
}

// uiVerdicts are the lock view's, in cliVerdicts' terms: each platform
// column of each locked provider is missing (○), mismatch (≠) or ok; the
// provider's list word is ok or it fails; notes are Details' assumed
// platforms.
func uiVerdicts(h *harness) (cells, providers map[string]string, notes []string) {
	v := h.m.lockv()
	cells, providers = map[string]string{}, map[string]string{}
	for _, p := range v.lockedProviders() {
		providers[p.String()] = "fails"
		if _, long, _, _ := v.lockStatus(p); long == "ok" {
			providers[p.String()] = "ok"
		}
		for _, plat := range v.lockPlatforms(p) {
			cells[p.String()+" "+plat] = "ok"
		}
		for _, g := range v.lockGaps(&p) {
			cells[p.String()+" "+g.plat] = map[bool]string{false: "missing", true: "mismatch"}[g.differs]
		}
		current := v.current
		v.current = p
		for _, ver := range v.lock.versions[p] {
			for _, d := range v.lockDetails(ver.String()) {
				if strings.HasPrefix(d, "assumed ") {
					notes = append(notes, d)
				}
			}
		}
		v.current = current
	}
	return cells, providers, notes
}

// The lock view and `check --lock --json` agree, per provider and per
// platform, on locks the real clients wrote (issue 34): one by `terraform
// providers lock -platform=linux_amd64 -platform=darwin_arm64` from a local
// origin registry whose signed SHA256SUMS also lists a manifest, one by
// `terraform init` through that origin (the h1: of linux_amd64 and every
// platform's signed zh:). Each is compared against filesystem mirrors
// holding both platforms, linux_amd64 only, a different darwin_arm64
// package than locked, and linux_amd64 synced by tfmirror (which keeps the
// signed SHA256SUMS, so the other platforms are assumed: both say so in
// the same words), and the origin registry itself; without --platform, and narrowed to one platform the
// locks cover and one they do not.
func TestLockViewAgreesWithCheckOnClientLocks(t *testing.T) {
	if runtime.GOOS+"_"+runtime.GOARCH != "linux_amd64" {
		t.Skipf("terraform init installs the package of this machine (%s_%s); the test's locks are for linux_amd64", runtime.GOOS, runtime.GOARCH)
	}
	all := []string{"darwin_arm64", "linux_amd64", "windows_amd64"}
	types := []string{"alpha", "beta"}
	var provs []registrytest.Provider
	zips := map[string][]byte{} // TYPE PLATFORM
	for _, typ := range types {
		ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
		for _, plat := range all {
			ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/"+typ, "1.0.0", plat), "")
			zips[typ+" "+plat] = ver.Archives[plat]
		}
		provs = append(provs, registrytest.Provider{Namespace: "acme", Type: typ, Versions: []registrytest.Version{ver}})
	}
	reg := registrytest.NewWithOptions(t, registrytest.Options{ManifestLine: true}, provs...)
	tf := realTerraform(t, reg.CertPEM(), "")
	bin := buildTfmirror(t)
	caDir := t.TempDir()
	ca := filepath.Join(caDir, "ca.pem")
	if err := os.WriteFile(ca, reg.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + ca, "SSL_CERT_DIR=" + caDir}

	config := func() string {
		dir := t.TempDir()
		var b strings.Builder
		b.WriteString("terraform {\n  required_providers {\n")
		for _, typ := range types {
			fmt.Fprintf(&b, "    %s = { source = %q, version = \"= 1.0.0\" }\n", typ, reg.Address("acme", typ))
		}
		b.WriteString("  }\n}\n")
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	locks := map[string]string{}
	dir := config()
	tf("-chdir="+dir, "providers", "lock", "-no-color", "-platform=linux_amd64", "-platform=darwin_arm64")
	locks["providers lock"] = filepath.Join(dir, lockfile.DefaultName)
	dir = config()
	tf("-chdir="+dir, "init", "-input=false", "-no-color", "-backend=false")
	locks["init"] = filepath.Join(dir, lockfile.DefaultName)

	mirror := func(plats []string, wrong string) string {
		dir := t.TempDir()
		for _, typ := range types {
			pkgDir := filepath.Join(dir, reg.Host(), "acme", typ)
			if err := os.MkdirAll(pkgDir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, plat := range plats {
				zip := zips[typ+" "+plat]
				if plat == wrong {
					zip = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/"+typ, "1.0.0", plat), "rebuilt")
				}
				name := fmt.Sprintf("terraform-provider-%s_1.0.0_%s.zip", typ, plat)
				if err := os.WriteFile(filepath.Join(pkgDir, name), zip, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		return dir
	}
	synced := filepath.Join(t.TempDir(), "synced")
	sync := exec.Command(bin, "sync", "registry://"+reg.Host(), synced, "-p", "acme/alpha", "-p", "acme/beta", "-v", "1.0.0", "--platform", "linux_amd64")
	sync.Env = append(os.Environ(), env...)
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("tfmirror sync: %v\n%s", err, out)
	}
	places := []struct{ name, dir string }{
		{"both platforms", mirror([]string{"linux_amd64", "darwin_arm64"}, "")},
		{"linux_amd64 only", mirror([]string{"linux_amd64"}, "")},
		{"darwin_arm64 not as locked", mirror([]string{"linux_amd64", "darwin_arm64"}, "darwin_arm64")},
		{"synced, with provenance", synced},
		// The origin itself, which states no h1: for its archives.
		{"the origin registry", "registry://" + reg.Host()},
	}
	assumedSeen := false
	for _, lockName := range []string{"providers lock", "init"} {
		lockPath := locks[lockName]
		lf, err := lockfile.Load(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, place := range places {
			for _, plats := range [][]string{nil, {"linux_amd64"}, {"windows_amd64"}} {
				t.Run(fmt.Sprintf("%s/%s/%v", lockName, place.name, plats), func(t *testing.T) {
					r, err := placeopen.Open(t.Context(), place.dir, placeopen.Options{HTTPClient: reg.Client()})
					if err != nil {
						t.Fatal(err)
					}
					cfg := Config{Mirrors: []Mirror{{Reader: r}}, Locks: &Locks{Files: []string{lockPath}}}
					for p, l := range lockcheck.LockedFromFile(lf, lockPath) {
						cfg.Locks.Entries = append(cfg.Locks.Entries, LockEntry{Provider: p, Locked: l})
					}
					for _, s := range plats {
						pl, _ := backends.ParsePlatform(s)
						cfg.Selection.Platforms = append(cfg.Selection.Platforms, pl)
					}
					h := newHarness(t, cfg, 120, 40)
					h.until("the lock's hashes tied", tied)
					uiCells, uiProviders, uiNotes := uiVerdicts(h)
					cliCells, cliProviders, cliNotes := cliVerdicts(t, bin, env, place.dir, lockPath, plats)
					if fmt.Sprint(uiProviders) != fmt.Sprint(cliProviders) {
						t.Errorf("per provider: the lock view says %v, check says %v", uiProviders, cliProviders)
					}
					if fmt.Sprint(uiCells) != fmt.Sprint(cliCells) {
						t.Errorf("per provider and platform: the lock view says %v, check says %v", uiCells, cliCells)
					}
					slices.Sort(uiNotes)
					slices.Sort(cliNotes)
					if !slices.Equal(uiNotes, cliNotes) {
						t.Errorf("assumed platforms: Details say %q, check says %q", uiNotes, cliNotes)
					}
					assumedSeen = assumedSeen || len(cliNotes) > 0
					t.Logf("%v", cliCells)
				})
			}
		}
	}
	if !assumedSeen {
		t.Error("no case had assumed platforms: the synced mirror should leave windows_amd64 assumed")
	}
}
