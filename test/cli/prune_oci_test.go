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

// prune on an OCI mirror: the older version's tag and manifests go, the
// kept one verifies, and OpenTofu installs it through oci_mirror (when
// tofu is at hand) and finds no release of the removed one.
func TestPruneOCIThenTofuInit(t *testing.T) {
	reg := ocitest.New(t)
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{host, "windows_386"}))
	tmpl := reg.Host() + "/providers/${hostname}/${namespace}/${type}"
	dst := "oci://" + tmpl
	env := cleanEnv(t)
	if r := run(t, env, "sync", src, dst, "--ca-cert", reg.CAFile()); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := run(t, env, "prune", dst, "--keep", "1", "--yes", "--ca-cert", reg.CAFile())
	if r.code != 0 || !strings.Contains(r.stderr, "2 removed") || strings.Contains(r.stderr, "note:") {
		t.Fatalf("prune: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := versionsHeldAt(t, env, dst, reg.CAFile()); got != "2.0.0" {
		t.Fatalf("the mirror holds %q, want 2.0.0", got)
	}
	if r := run(t, env, "verify", dst, "--ca-cert", reg.CAFile()); r.code != 0 {
		t.Fatalf("verify: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	tofu := backendtest.Tofu(t, "tofu init after prune of an OCI mirror")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cli.tfrc")
	os.WriteFile(cfg, []byte(fmt.Sprintf("provider_installation {\n  oci_mirror {\n    repository_template = %q\n    include = [\"example.com/*/*\"]\n  }\n}\n"+
		"oci_default_credentials {\n  discover_ambient_credentials = false\n}\n", tmpl)), 0o644)
	tofuEnv := append(cleanEnv(t), "TF_CLI_CONFIG_FILE="+cfg, "SSL_CERT_FILE="+reg.CAFile(), "SSL_CERT_DIR="+dir, "TF_PLUGIN_CACHE_DIR=", "TF_IN_AUTOMATION=1")
	initWith := func(version string) (string, error) {
		work := t.TempDir()
		os.WriteFile(filepath.Join(work, "main.tf"), []byte(fmt.Sprintf(
			"terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\", version = \"= %s\" }\n  }\n}\n", version)), 0o644)
		cmd := exec.Command(tofu, "-chdir="+work, "init", "-input=false", "-no-color")
		cmd.Env = tofuEnv
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := initWith("2.0.0"); err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v2.0.0") {
		t.Fatalf("tofu init of the kept version: %v\n%s", err, out)
	}
	if out, err := initWith("1.0.0"); err == nil || !strings.Contains(out, "no available releases") {
		t.Fatalf("tofu init of the removed version: %v\n%s", err, out)
	}
}

// versionsHeldAt lists the versions of example.com/acme/alpha a place holds.
func versionsHeldAt(t *testing.T, env []string, place, ca string) string {
	t.Helper()
	r := run(t, env, "ls", place, "-p", "example.com/acme/alpha", "--ca-cert", ca)
	seen := map[string]bool{}
	var vs []string
	for _, line := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 && !seen[f[1]] {
			seen[f[1]] = true
			vs = append(vs, f[1])
		}
	}
	return strings.Join(vs, " ")
}

// A registry that does not allow deletes: prune says so for each version
// whose tag it cannot remove, leaves them whole and exits 1.
func TestPruneOCIRegistryWithoutDeletes(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{NoDelete: true})
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	dst := "oci://" + reg.Host() + "/providers/${hostname}/${namespace}/${type}"
	env := cleanEnv(t)
	if r := run(t, env, "sync", src, dst, "--ca-cert", reg.CAFile()); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := run(t, env, "prune", dst, "--keep", "1", "--yes", "--ca-cert", reg.CAFile())
	if r.code != 1 || !hasLineWith(r.stdout, "left", "1.0.0", "linux_amd64", "does not allow deletes", "HTTP 405") || !strings.Contains(r.stderr, "2 left") {
		t.Fatalf("prune: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := versionsHeldAt(t, env, dst, reg.CAFile()); got != "2.0.0 1.0.0" {
		t.Fatalf("the mirror holds %q, want both versions", got)
	}
}
