package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// lockHashes returns the hashes of a lock file's one provider block.
func lockHashes(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, `"h1:`) || strings.HasPrefix(s, `"zh:`) {
			out = append(out, strings.Trim(s, `",`))
		}
	}
	sort.Strings(out)
	return out
}

// `tfmirror lock registry://HOST --platform P` records what `terraform
// providers lock -platform=P` records from the same registry: P's h1: and
// the zh: of every platform in the signed SHA256SUMS. A lock written for
// another platform than this machine's then lets a direct `terraform init`
// here succeed: the package it downloads matches a locked zh:.
func TestTerraformInitWithLockFromRegistry(t *testing.T) {
	here := runtime.GOOS + "_" + runtime.GOARCH
	other := "darwin_arm64"
	if here == other {
		other = "linux_amd64"
	}
	plats := []string{here, other, "windows_amd64"}
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range plats {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	addr := reg.Host() + "/acme/alpha"
	config := fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", addr)
	newConfig := func() string {
		dir := t.TempDir()
		writeFile(t, dir, "main.tf", config)
		return dir
	}

	byTerraform := newConfig()
	runTerraform(t, tf, env, "-chdir="+byTerraform, "providers", "lock", "-no-color", "-platform="+other)
	want := lockHashes(t, filepath.Join(byTerraform, ".terraform.lock.hcl"))
	if len(want) != 1+len(plats) {
		t.Fatalf("terraform providers lock wrote %v: want one h1: and %d zh:", want, len(plats))
	}

	byTfmirror := newConfig()
	lock := filepath.Join(byTfmirror, ".terraform.lock.hcl")
	r := run(t, env, "lock", "registry://"+reg.Host(), "--lock", lock, "-p", "acme/alpha", "-v", "1.0.0", "--platform", other)
	if r.code != 0 {
		t.Fatalf("tfmirror lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := lockHashes(t, lock); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tfmirror locked\n  %s\nterraform providers lock\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	out := runTerraform(t, tf, env, "-chdir="+byTfmirror, "init", "-input=false", "-no-color")
	if !strings.Contains(out, "Installed "+addr+" v1.0.0") {
		t.Errorf("init output:\n%s", out)
	}
	after := lockHashes(t, lock)
	if len(after) != len(want)+1 {
		t.Errorf("after init on %s the lock holds %v: want the %d hashes locked and this platform's h1:", here, after, len(want))
	}
}

// From an OpenTofu 1.12 registry (packages lists every platform's h1: and
// zh:), `tfmirror lock` for three platforms downloads no archive and
// records what --hashes all records from the archives themselves; the lock
// is then complete: `terraform init` here installs against it and adds
// nothing.
func TestCLILockFromRegistryPackagesDownloadsNoArchive(t *testing.T) {
	here := runtime.GOOS + "_" + runtime.GOARCH
	plats := []string{here, "darwin_arm64", "windows_amd64"}
	if here == "darwin_arm64" {
		plats[1] = "linux_amd64"
	}
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	for _, plat := range plats {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	addr := reg.Host() + "/acme/alpha"
	dir := t.TempDir()
	writeFile(t, dir, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", addr))
	lock := filepath.Join(dir, ".terraform.lock.hcl")
	args := append([]string{"lock", "registry://" + reg.Host(), "-p", "acme/alpha", "-v", "1.0.0"}, platformArgs("--platform=", plats)...)

	reg.Reset()
	if r := run(t, env, append(args, "--lock", lock)...); r.code != 0 {
		t.Fatalf("tfmirror lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := reg.Count(registrytest.KindArchive); n != 0 {
		t.Errorf("lock downloaded %d archives, want none", n)
	}
	if n := reg.Count(registrytest.KindDownload); n != 1 {
		t.Errorf("lock read %d download documents, want one for the version", n)
	}
	got := lockHashes(t, lock)

	reg.Reset()
	all := filepath.Join(t.TempDir(), "all.hcl")
	if r := run(t, env, append(args, "--lock", all, "--hashes", "all")...); r.code != 0 {
		t.Fatalf("tfmirror lock --hashes all: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := reg.Count(registrytest.KindArchive); n != len(plats) {
		t.Errorf("--hashes all downloaded %d archives, want %d", n, len(plats))
	}
	want := lockHashes(t, all)
	if len(want) != 2*len(plats) || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("from packages\n  %s\nfrom the archives\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	out := runTerraform(t, tf, env, "-chdir="+dir, "init", "-input=false", "-no-color")
	if !strings.Contains(out, "Installed "+addr+" v1.0.0") {
		t.Errorf("init output:\n%s", out)
	}
	if after := lockHashes(t, lock); strings.Join(after, " ") != strings.Join(got, " ") {
		t.Errorf("init changed the lock: %v, was %v", after, got)
	}
}
