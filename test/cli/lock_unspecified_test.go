package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// A filesystem mirror holding version 0.0.0 (the shape of OpenTofu's own
// fixture, filesystem-mirror-unspecified), which OpenTofu refuses to
// install: ls warns in OpenTofu's words, lock does not lock it, sync does not
// copy it, and a released version beside it is what lock picks.
func TestCLIUnspecifiedVersion(t *testing.T) {
	mirror := t.TempDir()
	pkgDir := filepath.Join(mirror, "registry.opentofu.org", "testnamespace", "unspecified", "0.0.0", "linux_amd64")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, pkgDir, "unspecified-provider", "#!/bin/sh\n")
	backendtest.WritePacked(t, mirror, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"0.0.0", "1.0.0"}, []string{"linux_amd64"}))
	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, t.TempDir(), "empty.tfrc", "")}

	r := run(t, env, "ls", mirror)
	if r.code != 0 {
		t.Fatalf("ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, p := range []string{"registry.opentofu.org/testnamespace/unspecified", "example.com/acme/alpha"} {
		want := "warning: Provider " + p + " has an unspecified (0.0.0) version available in the filesystem mirror, source at " + mirror + ". It will not be used."
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ls stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "0.0.0") || !strings.Contains(r.stdout, "1.0.0") {
		t.Errorf("ls lists 0.0.0 as a package, or not 1.0.0:\n%s", r.stdout)
	}

	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	r = run(t, env, "lock", mirror, "--lock", lock, "-p", "registry.opentofu.org/testnamespace/unspecified", "--platform", "linux_amd64")
	if r.code != 1 || !strings.Contains(r.stdout, "0.0.0 is OpenTofu's unspecified version") {
		t.Errorf("lock of a provider that has only 0.0.0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("lock file written: %v", err)
	}
	r = run(t, env, "lock", mirror, "--lock", lock, "-p", "example.com/acme/alpha", "--platform", "linux_amd64")
	b, _ := os.ReadFile(lock)
	if r.code != 0 || !strings.Contains(string(b), `version = "1.0.0"`) || strings.Contains(string(b), "0.0.0") {
		t.Errorf("lock: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, b)
	}

	dst := filepath.Join(t.TempDir(), "dst")
	r = run(t, env, "sync", mirror, dst)
	if r.code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(filepath.Base(p), "0.0.0") {
			t.Errorf("sync copied %s", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dst, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip")); err != nil {
		t.Errorf("sync did not copy 1.0.0: %v", err)
	}
}
