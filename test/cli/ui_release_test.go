package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// TestCLIUIPushesARelease is issue 28's one-off push done in a real
// terminal as a user does it: `tfmirror ui ./dist 'oci://REG/tf/${namespace}/${type}'
// -p HOST/NS/TYPE --signing-key KEY` (the key kept inside dist/) shows the
// release's platforms, its row selected and queued lands them in the
// registry (the distribution registry, in-process) signed, and OpenTofu
// then installs the provider from that OCI mirror. Without -p the UI
// refuses the release directory, exit 2, saying to name the provider;
// before, it opened and said the directory "holds no providers".
func TestCLIUIPushesARelease(t *testing.T) {
	const addr = "example.com/acme/alpha"
	here := runtime.GOOS + "_" + runtime.GOARCH
	signer := backendtest.NewSigner(t, "acme releases")
	dist := filepath.Join(t.TempDir(), "dist")
	key := signer.ReleaseDir(t, dist, addr, "1.2.3", here, "windows_amd64")
	reg := ocitest.New(t)
	tmpl := reg.Host() + "/tf/${namespace}/${type}"

	if r := run(t, cleanEnv(t), "ui", dist, "oci://"+tmpl, "--ca-cert", reg.CAFile()); r.code != 2 || !strings.Contains(r.stderr, "-p HOST/NAMESPACE/TYPE") {
		t.Errorf("ui of a release directory without -p: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	s := newTmux(t, 120, 36, []string{"NO_COLOR=1", "HOME=" + t.TempDir()}, "ui", dist, "'oci://"+tmpl+"'", "-p", addr, "--signing-key", key, "--ca-cert", reg.CAFile())
	s.waitLoaded("acme/alpha", "(release)", "1.2.3", here, "windows_amd64")
	s.keys("Enter", "r", "Enter") // the matrix; the row of 1.2.3; queue…
	s.waitFor("2 to copy: 2 from [1] " + dist)
	s.keys("Enter")
	scr := s.waitFor("2 done")
	if !strings.Contains(scr, "signed SHA256SUMS") {
		t.Errorf("the jobs do not say they were checked against the signed SHA256SUMS:\n%s", scr)
	}
	s.keys("Tab") // the jobs pane: Details name the signer
	s.waitFor("signed by key " + signer.KeyID()[:8])
	s.keys("q")
	s.waitGone()

	// As push leaves it: verify of the registry names the publisher's key.
	r := run(t, cleanEnv(t), "verify", "oci://"+tmpl, "-p", addr, "--ca-cert", reg.CAFile(), "--json")
	if r.code != 0 || strings.Count(r.stdout, `"fingerprint": "`+signer.Fingerprint()+`"`) != 2 {
		t.Fatalf("verify of the registry after the UI's push: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	tofu := backendtest.Tofu(t, "tofu init from the OCI mirror the UI pushed a release into")
	dir := t.TempDir()
	cliCfg := filepath.Join(dir, "cli.tfrc")
	writeFile(t, dir, "cli.tfrc", fmt.Sprintf("provider_installation {\n  oci_mirror {\n    repository_template = %q\n    include = [%q]\n  }\n}\n"+
		"oci_default_credentials {\n  discover_ambient_credentials = false\n}\n", tmpl, addr))
	work := t.TempDir()
	writeFile(t, work, "main.tf", "terraform {\n  required_providers {\n    alpha = { source = \""+addr+"\", version = \"= 1.2.3\" }\n  }\n}\n")
	cmd := exec.Command(tofu, "-chdir="+work, "init", "-input=false", "-no-color")
	cmd.Env = append(cleanEnv(t), "TF_CLI_CONFIG_FILE="+cliCfg, "SSL_CERT_FILE="+reg.CAFile(), "SSL_CERT_DIR="+dir, "TF_PLUGIN_CACHE_DIR=", "TF_IN_AUTOMATION=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Installed "+addr+" v1.2.3") {
		t.Fatalf("tofu init from the OCI mirror: %v\n%s", err, out)
	}
	lock, _ := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	if !strings.Contains(string(lock), `"`+addr+`"`) {
		t.Errorf("tofu wrote no lock entry for %s:\n%s", addr, lock)
	}
}
