package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
)

// `config suggest DIR` prints a filesystem_mirror block whose include
// names exactly the providers DIR holds (not an empty provider directory)
// and a direct block excluding exactly those; the CLI configuration parses
// as the clients read it, and terraform init installs from the mirror with
// it. A place that cannot list its providers needs -p (exit 2); an empty
// one is exit 1.
func TestConfigSuggest(t *testing.T) {
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	os.MkdirAll(filepath.Join(dir, "example.com", "acme", "empty"), 0o755)
	r := run(t, cleanEnv(t), "config", "suggest", dir)
	if r.code != 0 {
		t.Fatalf("config suggest: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c, err := cliconfig.Parse([]byte(r.stdout), "suggested.tfrc")
	if err != nil {
		t.Fatalf("the suggestion does not parse: %v\n%s", err, r.stdout)
	}
	want := "[example.com/acme/alpha example.com/acme/beta]"
	if len(c.Installations) != 1 || len(c.Installations[0].Methods) != 2 {
		t.Fatalf("want one block of a mirror and direct, got %+v\n%s", c.Installations, r.stdout)
	}
	mirror, direct := c.Installations[0].Methods[0], c.Installations[0].Methods[1]
	if mirror.Kind != "filesystem_mirror" || mirror.Location != dir || patternsText(mirror.Include) != want || len(mirror.Exclude) != 0 {
		t.Errorf("mirror block: %+v\n%s", mirror, r.stdout)
	}
	if direct.Kind != "direct" || patternsText(direct.Exclude) != want || len(direct.Include) != 0 {
		t.Errorf("direct block: %+v\n%s", direct, r.stdout)
	}

	tf := backendtest.Terraform(t, "terraform init with the suggested configuration")
	work := t.TempDir()
	writeFile(t, work, "main.tf", "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\", version = \"= 1.0.0\" }\n  }\n}\n")
	if out, err := runClient(t, tf, nil, r.stdout, work, "init", "-input=false", "-no-color"); err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") {
		t.Errorf("terraform init with the suggestion: %v\n%s", err, out)
	}

	if r := run(t, cleanEnv(t), "config", "suggest", "https://mirror.example/"); r.code != 2 || !strings.Contains(r.stderr, "-p HOST/NAMESPACE/TYPE") {
		t.Errorf("a network mirror without -p: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, cleanEnv(t), "config", "suggest", t.TempDir()); r.code != 1 || !strings.Contains(r.stdout, "holds no provider") {
		t.Errorf("an empty mirror: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func patternsText(ps []cliconfig.Pattern) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return "[" + strings.Join(out, " ") + "]"
}
