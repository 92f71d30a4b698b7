package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// manifestRegistry serves acme/alpha 1.0.0 for three platforms, with a
// SHA256SUMS that also lists terraform-provider-alpha_1.0.0_manifest.json,
// as HashiCorp's releases do.
func manifestRegistry(t *testing.T) *registrytest.Server {
	t.Helper()
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	return registrytest.NewWithOptions(t, registrytest.Options{ManifestLine: true},
		registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
}

// realLock writes a configuration requiring acme/alpha 1.0.0 from reg and
// locks it with the real `terraform providers lock` for the platforms;
// it returns the lock file.
func realLock(t *testing.T, reg *registrytest.Server, tf string, env []string, plats ...string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", reg.Host()+"/acme/alpha"))
	args := []string{"-chdir=" + dir, "providers", "lock", "-no-color"}
	for _, p := range plats {
		args = append(args, "-platform="+p)
	}
	runTerraform(t, tf, env, args...)
	lock := filepath.Join(dir, ".terraform.lock.hcl")
	b, _ := os.ReadFile(lock)
	// Two h1: (the platforms asked for) and a zh: for each line of the
	// signed SHA256SUMS: three zips and the manifest.
	if hs := lockHashes(t, lock); len(hs) != len(plats)+4 {
		t.Fatalf("terraform providers lock wrote %d hashes, want %d:\n%s", len(hs), len(plats)+4, b)
	}
	return lock
}

// `check` of a lock written by the real `terraform providers lock` from a
// registry whose SHA256SUMS lists a manifest (every HashiCorp release): a
// mirror holding every platform passes, however it was written (by
// `terraform providers mirror`, which keeps no provenance, or by tfmirror
// sync, which keeps the signed SHA256SUMS), filesystem or OCI; the
// manifest's zh: is reported as tied to no package. A mirror that lacks a
// platform fails, naming it: the kept signed SHA256SUMS ties the platform's
// zh: to its package. (Before, every such check failed: "1 of the 6 hashes
// ... match no archive".)
func TestCheckRealLockWithManifestLine(t *testing.T) {
	reg := manifestRegistry(t)
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	lock := realLock(t, reg, tf, env, "linux_amd64", "darwin_arm64")
	manifest := registrytest.ManifestName("alpha", "1.0.0")
	all := []string{"--platform", "linux_amd64", "--platform", "darwin_arm64", "--platform", "windows_amd64"}

	check := func(t *testing.T, mirror string, wantCode int, want ...string) {
		t.Helper()
		r := run(t, env, "check", mirror, "--lock", lock, "--plain-http")
		if r.code != wantCode {
			t.Fatalf("check %s: exit %d, want %d\n%s%s", mirror, r.code, wantCode, r.stdout, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("check %s: output lacks %q:\n%s", mirror, w, r.stdout)
			}
		}
	}

	t.Run("terraform providers mirror", func(t *testing.T) {
		mirror := t.TempDir()
		args := []string{"-chdir=" + filepath.Dir(lock), "providers", "mirror"}
		for _, p := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
			args = append(args, "-platform="+p)
		}
		runTerraform(t, tf, env, append(args, mirror)...)
		check(t, mirror, 0, "tied to no package")
		// Without the platform an h1: was locked for, init there fails;
		// with no signed SHA256SUMS kept, which platform cannot be told.
		os.Remove(filepath.Join(mirror, reg.Host(), "acme", "alpha", "terraform-provider-alpha_1.0.0_darwin_arm64.zip"))
		check(t, mirror, 1, "init on some platform would fail")
	})
	t.Run("filesystem, synced", func(t *testing.T) {
		mirror := filepath.Join(t.TempDir(), "m")
		if r := run(t, env, append([]string{"sync", "registry://" + reg.Host(), mirror, "-p", "acme/alpha", "-v", "1.0.0"}, all...)...); r.code != 0 {
			t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		check(t, mirror, 0, manifest)
		half := filepath.Join(t.TempDir(), "m")
		if r := run(t, env, "sync", "registry://"+reg.Host(), half, "-p", "acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64"); r.code != 0 {
			t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		check(t, half, 1, "windows_amd64")
	})
	t.Run("OCI", func(t *testing.T) {
		oreg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
		full := "oci://" + oreg.Host() + "/full/${namespace}/${type}"
		if r := run(t, env, append([]string{"sync", "registry://" + reg.Host(), full, "-p", "acme/alpha", "-v", "1.0.0", "--plain-http"}, all...)...); r.code != 0 {
			t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		check(t, full, 0, manifest)
		half := "oci://" + oreg.Host() + "/half/${namespace}/${type}"
		if r := run(t, env, "sync", "registry://"+reg.Host(), half, "-p", "acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64", "--plain-http"); r.code != 0 {
			t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		check(t, half, 1, "windows_amd64")
	})
}
