package cli

import (
	"crypto/sha256"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

// versionDoc reads a <version>.json: platform -> listed hashes.
func versionDoc(t *testing.T, path string) map[string][]string {
	t.Helper()
	var doc struct {
		Archives map[string]struct{ Hashes []string }
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]string{}
	for plat, a := range doc.Archives {
		out[plat] = a.Hashes
	}
	return out
}

func zhOf(b []byte) string { return fmt.Sprintf("zh:%x", sha256.Sum256(b)) }

func h1Of(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	os.WriteFile(p, b, 0o644)
	h, err := hashing.ZipH1(p, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// The index documents a sync writes list exactly the hashes it verified or
// computed: from an origin registry, whose signed SHA256SUMS states zh:,
// only zh: (h1: would verify nothing more; the h1: its unsigned packages
// field states is not listed, being neither); with --hashes all, h1: too;
// from a network mirror that states only h1: (as `terraform providers
// mirror` writes it), that h1:, checked, and the zh: computed on the way.
func TestSyncIndexListsWhatWasVerified(t *testing.T) {
	reg := testRegistry(t)
	zips := map[string][]byte{}
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.1.0", plat), "")
	}
	regEnv := caEnv(t, reg.CertPEM())
	syncDoc := func(extra ...string) map[string][]string {
		mirror := filepath.Join(t.TempDir(), "mirror")
		args := append([]string{"sync", "registry://" + reg.Host(), mirror, "-p", "acme/alpha", "-v", "1.1.0"}, extra...)
		if r := run(t, regEnv, args...); r.code != 0 {
			t.Fatalf("sync %v: %d\n%s%s", extra, r.code, r.stdout, r.stderr)
		}
		return versionDoc(t, filepath.Join(mirror, reg.Host(), "acme", "alpha", "1.1.0.json"))
	}
	for plat, z := range zips {
		// The registry's packages field (OpenTofu 1.12) states h1: beside
		// its zh:: the zh:, signed, pins the bytes, so the h1: would
		// verify nothing more; not computed, it is not listed.
		if got := syncDoc()[plat]; !slices.Equal(got, []string{zhOf(z)}) {
			t.Errorf("registry -> fs, %s lists %v, want only the signed %s", plat, got, zhOf(z))
		}
		if got, want := syncDoc("--hashes", "all")[plat], []string{h1Of(t, z), zhOf(z)}; !slices.Equal(got, want) {
			t.Errorf("registry -> fs --hashes all, %s lists %v, want %v", plat, got, want)
		}
	}

	// A network mirror stating h1: only, served as static files.
	src := t.TempDir()
	pdir := filepath.Join(src, "example.com", "acme", "alpha")
	os.MkdirAll(pdir, 0o755)
	os.WriteFile(filepath.Join(pdir, "index.json"), []byte(`{"versions":{"1.1.0":{}}}`), 0o644)
	doc := map[string]any{}
	for plat, z := range zips {
		name := "terraform-provider-alpha_1.1.0_" + plat + ".zip"
		os.WriteFile(filepath.Join(pdir, name), z, 0o644)
		doc[plat] = map[string]any{"url": name, "hashes": []string{h1Of(t, z)}}
	}
	b, _ := json.Marshal(map[string]any{"archives": doc})
	os.WriteFile(filepath.Join(pdir, "1.1.0.json"), b, 0o644)
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(src)))
	t.Cleanup(srv.Close)
	mirror := filepath.Join(t.TempDir(), "mirror")
	r := run(t, caEnv(t, certPEM(srv)), "sync", srv.URL+"/", mirror, "-p", "example.com/acme/alpha", "--json")
	if r.code != 0 {
		t.Fatalf("sync from the network mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `"scheme":"h1:","status":"ok"`) {
		t.Errorf("the mirror's h1: was not checked:\n%s", r.stdout)
	}
	got := versionDoc(t, filepath.Join(mirror, "example.com", "acme", "alpha", "1.1.0.json"))
	for plat, z := range zips {
		if want := []string{h1Of(t, z), zhOf(z)}; !slices.Equal(got[plat], want) {
			t.Errorf("net mirror (h1: only) -> fs, %s lists %v, want %v", plat, got[plat], want)
		}
	}
}

func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// caEnv trusts a test CA (both variables: see shared/testing.md).
func caEnv(t *testing.T, ca []byte) []string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "ca.pem")
	os.WriteFile(p, ca, 0o644)
	return []string{"SSL_CERT_FILE=" + p, "SSL_CERT_DIR=" + dir}
}

