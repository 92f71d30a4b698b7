package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// threeVersionRegistry serves acme/alpha 1.0.0, 1.1.0 and 1.2.0 for two
// platforms, as an origin registry on 127.0.0.1:PORT.
func threeVersionRegistry(t *testing.T) *registrytest.Server {
	t.Helper()
	var versions []registrytest.Version
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
		for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
			ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, plat), "")
		}
		versions = append(versions, ver)
	}
	return registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: versions})
}

// One rule for a bare NAMESPACE/TYPE, in every command run as a user runs
// it: on a registry:// it is the registry's own provider; where the host
// cannot be known (an OCI template without ${hostname}, a network mirror)
// every command refuses it with exit 2 and the full address to write, and
// writes nothing (sync wrote registry.opentofu.org/acme/alpha, which no
// client asking for localhost/acme/alpha reads); with the full address the
// same commands do their work.
func TestCLIHostRule(t *testing.T) {
	reg := threeVersionRegistry(t)
	env := caEnv(t, reg.CertPEM())
	oci := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	short := "oci://" + oci.Host() + "/tf/${namespace}/${type}"
	net := "https://127.0.0.1:1/mirror/" // never contacted: refused before

	// The OCI mirror holds localhost/acme/alpha, pushed from a directory.
	src := t.TempDir()
	backendtest.WritePacked(t, src, backendtest.Seeds(t, []string{"localhost/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	if r := run(t, nil, "sync", src, short, "--plain-http"); r.code != 0 {
		t.Fatalf("sync into %s: exit %d\n%s", short, r.code, r.stderr)
	}

	// A registry: NAMESPACE/TYPE is on its host, with every version ls lists.
	r := run(t, env, "ls", "registry://"+reg.Host(), "-p", "acme/alpha", "-v", ">= 0")
	if r.code != 0 || strings.Count(r.stdout, reg.Host()+"/acme/alpha") != 6 || strings.Contains(r.stdout, "registry.terraform.io") {
		t.Errorf("ls registry://%s -p acme/alpha: exit %d, want 3 versions x 2 platforms of %s/acme/alpha\n%s%s", reg.Host(), r.code, reg.Host(), r.stdout, r.stderr)
	}

	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ls", []string{"ls", short, "--plain-http"}},
		{"verify", []string{"verify", short, "--plain-http"}},
		{"diff", []string{"diff", short, "DST", "--plain-http"}},
		{"sync", []string{"sync", short, "DST", "--plain-http"}},
		{"sync from a network mirror", []string{"sync", net, "DST"}},
		{"export", []string{"export", short, "BUNDLE", "--plain-http"}},
		{"lock", []string{"lock", short, "--lock", lock, "--platform", "linux_amd64", "--plain-http"}},
		{"push", []string{"push", net, "oci://" + oci.Host() + "/other/${namespace}/${type}", "--plain-http"}},
		{"prune", []string{"prune", short, "--keep", "1", "--plain-http"}},
		{"outdated", []string{"outdated", short, "--source", net, "--plain-http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "dst")
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				args[i] = strings.NewReplacer("DST", dst, "BUNDLE", filepath.Join(dir, "b.tar")).Replace(a)
			}
			r := run(t, env, append(args, "-p", "acme/alpha")...)
			if r.code != 2 || !strings.Contains(r.stderr, "cannot list its providers, so the host cannot be known") || !strings.Contains(r.stderr, "HOSTNAME/acme/alpha") {
				t.Errorf("%v -p acme/alpha: exit %d, want 2 asking for the full address\n%s%s", args, r.code, r.stdout, r.stderr)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("%v -p acme/alpha wrote %s", args, entries[0].Name())
			}
		})
	}

	// The full address: sync writes exactly that provider.
	dst := filepath.Join(t.TempDir(), "dst")
	if r := run(t, nil, "sync", short, dst, "--plain-http", "-p", "localhost/acme/alpha"); r.code != 0 {
		t.Fatalf("sync -p localhost/acme/alpha: exit %d\n%s", r.code, r.stderr)
	}
	hosts, _ := os.ReadDir(dst)
	if len(hosts) != 1 || hosts[0].Name() != "localhost" {
		t.Errorf("sync -p localhost/acme/alpha wrote %v, want localhost/ only", hosts)
	}
	if _, err := os.Stat(filepath.Join(dst, "localhost", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip")); err != nil {
		t.Error(err)
	}
}

// The UI, opened as a user opens it on a local registry with -p acme/alpha,
// shows that registry's acme/alpha and its three versions (it showed
// registry.terraform.io/acme/alpha with "no version"); on a network mirror
// alone the UI does not start: exit 2, the full address to write.
func TestCLIUIHostRule(t *testing.T) {
	reg := threeVersionRegistry(t)
	env := caEnv(t, reg.CertPEM())
	s := newTmux(t, 120, 36, append(env, "NO_COLOR=1"), "ui", "registry://"+reg.Host(), "-p", "acme/alpha", "-v", "'>= 0'")
	scr := s.waitLoaded(reg.Host()+"/acme/alpha", "1.2.0", "1.1.0", "1.0.0", "linux_amd64", "darwin_arm64")
	if strings.Contains(scr, "registry.terraform.io") || strings.Contains(scr, "no version") {
		t.Errorf("the screen names another host, or no version:\n%s", scr)
	}
	s.keys("q")
	s.waitGone()

	r := run(t, nil, "ui", "https://127.0.0.1:1/mirror/", "-p", "acme/alpha")
	if r.code != 2 || !strings.Contains(r.stderr, "HOSTNAME/acme/alpha") {
		t.Errorf("ui on a network mirror with -p acme/alpha: exit %d, want 2 asking for the full address\n%s", r.code, r.stderr)
	}
}

// lock and check on a registry:// take NAMESPACE/TYPE as the registry's
// own provider, also in a lock file that locks acme/alpha of another host:
// that entry is left as it is (it was taken for one to update from this
// registry, which refused it: not on this host).
func TestCLIHostRuleLockOnARegistry(t *testing.T) {
	reg := threeVersionRegistry(t)
	env := caEnv(t, reg.CertPEM())
	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	const other = `provider "registry.terraform.io/acme/alpha" {
  version = "1.0.0"
  hashes = [
    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  ]
}
`
	if err := os.WriteFile(lock, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, env, "lock", "registry://"+reg.Host(), "--lock", lock, "-p", "acme/alpha", "-v", "1.2.0", "--platform", "linux_amd64")
	if r.code != 0 {
		t.Fatalf("lock registry://%s -p acme/alpha: exit %d\n%s%s", reg.Host(), r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	written := string(b)
	if !strings.Contains(written, other) || !strings.Contains(written, `provider "`+reg.Host()+`/acme/alpha"`) || !strings.Contains(written, `version = "1.2.0"`) {
		t.Errorf("the lock file should keep registry.terraform.io/acme/alpha as it was and add %s/acme/alpha 1.2.0:\n%s", reg.Host(), written)
	}
	r = run(t, env, "check", "registry://"+reg.Host(), "--lock", lock, "-p", "acme/alpha", "--platform", "linux_amd64")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "registry.terraform.io") {
		t.Errorf("check registry://%s -p acme/alpha: exit %d, want 0 checking only %s/acme/alpha\n%s%s", reg.Host(), r.code, reg.Host(), r.stdout, r.stderr)
	}
}
