package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// terraformEnv is an isolated environment for the real terraform binary: its
// own HOME and CLI config, trusting only the test CA. It skips the test when
// terraform is not installed.
func terraformEnv(t *testing.T, caPEM []byte, cliConfig string) (string, []string) {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH: skipping the test against the real client")
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, caPEM, 0o644)
	cfg := filepath.Join(dir, "cli.tfrc")
	os.WriteFile(cfg, []byte(cliConfig), 0o644)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	env := []string{"SSL_CERT_FILE=" + ca, "SSL_CERT_DIR=" + dir, "HOME=" + home, "TF_CLI_CONFIG_FILE=" + cfg,
		"TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
	return tf, env
}

func runTerraform(t *testing.T, tf string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tf, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// testRegistry serves acme/alpha 1.0.0 and 1.1.0 for two platforms over TLS.
func testRegistry(t *testing.T) *registrytest.Server {
	t.Helper()
	var versions []registrytest.Version
	for _, v := range []string{"1.0.0", "1.1.0"} {
		ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
		for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
			ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, plat), "")
		}
		versions = append(versions, ver)
	}
	return registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: versions})
}

// A mirror written by `terraform providers mirror` is listed completely by
// `tfmirror ls --json`, and `tfmirror hash` gives for each zip the exact h1:
// Terraform wrote in its <version>.json.
func TestTerraformProvidersMirrorIsReadExactly(t *testing.T) {
	reg := testRegistry(t)
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	addr := reg.Host() + "/acme/alpha"
	mirror := t.TempDir()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		cfg := t.TempDir()
		os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(fmt.Sprintf(
			"terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= %s\" }\n  }\n}\n", addr, v)), 0o644)
		runTerraform(t, tf, env, "-chdir="+cfg, "providers", "mirror", "-platform=linux_amd64", "-platform=darwin_arm64", mirror)
	}

	r := run(t, nil, "ls", mirror, "--json")
	if r.code != 0 {
		t.Fatalf("ls: %d %s", r.code, r.stderr)
	}
	var rows []struct {
		Provider, Version, Platform string
		Hashes                      []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("decoding r.stdout: %v\n%s", err, r.stdout)
	}
	if len(rows) != 4 {
		t.Fatalf("ls listed %d packages, want 4:\n%s", len(rows), r.stdout)
	}
	pdir := filepath.Join(mirror, reg.Host(), "acme", "alpha")
	for _, row := range rows {
		if row.Provider != addr {
			t.Errorf("provider %q, want %q", row.Provider, addr)
		}
		// What terraform wrote for this package.
		var doc struct {
			Archives map[string]struct {
				Hashes []string
				URL    string
			}
		}
		b, err := os.ReadFile(filepath.Join(pdir, row.Version+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("decoding b: %v", err)
		}
		want := doc.Archives[row.Platform]
		if fmt.Sprint(row.Hashes) != fmt.Sprint(sortedCopy(want.Hashes)) {
			t.Errorf("%s %s: ls hashes %v, terraform wrote %v", row.Version, row.Platform, row.Hashes, want.Hashes)
		}
		h := run(t, nil, "hash", filepath.Join(pdir, want.URL), "--json")
		var hs []struct{ H1, ZH string }
		if err := json.Unmarshal([]byte(h.stdout), &hs); err != nil {
			t.Fatalf("decoding h.stdout: %v\n%s", err, h.stdout)
		}
		var twH1 string
		for _, x := range want.Hashes {
			if strings.HasPrefix(x, "h1:") {
				twH1 = x
			}
		}
		if len(hs) != 1 || twH1 == "" || hs[0].H1 != twH1 {
			t.Errorf("%s %s: tfmirror hash %v, terraform wrote %s", row.Version, row.Platform, hs, twH1)
		}
	}
	if r := run(t, nil, "verify", mirror); r.code != 0 {
		t.Fatalf("verify a terraform-written mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// Registry -> filesystem mirror with tfmirror sync, then `terraform init`
// installs from the result through filesystem_mirror, and records the h1:
// tfmirror lists for the installed package.
func TestTerraformInitFromSyncedMirror(t *testing.T) {
	reg := testRegistry(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	tf, env := terraformEnv(t, reg.CertPEM(), fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror))
	r := run(t, env, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", "1.1.0", "--platform", "linux_amd64", "--platform", "darwin_arm64")
	if r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "verify", mirror); r.code != 0 {
		t.Fatalf("verify: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cfg := t.TempDir()
	os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(fmt.Sprintf(
		"terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.1.0\" }\n  }\n}\n", reg.Host()+"/acme/alpha")), 0o644)
	out := runTerraform(t, tf, env, "-chdir="+cfg, "init", "-input=false", "-no-color")
	if !strings.Contains(out, "Installed "+reg.Host()+"/acme/alpha v1.1.0") {
		t.Fatalf("init did not install from the mirror:\n%s", out)
	}
	lock, _ := os.ReadFile(filepath.Join(cfg, ".terraform.lock.hcl"))
	ls := run(t, env, "ls", mirror, "--json", "--platform", "linux_amd64")
	var rows []struct{ Hashes []string }
	if err := json.Unmarshal([]byte(ls.stdout), &rows); err != nil {
		t.Fatalf("decoding ls.stdout: %v\n%s", err, ls.stdout)
	}
	if len(rows) != 1 {
		t.Fatalf("ls: %s", ls.stdout)
	}
	for _, h := range rows[0].Hashes {
		if strings.HasPrefix(h, "h1:") && !strings.Contains(string(lock), h) {
			t.Errorf("terraform recorded a different h1: than tfmirror lists (%s):\n%s", h, lock)
		}
	}
}

// After prune, `terraform init` installs a kept version from the
// filesystem mirror, and finds no trace of the removed one.
func TestTerraformInitAfterPrune(t *testing.T) {
	reg := testRegistry(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	tf, env := terraformEnv(t, reg.CertPEM(), fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror))
	addr := reg.Host() + "/acme/alpha"
	r := run(t, env, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", ">= 1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64")
	if r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "prune", mirror, "--keep", "1", "--yes"); r.code != 0 || !strings.Contains(r.stderr, "2 removed") {
		t.Fatalf("prune: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	initWith := func(version string) (string, error) {
		cfg := t.TempDir()
		os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(fmt.Sprintf(
			"terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= %s\" }\n  }\n}\n", addr, version)), 0o644)
		cmd := exec.Command(tf, "-chdir="+cfg, "init", "-input=false", "-no-color")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := initWith("1.1.0"); err != nil || !strings.Contains(out, "Installed "+addr+" v1.1.0") {
		t.Fatalf("init of the kept version: %v\n%s", err, out)
	}
	if out, err := initWith("1.0.0"); err == nil || !strings.Contains(out, "no available releases match") {
		t.Fatalf("init of the removed version succeeded or said nothing of it: %v\n%s", err, out)
	}
}
