package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// nullAddr is the provider the real-provider tests install, from an origin
// registry listening on 127.0.0.1:443: network mirrors need a provider
// hostname without a port (both clients read HOST:PORT/NS/TYPE/index.json
// as a URL with a scheme), and the clients never contact it.
const nullAddr = "127.0.0.1/hashicorp/null"

// realWorld is a real provider (backendtest.NullProvider, two platforms)
// served signed by an origin registry on loopback TLS, and the clients that
// install it.
type realWorld struct {
	reg     *registrytest.Server
	zips    map[string][]byte
	plats   []string // the host's platform first
	ca      string   // the registry's certificate, for --ca-cert
	clients map[string]string
}

func newRealWorld(t *testing.T) *realWorld {
	t.Helper()
	clients := map[string]string{}
	if tf, err := exec.LookPath("terraform"); err == nil {
		clients["terraform"] = tf
	}
	t.Run("find tofu", func(t *testing.T) { clients["tofu"] = backendtest.Tofu(t, "tofu in the real-provider tests") })
	if len(clients) == 0 {
		t.Skip("neither terraform nor tofu is installed: skipping the real-provider tests")
	}
	host := runtime.GOOS + "_" + runtime.GOARCH
	other := "darwin_arm64"
	if host == other {
		other = "linux_amd64"
	}
	w := &realWorld{plats: []string{host, other}, clients: clients}
	w.zips = backendtest.NullProvider(t, w.plats...)
	w.reg = registrytest.NewWithOptions(t, registrytest.Options{Addr: "127.0.0.1:443"}, registrytest.Provider{Namespace: "hashicorp", Type: "null", Versions: []registrytest.Version{
		{Version: backendtest.NullProviderVersion, Archives: w.zips},
	}})
	w.ca = caFile(t, w.reg.CertPEM())
	return w
}

// spec writes a spec whose one provider is nullAddr at the built version,
// for both platforms, from the registry, into dsts.
func (w *realWorld) spec(t *testing.T, dsts ...string) string {
	t.Helper()
	var quoted []string
	for _, d := range dsts {
		quoted = append(quoted, quote(d))
	}
	return writeFile(t, t.TempDir(), "mirror.hcl", fmt.Sprintf(`destinations = [%s]
platforms    = [%q, %q]

provider %q {
  versions = "= %s"
}
`, strings.Join(quoted, ", "), w.plats[0], w.plats[1], nullAddr, backendtest.NullProviderVersion))
}