// zhOnlyMirror syncs example.com/acme/alpha 1.1.0 for two platforms into a
// new filesystem mirror whose index documents list zh: only (the source
// states zh: and nothing asks for h1:), checks that they do, and returns
// the mirror and the zips by platform.
func zhOnlyMirror(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	src := t.TempDir()
	pdir := filepath.Join(src, "example.com", "acme", "alpha")
	os.MkdirAll(pdir, 0o755)
	zips := map[string][]byte{}
	doc := map[string]any{}
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		z := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.1.0", plat), "")
		zips[plat] = z
		name := "terraform-provider-alpha_1.1.0_" + plat + ".zip"
		os.WriteFile(filepath.Join(pdir, name), z, 0o644)
		doc[plat] = map[string]any{"url": name, "hashes": []string{zhOf(z)}}
	}
	b, _ := json.Marshal(map[string]any{"archives": doc})
	os.WriteFile(filepath.Join(pdir, "1.1.0.json"), b, 0o644)
	os.WriteFile(filepath.Join(pdir, "index.json"), []byte(`{"versions":{"1.1.0":{}}}`), 0o644)

	mirror := filepath.Join(t.TempDir(), "mirror")
	if r := run(t, nil, "sync", src, mirror); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := versionDoc(t, filepath.Join(mirror, "example.com", "acme", "alpha", "1.1.0.json"))
	for plat, z := range zips {
		if !slices.Equal(got[plat], []string{zhOf(z)}) {
			t.Fatalf("%s lists %v, want %s only", plat, got[plat], zhOf(z))
		}
	}
	return mirror, zips
}

// installWith runs `init` (or the command given) of a client (terraform or
// tofu) in a fresh configuration needing example.com/acme/alpha 1.1.0,
// isolated, with the given provider_installation body, and returns the
// lock file it wrote.
func installWith(t *testing.T, bin string, ca []byte, installation string, command ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cli.tfrc")
	os.WriteFile(cfg, []byte("provider_installation {\n"+installation+"}\n"), 0o644)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	env := []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + cfg, "TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
	if ca != nil {
		env = append(env, caEnv(t, ca)...)
	}
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "main.tf"), []byte(
		"terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\", version = \"= 1.1.0\" }\n  }\n}\n"), 0o644)
	if len(command) == 0 {
		command = []string{"init", "-input=false"}
	}
	out := runTerraform(t, bin, env, append([]string{"-chdir=" + work}, append(command, "-no-color")...)...)
	if !strings.Contains(out, "example.com/acme/alpha v1.1.0") && !strings.Contains(out, "Retrieved example.com/acme/alpha 1.1.0") {
		t.Fatalf("%s %s did not install the provider:\n%s", filepath.Base(bin), command[0], out)
	}
	lock, err := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s: %s", filepath.Base(bin), strings.Join(command, " "), lock)
	return string(lock)
}

// Terraform and OpenTofu install from a mirror whose index documents list
// only zh:, as a filesystem mirror and as a network mirror (checking the
// package against that zh:), and `tofu providers lock` through the network
// mirror locks the zh: of every platform, as locking from the origin
// registry does. (tofu init records the installed platform's only, from
// any source: trust_all_hashes changes which of the mirror's hashes it
// records for that platform, not the platforms.)
func TestClientsInstallFromZhOnlyIndex(t *testing.T) {
	mirror, zips := zhOnlyMirror(t)
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(mirror)))
	t.Cleanup(srv.Close)
	fsMirror := fmt.Sprintf("  filesystem_mirror {\n    path = %q\n  }\n", mirror)
	netMirror := fmt.Sprintf("  network_mirror {\n    url = %q\n  }\n", srv.URL+"/")
	h1 := h1Of(t, zips["linux_amd64"])

	t.Run("terraform", func(t *testing.T) {
		tf := backendtest.Terraform(t, "terraform init from zh:-only index documents")
		for name, inst := range map[string]string{"filesystem": fsMirror, "network": netMirror} {
			if lock := installWith(t, tf, certPEM(srv), inst); !strings.Contains(lock, h1) {
				t.Errorf("terraform, %s mirror: the lock lacks the installed package's %s:\n%s", name, h1, lock)
			}
		}
	})
	t.Run("tofu", func(t *testing.T) {
		tofu := backendtest.Tofu(t, "tofu init from zh:-only index documents")
		for name, inst := range map[string]string{"filesystem": fsMirror, "network": netMirror} {
			if lock := installWith(t, tofu, certPEM(srv), inst); !strings.Contains(lock, h1) {
				t.Errorf("tofu, %s mirror: the lock lacks the installed package's %s:\n%s", name, h1, lock)
			}
		}
		trusting := fmt.Sprintf("  network_mirror {\n    url = %q\n    trust_all_hashes = true\n  }\n", srv.URL+"/")
		if lock := installWith(t, tofu, certPEM(srv), trusting); !strings.Contains(lock, zhOf(zips["linux_amd64"])) {
			t.Errorf("tofu with trust_all_hashes: the lock lacks the mirror's %s:\n%s", zhOf(zips["linux_amd64"]), lock)
		}
		lock := installWith(t, tofu, certPEM(srv), trusting, "providers", "lock", "-net-mirror="+srv.URL+"/", "-platform=linux_amd64", "-platform=darwin_arm64")
		for plat, z := range zips {
			if !strings.Contains(lock, zhOf(z)) || !strings.Contains(lock, h1Of(t, z)) {
				t.Errorf("tofu providers lock with trust_all_hashes: the lock lacks %s's %s or %s:\n%s", plat, zhOf(z), h1Of(t, z), lock)
			}
		}
	})
}
