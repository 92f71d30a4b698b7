package cli

import (
	"archive/zip"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIUIModules drives `tfmirror ui --module` in a real terminal over a
// real module registry, an OCI registry (a template of modules, which is no
// provider place) and a directory that does not exist yet: the Modules view
// opens first, a version is queued to the directory, lands, and is a zip on
// disk; m switches to providers and back.
func TestCLIUIModules(t *testing.T) {
	w := newModuleCLIWorld(t)
	dir := filepath.Join(t.TempDir(), "modules")
	s := newTmux(t, 120, 36, w.env, "ui", "registry://"+w.reg.Host(), "'"+w.template()+"'", dir, "--module", "acme/net/aws")
	s.waitLoaded("module places: [1]", "(registry)", "(oci)", "(fs)", "acme/net/aws", "1.2.0", "1.1.0", "1.0.0")
	s.keys("Enter", "Down", "Down", "Space", "Enter") // versions; select 1.0.0; queue…
	s.waitFor("to which place?")
	s.keys("Down", "Enter") // the directory, [3]
	s.waitFor("1 to fetch and pack: 1 from [1] registry://" + w.reg.Host())
	s.keys("Enter")
	s.waitFor("1 done", "/acme/net/aws 1.0.0 → 3")
	zr, err := zip.OpenReader(filepath.Join(dir, w.reg.Host(), "acme", "net", "aws", "1.0.0.zip"))
	if err != nil {
		t.Fatalf("the package is not in the directory: %v", err)
	}
	zr.Close()
	s.keys("m")
	s.waitFor("mirrors: [1]", "(registry)")
	if scr := s.screen(false); strings.Contains(scr, "(oci)") {
		t.Errorf("the OCI template of modules is no provider mirror, yet the providers header names it:\n%s", scr)
	}
	s.keys("m")
	s.waitFor("module places:")
	s.keys("q")
	s.waitGone()
}

func TestCLIUIModulesUsageErrors(t *testing.T) {
	empty := t.TempDir()
	noConfig := []string{"HOME=" + empty, "TF_CLI_CONFIG_FILE=", "TERRAFORM_CONFIG=", "TOFU_CLI_CONFIG_FILE="}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no module place", []string{"ui", "https://127.0.0.1:1/", "--module", "acme/net/aws"}, "none of the places holds modules"},
		{"bad module address", []string{"ui", empty, "--module", "acme/net"}, "--module"},
		{"a registry with --provider still needs --version", []string{"ui", "registry://registry.example.com", "--module", "acme/net/aws", "-p", "acme/x"}, "needs --version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, noConfig, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want 2 with %q; stderr:\n%s", r.code, tc.want, r.stderr)
			}
		})
	}
	// A registry beside --module needs no --version: it is there for its
	// modules. The UI then stops only for want of a terminal.
	r := run(t, noConfig, "ui", "registry://registry.example.com", empty, "--module", "acme/net/aws")
	if r.code != 2 || !strings.Contains(r.stderr, "needs a terminal") {
		t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
}
