package netmirror_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// TestTerraformInstallsFromServedMirror runs the real terraform init against
// Serve (what `tfmirror serve` runs) with a CLI configuration whose only
// installation method is that network mirror, trusting the generated
// certificate through SSL_CERT_FILE and SSL_CERT_DIR.
func TestTerraformInstallsFromServedMirror(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH; skipping the end-to-end install through a network mirror")
	}
	plat := runtime.GOOS + "_" + runtime.GOARCH
	dir := t.TempDir()
	good := pkg{"example.com", "acme", "alpha", "1.0.0", plat}
	swapped := pkg{"example.com", "acme", "beta", "1.0.0", plat}
	zips := writeMirror(t, dir, good, swapped)
	// beta's index was written for another zip than the one now on disk.
	betaDir := filepath.Dir(swapped.path(dir))
	stated := sumsOf(t, registrytest.ProviderZip("beta", "1.0.0", "the original"))
	if err := os.WriteFile(filepath.Join(betaDir, "index.json"), []byte(`{"versions":{"1.0.0":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(betaDir, "1.0.0.json"), []byte(fmt.Sprintf(`{"archives":{%q:{"hashes":[%q],"url":%q}}}`, plat, stated.H1, filepath.Base(swapped.path(dir)))), 0o644); err != nil {
		t.Fatal(err)
	}

	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	certFile := filepath.Join(tmp, "mirror-ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan netmirror.Serving, 1)
	logs := &backendtest.Buffer{}
	go func() {
		done <- netmirror.Serve(ctx, m, netmirror.ServeOptions{Addr: "127.0.0.1:0", CertOut: certFile, Logger: log.New(logs, "", 0), Ready: func(s netmirror.Serving) { ready <- s }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var s netmirror.Serving
	select {
	case s = <-ready:
	case err := <-done:
		t.Fatal(err)
	}

	cliConfig := filepath.Join(tmp, "tfmirror.tfrc")
	if err := os.WriteFile(cliConfig, []byte(fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", s.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}

	init := func(t *testing.T, typ string) (string, string, error) {
		work := t.TempDir()
		main := fmt.Sprintf("terraform {\n  required_providers {\n    %s = {\n      source  = \"example.com/acme/%s\"\n      version = \"= 1.0.0\"\n    }\n  }\n}\n", typ, typ)
		if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(main), 0o644); err != nil {
			t.Fatal(err)
		}
		ictx, icancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer icancel()
		cmd := exec.CommandContext(ictx, tf, "init", "-input=false", "-no-color")
		cmd.Dir = work
		cmd.Env = isolatedEnv(home, cliConfig, certFile)
		out, err := cmd.CombinedOutput()
		return work, string(out), err
	}

	t.Run("installs", func(t *testing.T) {
		work, out, err := init(t, "alpha")
		if err != nil {
			t.Fatalf("terraform init: %v\n%s\nserver log:\n%s", err, out, logs)
		}
		exe := filepath.Join(work, ".terraform", "providers", "example.com", "acme", "alpha", "1.0.0", plat, "terraform-provider-alpha_v1.0.0")
		if _, err := os.Stat(exe); err != nil {
			t.Fatalf("provider not installed: %v\n%s", err, out)
		}
		lock, err := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		if h1 := sumsOf(t, zips[good]).H1; !strings.Contains(string(lock), string(h1)) {
			t.Errorf("lock file lacks %s:\n%s", h1, lock)
		}
		for _, want := range []string{"GET /example.com/acme/alpha/index.json 200", "GET /example.com/acme/alpha/1.0.0.json 200", "GET /example.com/acme/alpha/terraform-provider-alpha_1.0.0_" + plat + ".zip 200"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("server log lacks %q:\n%s", want, logs)
			}
		}
	})
	t.Run("refuses a swapped zip", func(t *testing.T) {
		_, out, err := init(t, "beta")
		if err == nil {
			t.Fatalf("terraform init installed a zip its mirror's index does not vouch for:\n%s", out)
		}
		if !strings.Contains(out, "checksum") {
			t.Errorf("terraform failed, but not over the checksum:\n%s", out)
		}
	})
}

// isolatedEnv is the environment for a client run that sees only the test's
// configuration and trusts only the test's certificate.
func isolatedEnv(home, cliConfig, caFile string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "TF_"), strings.HasPrefix(name, "SSL_CERT_"), name == "HOME", name == "XDG_CONFIG_HOME", name == "XDG_CACHE_HOME", strings.HasSuffix(strings.ToUpper(name), "_PROXY"):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"TF_CLI_CONFIG_FILE="+cliConfig,
		"SSL_CERT_FILE="+caFile,
		"SSL_CERT_DIR="+caFile,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
	)
}
