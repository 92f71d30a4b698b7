package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// Terraform 1.16 takes "_" in a provider namespace (HCP Terraform
// organisations have them) and OpenTofu 1.13 lists windows_arm64 as an
// official platform: a mirror holding both is listed, synced and locked
// like any other (issue 31, item 15).
func TestCLIUnderscoreNamespaceAndWindowsArm64(t *testing.T) {
	src := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"app.terraform.io/example_corp/kube"},
		[]string{"1.0.0"}, []string{"linux_amd64", "windows_arm64"})
	backendtest.WritePacked(t, src, seeds)

	r := run(t, nil, "ls", src, "--json")
	if r.code != 0 {
		t.Fatalf("ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rows []struct{ Provider, Platform string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, row := range rows {
		got = append(got, row.Provider+" "+row.Platform)
	}
	if strings.Join(got, ",") != "app.terraform.io/example_corp/kube linux_amd64,app.terraform.io/example_corp/kube windows_arm64" {
		t.Fatalf("ls lists %q\n%s", got, r.stderr)
	}

	dst := t.TempDir()
	r = run(t, nil, "sync", src, dst, "-p", "app.terraform.io/Example_Corp/kube", "--platform", "windows_arm64")
	if r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, "app.terraform.io/example_corp/kube/terraform-provider-kube_1.0.0_windows_arm64.zip")); err != nil {
		t.Fatalf("sync did not land the windows_arm64 package: %v\n%s", err, r.stdout)
	}

	tree := t.TempDir()
	main := "terraform {\n  required_providers {\n    kube = { source = \"app.terraform.io/example_corp/kube\" }\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(tree, "main.tf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, nil, "lock", src, "--from", tree, "--platform", "linux_amd64", "--platform", "windows_arm64")
	if r.code != 0 {
		t.Fatalf("lock --from: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lock, err := os.ReadFile(filepath.Join(tree, ".terraform.lock.hcl"))
	if err != nil || !strings.Contains(string(lock), `provider "app.terraform.io/example_corp/kube"`) || strings.Count(string(lock), `"zh:`) != 2 {
		t.Fatalf("lock file: %v\n%s", err, lock)
	}

	// The type keeps the old rule: it names resources and package files.
	r = run(t, nil, "ls", src, "-p", "example_corp/kube_x")
	if r.code != 2 || !strings.Contains(r.stderr, "kube_x") {
		t.Fatalf("an underscore in a type: %d\n%s", r.code, r.stderr)
	}
}

// `tfmirror config` refuses a host block OpenTofu's validation refuses, and
// names a TF_TOKEN_ variable as it was set: "--" in a name read from the
// environment is not "__" (issue 31, item 16).
func TestCLIConfigHostsAndTokenNames(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(cfg, []byte("host \"example..com\" {\n  services = {}\n}\nhost \"ok.example\" {\n  services = {}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + dir, "TF_CLI_CONFIG_FILE=" + cfg,
		"TF_TOKEN_xn--80ak6aa92e_com=s3cret", "TF_TOKEN_my__registry_example_org=s3cret"}
	r := run(t, env, "config")
	if r.code != 2 || !strings.Contains(r.stderr, "cli.tfrc:1:6") || !strings.Contains(r.stderr, `host "example..com": invalid hostname`) {
		t.Fatalf("config with host \"example..com\": %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"token for xn--80ak6aa92e.com from TF_TOKEN_xn--80ak6aa92e_com\n", "token for my-registry.example.org from TF_TOKEN_my__registry_example_org\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "xn____") {
		t.Errorf("config names a variable that was not set:\n%s", r.stdout)
	}

	r = run(t, env, "config", "--json")
	var out struct {
		Credentials []struct{ Host, Source string }
		Errors      []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 2 {
		t.Fatalf("config --json: %d %v\n%s", r.code, err, r.stdout)
	}
	found := false
	for _, c := range out.Credentials {
		found = found || c.Host == "xn--80ak6aa92e.com" && c.Source == "TF_TOKEN_xn--80ak6aa92e_com"
	}
	if !found || len(out.Errors) != 1 || !strings.Contains(out.Errors[0], "example..com") {
		t.Errorf("config --json: %+v", out)
	}

	// A good host block, or one OpenTofu reads otherwise, is not refused.
	if err := os.WriteFile(cfg, []byte("host \"ok.example\" {\n  services = {}\n}\nhost \"bücher.example\" {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, env, "config"); r.code != 0 {
		t.Errorf("config with good host blocks: %d\n%s", r.code, r.stderr)
	}
}
