package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Directory names from a --from tree and a spec's destinations are
// anyone's text too: check --from (its LOCK column), lock --from (its
// lines), sync --from and sync --spec (the summary naming the
// destination) write their escapes out (\x1b), never to the terminal.
func TestNoTerminalEscapesFromATreeOrASpec(t *testing.T) {
	src, _ := fsMirror(t) // example.com/acme/alpha 1.0.0, 1.1.0
	const esc = "\x1b]0;pwned\x07\x1b[2J\u009b31m"
	top := t.TempDir()
	tree := filepath.Join(top, "tree")
	writeTree(t, tree, map[string]string{
		"evil" + esc + "/.terraform.lock.hcl": "provider \"example.com/acme/alpha\" {\n  version = \"1.0.0\"\n}\n",
		"evil" + esc + "/main.tf":             "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\" }\n  }\n}\n",
		"gone" + esc + "/main.tf":             "module \"x\" {\n  source = \"example.com/acme/x/aws\"\n}\n",
	})
	// HCL writes the escapes as \u001b.
	hclEsc := strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`, "\u009b", `\u009b`)
	spec := writeFile(t, top, "spec.hcl", fmt.Sprintf("destinations = [\"%s\"]\nsource = %q\nprovider \"example.com/acme/alpha\" {\n  versions = \">= 1.0\"\n}\n",
		hclEsc.Replace(filepath.Join(top, "dst"+esc)), src))
	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, top, "empty.tfrc", "")}
	for _, args := range [][]string{
		{"check", src, "--from", tree},
		{"lock", src, "--from", tree, "--platform", "linux_amd64", "--dry-run"},
		{"lock", src, "--from", tree, "--platform", "darwin_arm64"},
		{"sync", "--spec", spec},
		{"diff", "--spec", spec},
		{"sync", src, filepath.Join(top, "dst2"+esc), "-p", "example.com/acme/alpha"},
	} {
		r := run(t, env, args...)
		noCrash(t, args[0], r)
		out := r.stdout + r.stderr
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("%v: a control character reached the terminal (exit %d):\n%q", args, r.code, out)
		}
		if !strings.Contains(out, `\x1b`) {
			t.Errorf("%v: the escape is not written out where the name is (exit %d):\n%s", args, r.code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(top, "dst"+esc)); err != nil {
		t.Errorf("sync --spec did not write the destination it names: %v", err)
	}
}