// tfmirror runs the binary and wants exit 0.
func (w *realWorld) tfmirror(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := run(t, env, args...)
	if r.code != 0 {
		t.Fatalf("tfmirror %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// computedHashes are the hashes tfmirror computes for the provider in place,
// every platform: `lock --hashes all` downloads and hashes each package.
func (w *realWorld) computedHashes(t *testing.T, env []string, place string, flags ...string) []string {
	t.Helper()
	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	args := append([]string{"lock", place, "--lock", lock, "--hashes", "all", "-p", nullAddr, "-v", backendtest.NullProviderVersion}, platformArgs("--platform=", w.plats)...)
	w.tfmirror(t, env, append(args, flags...)...)
	return lockHashes(t, lock)
}

// applyWith runs, for every client allowed, `init` and `apply` of a
// configuration with a null_resource in a fresh isolated directory, with
// installation as the CLI configuration's provider_installation body (and
// extra after it), trusting only caPEM; then checks the lock file against
// what tfmirror computes from place, `tfmirror check` of it, and that
// `init -upgrade` changes nothing. Then it does the same in a configuration
// whose lock file `tfmirror lock` wrote first, which the client must take
// as it is.
func (w *realWorld) applyWith(t *testing.T, clients []string, caPEM []byte, installation, extra string, place string, env []string, flags ...string) {
	t.Helper()
	computed := w.computedHashes(t, env, place, flags...)
	hostH1 := h1Of(t, w.zips[w.plats[0]])
	if !slices.Contains(computed, hostH1) {
		t.Fatalf("tfmirror lock %s records %v, not the package's h1: %s", place, computed, hostH1)
	}
	cliConfig := "provider_installation {\n" + installation + "}\n" + extra
	ran := 0
	for _, name := range clients {
		if w.clients[name] == "" {
			continue
		}
		ran++
		work, cenv := w.workspace(t, name, caPEM, cliConfig)
		w.initApply(t, name, cenv, work)
		lockPath := filepath.Join(work, ".terraform.lock.hcl")
		lock := readFile(t, lockPath)
		recorded := lockHashes(t, lockPath)
		if !slices.Contains(recorded, hostH1) {
			t.Errorf("%s recorded %v, not the h1: tfmirror computes for %s (%s)", name, recorded, w.plats[0], hostH1)
		}
		for _, h := range recorded {
			if !slices.Contains(computed, h) {
				t.Errorf("%s recorded %s, which tfmirror does not compute for %s (it computes %v)", name, h, place, computed)
			}
		}
		// The client locked the platform it installed; on that one, init
		// works, and on the other it would fail. Unnamed, the platforms
		// are those the lock is about: the one it locked (issue 34).
		check := append([]string{"check", place, "--lock", lockPath}, flags...)
		for _, args := range [][]string{append(check, "--platform", w.plats[0]), check} {
			if r := run(t, env, args...); r.code != 0 || strings.Contains(r.stdout, w.plats[1]) {
				t.Errorf("tfmirror %v of %s's lock file: exit %d\n%s%s\n%s", args[2:], name, r.code, r.stdout, r.stderr, lock)
			}
		}
		if r := run(t, env, append(check, "--platform", w.plats[1])...); r.code != 1 || !hasLineWith(r.stdout, "mismatch", w.plats[1]) {
			t.Errorf("tfmirror check %s --platform %s of %s's lock file: exit %d, want 1\n%s%s", place, w.plats[1], name, r.code, r.stdout, r.stderr)
		}
		w.quietUpgrade(t, name, cenv, work, lock)
		t.Logf("%s: installed, applied, locked %v", name, recorded)

		// tfmirror's own lock file for the configuration, both platforms:
		// the client installs against it, keeps its hashes and adds only
		// hashes tfmirror computes (an h1: where the place states zh: alone).
		work, cenv = w.workspace(t, name, caPEM, cliConfig)
		lockPath = filepath.Join(work, ".terraform.lock.hcl")
		args := append([]string{"lock", place, "--from", work, "--header", name}, platformArgs("--platform=", w.plats)...)
		w.tfmirror(t, env, append(args, flags...)...)
		written := lockHashes(t, lockPath)
		if len(written) < 2 {
			t.Errorf("tfmirror lock %s --from wrote no hashes of both platforms:\n%s", place, readFile(t, lockPath))
		}
		w.initApply(t, name, cenv, work)
		lock = readFile(t, lockPath)
		recorded = lockHashes(t, lockPath)
		for _, h := range written {
			if !slices.Contains(recorded, h) {
				t.Errorf("%s init dropped %s from the lock file tfmirror wrote:\n%s", name, h, lock)
			}
		}
		for _, h := range recorded {
			if !slices.Contains(computed, h) {
				t.Errorf("%s init added %s to the lock file tfmirror wrote, which tfmirror does not compute (%v)", name, h, computed)
			}
		}
		w.quietUpgrade(t, name, cenv, work, lock)
		t.Logf("%s: from tfmirror's lock %v, locked %v", name, written, recorded)
	}
	if ran == 0 {
		t.Skipf("none of %v is installed", clients)
	}
}

// workspace is a fresh isolated directory for client name: a configuration
// with a null_resource, the CLI configuration given, and the client's
// environment, trusting only caPEM.
func (w *realWorld) workspace(t *testing.T, name string, caPEM []byte, cliConfig string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "cli.tfrc", cliConfig)
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(work, 0o755)
	writeFile(t, work, "main.tf", fmt.Sprintf(`terraform {
  required_providers {
    null = { source = %q, version = "= %s" }
  }
}

resource "null_resource" "here" {
  triggers = { place = %q, client = %q }
}

output "id" {
  value = null_resource.here.id
}
`, nullAddr, backendtest.NullProviderVersion, t.Name(), name))
	return work, append(caEnv(t, caPEM), "HOME="+home, "TF_CLI_CONFIG_FILE="+cfg, "TF_PLUGIN_CACHE_DIR=",
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
}

// initApply runs init and apply, and wants the provider installed and the
// null_resource created by it.
func (w *realWorld) initApply(t *testing.T, name string, cenv []string, work string) {
	t.Helper()
	out := runTerraform(t, w.clients[name], cenv, "-chdir="+work, "init", "-input=false", "-no-color")
	if !strings.Contains(out, "Installed "+nullAddr+" v"+backendtest.NullProviderVersion) {
		t.Fatalf("%s init did not install %s:\n%s", name, nullAddr, out)
	}
	out = runTerraform(t, w.clients[name], cenv, "-chdir="+work, "apply", "-auto-approve", "-input=false", "-no-color")
	if !strings.Contains(out, "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.") || !strings.Contains(out, "id = \"") {
		t.Fatalf("%s apply:\n%s", name, out)
	}
}

// quietUpgrade runs `init -upgrade` and wants the lock file as it was and
// no warning.
func (w *realWorld) quietUpgrade(t *testing.T, name string, cenv []string, work, lock string) {
	t.Helper()
	out := runTerraform(t, w.clients[name], cenv, "-chdir="+work, "init", "-upgrade", "-input=false", "-no-color")
	if again := readFile(t, filepath.Join(work, ".terraform.lock.hcl")); again != lock {
		t.Errorf("%s init -upgrade changed the lock file:\n%s\nwas:\n%s", name, again, lock)
	}
	if strings.Contains(out, "Warning") || strings.Contains(out, "changes to the lock file") {
		t.Errorf("%s init -upgrade was not quiet:\n%s", name, out)
	}
}

func fsMirrorBlock(path string) string {
	return fmt.Sprintf("  filesystem_mirror {\n    path = %q\n  }\n", path)
}

func netMirrorBlock(url string) string {
	return fmt.Sprintf("  network_mirror {\n    url = %q\n  }\n", url)
}

// A real provider, built from source and served signed by an origin
// registry, lands through tfmirror in every kind of place it writes, and
// terraform and tofu install it from there, start it and apply a
// null_resource, with no way to the registry; their lock files hold the
// hashes tfmirror computes, `tfmirror check` accepts them, and `init
// -upgrade` changes nothing.
func TestRealProviderAppliesFromEveryPlace(t *testing.T) {
	w := newRealWorld(t)
	if w.reg.Host()+"/hashicorp/null" != nullAddr {
		t.Fatalf("the registry is %s", w.reg.Host())
	}
	both := []string{"terraform", "tofu"}
	mirror := filepath.Join(t.TempDir(), "mirror")
	w.tfmirror(t, nil, "sync", "--spec", w.spec(t, mirror), "--ca-cert", w.ca)
	w.tfmirror(t, nil, "verify", mirror)

	t.Run("filesystem_mirror", func(t *testing.T) {
		w.applyWith(t, both, nil, fsMirrorBlock(mirror), "", mirror, nil)
	})
	t.Run("serve", func(t *testing.T) {
		url, cert, stop := startServe(t, mirror)
		defer stop()
		pem, _ := os.ReadFile(cert)
		w.applyWith(t, both, pem, netMirrorBlock(url), "", url, nil, "--ca-cert", cert)
	})
	t.Run("oci_mirror", func(t *testing.T) {
		oreg := ocitest.New(t)
		pem, _ := os.ReadFile(oreg.CAFile())
		ca := caFile(t, w.reg.CertPEM(), pem)
		oci := "oci://" + oreg.Host() + "/tf/${namespace}/${type}"
		w.tfmirror(t, nil, "sync", "--spec", w.spec(t, oci), "--ca-cert", ca)
		block := fmt.Sprintf("  oci_mirror {\n    repository_template = \"%s/tf/${namespace}/${type}\"\n    include = [%q]\n  }\n", oreg.Host(), nullAddr)
		w.applyWith(t, []string{"tofu"}, pem, block, "oci_default_credentials {\n  discover_ambient_credentials = false\n}\n", oci, nil, "--ca-cert", ca)
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t)
		bucket := srv.Bucket(t)
		srv.PublicRead(t, bucket)
		env := append(cleanEnv(t), srv.Env()...)
		ca := caFile(t, w.reg.CertPEM(), srv.CertPEM())
		place := "s3://" + bucket + "/tf/providers"
		w.tfmirror(t, env, "sync", "--spec", w.spec(t, place), "--s3-endpoint", srv.URL, "--ca-cert", ca)
		url := srv.URL + "/" + bucket + "/tf/providers/"
		w.applyWith(t, both, srv.CertPEM(), netMirrorBlock(url), "", place, env, "--s3-endpoint", srv.URL, "--ca-cert", ca)
	})
	t.Run("bundle", func(t *testing.T) {
		bundle := filepath.Join(t.TempDir(), "providers.tar")
		w.tfmirror(t, nil, "export", bundle, "--spec", w.spec(t, filepath.Join(t.TempDir(), "unused")), "--ca-cert", w.ca)
		airgap := filepath.Join(t.TempDir(), "airgap")
		w.tfmirror(t, nil, "import", bundle, airgap)
		w.applyWith(t, both, nil, fsMirrorBlock(airgap), "", airgap, nil)
	})
}
