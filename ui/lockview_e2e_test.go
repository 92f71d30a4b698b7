package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// realTerraform runs the real terraform in an isolated environment that
// trusts the test registry's CA; it skips the test where terraform is not
// installed.
func realTerraform(t *testing.T, caPEM []byte, cliConfig string) func(args ...string) string {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH: skipping the test against the real client")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ca.pem"), caPEM, 0o644)
	os.WriteFile(filepath.Join(dir, "cli.tfrc"), []byte(cliConfig), 0o644)
	os.MkdirAll(filepath.Join(dir, "home"), 0o755)
	env := append(os.Environ(), "SSL_CERT_FILE="+filepath.Join(dir, "ca.pem"), "SSL_CERT_DIR="+dir, "HOME="+filepath.Join(dir, "home"),
		"TF_CLI_CONFIG_FILE="+filepath.Join(dir, "cli.tfrc"), "TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tf, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// TestEndToEndLockGaps is the lock job as a user does it: a lock written by
// the real `terraform providers lock -platform=linux_amd64
// -platform=darwin_arm64` from an origin registry whose SHA256SUMS also
// lists the release's manifest, and a filesystem mirror holding only the
// linux_amd64 package. The UI shows the gaps the lock covers (the
// registry's signed SHA256SUMS ties windows_amd64's zh: too), L queues them
// from the registry, they land; then check --lock passes and `terraform
// init -lockfile=readonly` installs from the mirror.
func TestEndToEndLockGaps(t *testing.T) {
	plats := []string{"darwin_arm64", "linux_amd64", "windows_amd64"}
	here := runtime.GOOS + "_" + runtime.GOARCH
	if here != "linux_amd64" {
		t.Skipf("this test installs the linux_amd64 package on this machine (%s)", here)
	}
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range plats {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	reg := registrytest.NewWithOptions(t, registrytest.Options{ManifestLine: true},
		registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	mirrorDir := filepath.Join(t.TempDir(), "mirror")
	tf := realTerraform(t, reg.CertPEM(), fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirrorDir))

	// The team's configuration, locked by terraform from the registry (the
	// lock is written before the CLI configuration points at the mirror:
	// `providers lock` asks the origin registry unless told otherwise).
	cfgDir := t.TempDir()
	os.WriteFile(filepath.Join(cfgDir, "main.tf"), []byte(fmt.Sprintf(
		"terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", reg.Address("acme", "alpha"))), 0o644)
	tfLock := realTerraform(t, reg.CertPEM(), "")
	tfLock("-chdir="+cfgDir, "providers", "lock", "-no-color", "-platform=linux_amd64", "-platform=darwin_arm64")
	lockPath := filepath.Join(cfgDir, ".terraform.lock.hcl")
	lf, err := lockfile.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	locked := lockcheck.LockedFromFile(lf, lockPath)

	// The mirror holds the registry's linux_amd64 zip.
	pkgDir := filepath.Join(mirrorDir, reg.Host(), "acme", "alpha")
	os.MkdirAll(pkgDir, 0o755)
	os.WriteFile(filepath.Join(pkgDir, "terraform-provider-alpha_1.0.0_linux_amd64.zip"), ver.Archives["linux_amd64"], 0o644)
	mirror, err := fs.Open("./mirror", mirrorDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := placeopen.Open(t.Context(), "registry://"+reg.Host(), placeopen.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	locks := &Locks{Files: []string{lockPath}}
	for p, l := range locked {
		locks.Entries = append(locks.Entries, LockEntry{Provider: p, Locked: l})
	}
	// check, told of the registry, names what the UI will show as gaps.
	before, err := lockcheck.CheckLock(t.Context(), mirror, locked, lockcheck.CheckOptions{Kind: placeopen.FS, TieWith: []backends.Reader{src}})
	if err != nil || !failsOn(before, "darwin_arm64") || !failsOn(before, "windows_amd64") {
		t.Fatalf("check before: %v %+v", err, before)
	}

	cfg := Config{Mirrors: []Mirror{{Reader: mirror, Kind: "fs"}, {Reader: src, Kind: "registry"}}, Locks: locks}
	tm, waitFor, press := newProgram(t, cfg)
	waitFor("acme/alpha", "1.0.0 2 missing", "darwin_arm64", "windows_amd64", "untied locked hashes: 1", listed)
	press("L")
	waitFor("2 package(s) missing or differing of 1 lock file from [2] registry://", "2 to copy: 2 from [2] registry://")
	press("enter")
	waitFor("2 done", "1.0.0 ok")
	// C completes the lock: windows_amd64, which it covers by the signed
	// zh: alone, gains its h1:.
	waitFor("complete for 2 of 3 platforms")
	press("C")
	waitFor("Add 1 hash to 1 lock file?", "windows_amd64 from [")
	press("enter")
	waitFor("1 hash added to ", "complete for 3 of 3 platforms")
	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(e2eWait)).(Model)
	if c := final.jobs.Tracker().Counts(); c[engine.Done] != 2 {
		t.Fatalf("jobs %v", c)
	}

	again, err := fs.Open("./mirror", mirrorDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := lockcheck.CheckLock(t.Context(), again, locked, lockcheck.CheckOptions{Kind: placeopen.FS})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range after {
		if f.Status != sync.StatusOK {
			t.Errorf("check after: %s %s %s", f.Package, f.Status, f.Detail)
		}
	}
	// terraform providers lock for the three platforms writes the same
	// hashes as C did: its h1: of windows_amd64 is terraform's.
	tfDir := t.TempDir()
	os.WriteFile(filepath.Join(tfDir, "main.tf"), []byte(fmt.Sprintf(
		"terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", reg.Address("acme", "alpha"))), 0o644)
	tfLock("-chdir="+tfDir, "providers", "lock", "-no-color", "-platform=linux_amd64", "-platform=darwin_arm64", "-platform=windows_amd64")
	byC, err := lockfile.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	byTF, err := lockfile.Load(filepath.Join(tfDir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for p, l := range lockcheck.LockedFromFile(byTF, "terraform") {
		c, ok := byC.Provider(p)
		if !ok || fmt.Sprint(c.Hashes) != fmt.Sprint(l.Hashes) {
			t.Errorf("%s: C locked %v, terraform providers lock %v", p, c.Hashes, l.Hashes)
		}
	}
	out := tf("-chdir="+cfgDir, "init", "-input=false", "-no-color", "-lockfile=readonly")
	if !strings.Contains(out, "Installed "+reg.Address("acme", "alpha")+" v1.0.0") {
		t.Errorf("init did not install from the mirror:\n%s", out)
	}
}

// failsOn reports whether a check finding about plat is not ok.
func failsOn(fs []sync.Finding, plat string) bool {
	for _, f := range fs {
		if f.Package.Platform.String() == plat && f.Status != sync.StatusOK {
			return true
		}
	}
	return false
}
