package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

var lockPlatforms = []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}

// lockMirror is a packed filesystem mirror of two providers on a hostname
// (example.com, never contacted), two versions, four platforms; each zip
// holds an executable terraform-provider-TYPE_vVERSION script.
func lockMirror(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mirror")
	backendtest.WritePacked(t, dir, backendtest.Seeds(t,
		[]string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0", "1.2.0"}, lockPlatforms))
	return dir
}

func mirrorZip(dir, typ, version, platform string) string {
	return filepath.Join(dir, "example.com", "acme", typ, fmt.Sprintf("terraform-provider-%s_%s_%s.zip", typ, version, platform))
}

const lockConfig = `terraform {
  required_providers {
    alpha = {
      source  = "example.com/acme/alpha"
      version = ">= 1.0, < 2.0"
    }
    beta = {
      source  = "example.com/acme/beta"
      version = "~> 1.2"
    }
  }
}
`

func platformArgs(flag string, plats []string) []string {
	var out []string
	for _, p := range plats {
		out = append(out, flag+p)
	}
	return out
}

// The lock file tfmirror writes holds every hash `terraform providers lock
// -fs-mirror` writes for the same mirror (h1: only) plus each zip's zh:, in
// the same format, with the constraints kept; and terraform init accepts it
// from a filesystem_mirror-only configuration and leaves it as it is.
func TestTerraformLockMatchesProvidersLock(t *testing.T) {
	mirror := lockMirror(t)
	tf, env := terraformEnv(t, nil, fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror))
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(lockConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-chdir=" + cfg, "providers", "lock", "-no-color", "-fs-mirror=" + mirror}, platformArgs("-platform=", lockPlatforms)...)
	runTerraform(t, tf, env, args...)
	lockPath := filepath.Join(cfg, ".terraform.lock.hcl")
	byTerraform, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}

	// tfmirror lock on Terraform's file adds only the zh: hashes.
	r := run(t, env, append([]string{"lock", mirror, "--lock", lockPath}, platformArgs("--platform=", lockPlatforms)...)...)
	if r.code != 0 {
		t.Fatalf("lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	byTfmirror, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	var withoutZH []string
	zhs := map[string]bool{}
	for _, line := range strings.SplitAfter(string(byTfmirror), "\n") {
		if strings.HasPrefix(line, `    "zh:`) {
			zhs[strings.Trim(strings.TrimSpace(line), `",`)] = true
			continue
		}
		withoutZH = append(withoutZH, line)
	}
	if got := strings.Join(withoutZH, ""); got != string(byTerraform) {
		t.Errorf("without its zh: lines, tfmirror's file differs from terraform's:\n--- tfmirror\n%s\n--- terraform\n%s", got, byTerraform)
	}
	if len(zhs) != 8 {
		t.Errorf("%d zh: hashes, want one per zip (8):\n%s", len(zhs), byTfmirror)
	}
	for _, typ := range []string{"alpha", "beta"} {
		for _, plat := range lockPlatforms {
			zh, err := hashing.ZipZH(mirrorZip(mirror, typ, "1.2.0", plat))
			if err != nil {
				t.Fatal(err)
			}
			if !zhs[string(zh)] {
				t.Errorf("%s %s: %s missing", typ, plat, zh)
			}
		}
	}
	if fi, err := os.Stat(lockPath); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode: %v %v", fi.Mode(), err)
	}

	// The same file written from scratch by tfmirror (no lock yet, providers
	// named) has the same hashes; init then adds the configuration's
	// constraints and nothing else.
	fresh := t.TempDir()
	os.WriteFile(filepath.Join(fresh, "main.tf"), []byte(lockConfig), 0o644)
	freshLock := filepath.Join(fresh, ".terraform.lock.hcl")
	r = run(t, env, append([]string{"lock", mirror, "--lock", freshLock, "-p", "acme/alpha", "-p", "example.com/acme/beta"}, platformArgs("--platform=", lockPlatforms)...)...)
	if r.code != 0 {
		t.Fatalf("lock from scratch: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	scratch, _ := os.ReadFile(freshLock)
	stripConstraints := func(s string) string {
		var keep []string
		for _, line := range strings.SplitAfter(s, "\n") {
			if !strings.HasPrefix(line, "  constraints") {
				keep = append(keep, strings.Replace(line, "version     =", "version =", 1))
			}
		}
		return strings.Join(keep, "")
	}
	if stripConstraints(string(scratch)) != stripConstraints(string(byTfmirror)) {
		t.Errorf("from scratch:\n%s\nupdated:\n%s", scratch, byTfmirror)
	}

	// terraform init accepts the file from the filesystem mirror and keeps
	// it byte for byte.
	out := runTerraform(t, tf, env, "-chdir="+cfg, "init", "-input=false", "-no-color")
	for _, want := range []string{"Installed example.com/acme/alpha v1.2.0", "Installed example.com/acme/beta v1.2.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	afterInit, _ := os.ReadFile(lockPath)
	if string(afterInit) != string(byTfmirror) {
		t.Errorf("terraform init rewrote the file:\n--- before\n%s\n--- after\n%s", byTfmirror, afterInit)
	}
	if r := run(t, env, "check", mirror, "--lock", lockPath); r.code != 0 {
		t.Errorf("check: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// And init fails where check says it would: a swapped zip.
	swapped := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.2.0", "linux_amd64"), "rebuilt")
	if err := os.WriteFile(mirrorZip(mirror, "alpha", "1.2.0", "linux_amd64"), swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, env, "check", mirror, "--lock", lockPath, "--platform", "linux_amd64")
	if r.code != 1 || !strings.Contains(r.stdout, "checksum error") {
		t.Errorf("check after swap: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	os.RemoveAll(filepath.Join(cfg, ".terraform"))
	cmd := []string{"-chdir=" + cfg, "init", "-input=false", "-no-color"}
	if out, err := runTerraformErr(tf, env, cmd...); err == nil || !strings.Contains(out, "checksum") {
		t.Errorf("terraform init accepted the swapped zip (err %v):\n%s", err, out)
	}
}

func TestCLICheck(t *testing.T) {
	mirror := lockMirror(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "team.lock.hcl")
	r := run(t, nil, append([]string{"lock", mirror, "--lock", lockPath, "-p", "acme/alpha", "-p", "acme/beta", "-v", "1.0.0"}, platformArgs("--platform=", lockPlatforms)...)...)
	if r.code != 0 {
		t.Fatalf("lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "example.com/acme/alpha 1.0.0 (new)") || !strings.Contains(r.stderr, "16 hashes added for 2 providers") {
		t.Errorf("lock output:\n%s%s", r.stdout, r.stderr)
	}
	r = run(t, nil, "check", mirror, "--lock", lockPath, "--json")
	if r.code != 0 {
		t.Fatalf("check: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rows []struct{ Provider, Version, Platform, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 8 {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	for _, row := range rows {
		if row.Version != "1.0.0" || row.Status != "ok" || row.Provider == "" || row.Platform == "" {
			t.Errorf("row %+v", row)
		}
	}

	os.Remove(mirrorZip(mirror, "beta", "1.0.0", "darwin_arm64"))
	// The mirror alone cannot tie the gone package's locked hashes to its
	// platform: init fails on some platform; named, it is that one.
	r = run(t, nil, "check", mirror, "--lock", lockPath, "-p", "acme/beta")
	if r.code != 1 || !strings.Contains(r.stdout, "missing") || !strings.Contains(r.stdout, "init on some platform would fail") || strings.Contains(r.stdout, "acme/alpha") {
		t.Errorf("missing platform: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "check", mirror, "--lock", lockPath, "-p", "acme/beta", "--platform", "darwin_arm64")
	if r.code != 1 || !strings.Contains(r.stdout, "init on darwin_arm64 would fail") {
		t.Errorf("missing platform named: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no lock", []string{"check", mirror}, "needs --lock"},
		{"version", []string{"check", mirror, "--lock", lockPath, "-v", "1.0.0"}, "--version does not apply"},
		{"missing lock file", []string{"check", mirror, "--lock", filepath.Join(dir, "nope.hcl")}, "no such file"},
		{"malformed lock", []string{"check", mirror, "--lock", writeFile(t, dir, "bad.hcl", "provider \"example.com/a/b\" {\n  version = \"1.0\"\n}\n")}, "bad.hcl:2:13"},
		{"new lock without platform", []string{"lock", mirror, "--lock", filepath.Join(dir, "new.hcl")}, "needs --platform"},
		{"lock nothing, no catalogue", []string{"lock", "https://127.0.0.1:1/m/", "--lock", filepath.Join(dir, "new.hcl"), "--platform", "linux_amd64"}, "name the providers to lock with --provider"},
		{"lock bad header", []string{"lock", mirror, "--lock", lockPath, "--platform", "linux_amd64", "--header", "pulumi"}, "--header"},
		{"ls malformed lock", []string{"ls", mirror, "--lock", filepath.Join(dir, "bad.hcl")}, "Invalid provider version number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%v: exit %d, want 2 with %q\n%s%s", tc.args, r.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCLILockAllOrNothing(t *testing.T) {
	mirror := lockMirror(t)
	lockPath := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	os.Remove(mirrorZip(mirror, "beta", "1.2.0", "windows_amd64"))
	r := run(t, nil, "lock", mirror, "--lock", lockPath, "-p", "acme/alpha", "-p", "acme/beta", "--platform", "linux_amd64", "--platform", "windows_amd64")
	if r.code != 1 || !strings.Contains(r.stdout, "example.com/acme/beta") || !strings.Contains(r.stderr, "not changed") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Errorf("lock file written despite a missing package: %v", err)
	}
	// In the current directory by default, with OpenTofu's header on request.
	wd := t.TempDir()
	r = runIn(t, wd, "lock", mirror, "-p", "acme/alpha", "--platform", "linux_amd64", "--header", "tofu", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "dry run") {
		t.Fatalf("dry run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, ".terraform.lock.hcl")); !os.IsNotExist(err) {
		t.Error("dry run wrote the file")
	}
	r = runIn(t, wd, "lock", mirror, "-p", "acme/alpha", "--platform", "linux_amd64", "--header", "tofu")
	b, err := os.ReadFile(filepath.Join(wd, ".terraform.lock.hcl"))
	if r.code != 0 || err != nil || !strings.HasPrefix(string(b), "# This file is maintained automatically by \"tofu init\".\n") {
		t.Errorf("exit %d %v\n%s%s\n%s", r.code, err, r.stdout, r.stderr, b)
	}
}

// runIn runs the binary in dir.
func runIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	return run(t, nil, args...)
}

// --lock on sync: exactly the locked versions, each archive also checked
// against the locked hashes.
func TestCLISyncWithLock(t *testing.T) {
	mirror := lockMirror(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "l.hcl")
	r := run(t, nil, "lock", mirror, "--lock", lockPath, "-p", "acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64")
	if r.code != 0 {
		t.Fatalf("lock: %s%s", r.stdout, r.stderr)
	}
	dst := filepath.Join(dir, "dst")
	r = run(t, nil, "sync", mirror, dst, "--lock", lockPath, "--platform", "linux_amd64", "--platform", "darwin_arm64")
	if r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ls := run(t, nil, "ls", dst, "--json")
	var rows []struct{ Provider, Version, Platform string }
	if err := json.Unmarshal([]byte(ls.stdout), &rows); err != nil {
		t.Fatalf("decoding ls.stdout: %v\n%s", err, ls.stdout)
	}
	if len(rows) != 2 {
		t.Fatalf("dst holds %d packages, want alpha 1.0.0 for 2 platforms: %s", len(rows), ls.stdout)
	}
	for _, row := range rows {
		if row.Provider != "example.com/acme/alpha" || row.Version != "1.0.0" {
			t.Errorf("unlocked package synced: %+v", row)
		}
	}
	// A source zip that matches no locked hash is refused.
	swapped := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "windows_amd64"), "other")
	os.WriteFile(mirrorZip(mirror, "alpha", "1.0.0", "windows_amd64"), swapped, 0o644)
	r = run(t, nil, "sync", mirror, filepath.Join(dir, "dst2"), "--lock", lockPath, "--platform", "windows_amd64")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "lock file") {
		t.Errorf("sync of an archive the lock does not vouch for: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestCLIConfig(t *testing.T) {
	home := t.TempDir()
	mirror := lockMirror(t)
	writeFile(t, home, ".terraformrc", fmt.Sprintf(`provider_installation {
  filesystem_mirror {
    path    = %q
    include = ["example.com/*/*"]
  }
  network_mirror {
    url = "https://mirror.example.com/tf/"
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}

credentials "mirror.example.com" {
  token = "very-secret-token"
}
`, mirror))
	env := []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=", "TERRAFORM_CONFIG=", "XDG_CONFIG_HOME=", "TF_TOKEN_registry_example_com=env-secret"}
	r := run(t, env, "config")
	if r.code != 0 {
		t.Fatalf("config: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{".terraformrc (read by terraform, tofu)", mirror, "filesystem_mirror", "https://mirror.example.com/tf/", "example.com/*/*",
		"token for mirror.example.com from " + filepath.Join(home, ".terraformrc"), "token for registry.example.com from TF_TOKEN_registry_example_com", "direct installation"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "secret") {
		t.Errorf("a token was printed:\n%s", r.stdout)
	}
	r = run(t, env, "config", "--json")
	var out struct {
		Files   []struct{ Path string }
		Mirrors []struct{ Kind, Place string }
		Errors  []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("%v %d: %s", err, r.code, r.stdout)
	}
	if len(out.Mirrors) != 2 || out.Mirrors[0].Place != mirror || out.Mirrors[1].Kind != "network_mirror" {
		t.Errorf("mirrors: %+v", out.Mirrors)
	}
	// A mirror from the configuration is a place the other commands take.
	if r := run(t, env, "ls", out.Mirrors[0].Place, "-p", "acme/alpha", "--platform", "linux_amd64"); r.code != 0 || !strings.Contains(r.stdout, "1.2.0") {
		t.Errorf("ls of the configured mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	bad := writeFile(t, t.TempDir(), "bad.tfrc", "provider_installation {\n  network_mirror {\n    url = \"http://insecure.example/\"\n  }\n}\n")
	r = run(t, []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + bad}, "config")
	if r.code != 2 || !strings.Contains(r.stderr, "bad.tfrc:3:11") || !strings.Contains(r.stderr, "https") {
		t.Errorf("malformed config: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// runTerraformErr runs terraform and returns its output and error, for runs
// that are meant to fail.
func runTerraformErr(tf string, env []string, args ...string) (string, error) {
	cmd := exec.Command(tf, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// check knows an oci:// place is installed from by OpenTofu's oci_mirror,
// which needs the layers' zh: in the lock; lock adds them.
func TestCLICheckOCI(t *testing.T) {
	mirror := lockMirror(t)
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	dst := "oci://" + reg.Host() + "/tf/${hostname}/${namespace}/${type}"
	if r := run(t, nil, "sync", mirror, dst, "--plain-http", "-p", "acme/alpha", "-v", "1.2.0", "--platform", "linux_amd64"); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sums, err := hashing.HashPath(mirrorZip(mirror, "alpha", "1.2.0", "linux_amd64"), hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// What Terraform's providers lock -fs-mirror writes: h1: only.
	lockPath := writeFile(t, t.TempDir(), "l.hcl", fmt.Sprintf(`# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "example.com/acme/alpha" {
  version = "1.2.0"
  hashes = [
    %q,
  ]
}
`, sums.H1))
	r := run(t, nil, "check", dst, "--plain-http", "--lock", lockPath, "--json")
	var rows []struct{ Platform, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s%s", err, r.stdout, r.stderr)
	}
	if r.code != 1 || len(rows) != 1 || rows[0].Status != "mismatch" || !strings.Contains(rows[0].Detail, "only h1:") {
		t.Fatalf("h1-only lock against OCI: %d %+v\n%s", r.code, rows, r.stderr)
	}
	// The same lock is fine against the filesystem mirror it came from.
	if r := run(t, nil, "check", mirror, "--lock", lockPath, "--platform", "linux_amd64"); r.code != 0 {
		t.Errorf("fs check: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "lock", dst, "--plain-http", "--lock", lockPath, "--platform", "linux_amd64")
	if r.code != 0 || !strings.Contains(r.stdout, "+ "+string(sums.ZH)) {
		t.Fatalf("lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The lock already held linux_amd64's h1:: no warning that OCI states
	// only the zh:. A new lock from OCI gets none, and is warned.
	if strings.Contains(r.stderr, "no h1:") {
		t.Errorf("lock warned of a missing h1: the lock holds:\n%s", r.stderr)
	}
	fresh := filepath.Join(t.TempDir(), "fresh.hcl")
	r = run(t, nil, "lock", dst, "--plain-http", "--lock", fresh, "-p", "example.com/acme/alpha", "--platform", "linux_amd64", "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: example.com/acme/alpha 1.2.0: no h1: recorded for linux_amd64") || !strings.Contains(r.stdout, `"no_h1":["linux_amd64"]`) {
		t.Errorf("lock of a new file from OCI: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "check", dst, "--plain-http", "--lock", lockPath); r.code != 0 {
		t.Errorf("check after lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// lock with no lock file yet and no --provider locks every provider the
// mirror holds: the first example of lock --help, as a newcomer runs it.
func TestCLILockNewFile(t *testing.T) {
	mirror := lockMirror(t)
	wd := t.TempDir()
	r := runIn(t, wd, "lock", mirror, "--platform", "linux_amd64")
	b, err := os.ReadFile(filepath.Join(wd, ".terraform.lock.hcl"))
	if r.code != 0 || err != nil {
		t.Fatalf("exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	for _, want := range []string{`provider "example.com/acme/alpha"`, `provider "example.com/acme/beta"`, "h1:", "zh:"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the new lock file lacks %s:\n%s", want, b)
		}
	}
	// An empty but valid lock file is not a usage error for check.
	empty := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	os.WriteFile(empty, []byte("# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n"), 0o644)
	r = run(t, nil, "check", mirror, "--lock", empty)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing to check") {
		t.Errorf("check with an empty lock file: exit %d\n%s", r.code, r.stderr)
	}
}
