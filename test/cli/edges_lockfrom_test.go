package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lock --from is all or nothing per file: a lock file that cannot be read
// (a link loop; permission denied where the tests do not run as root) or
// parsed is named and left alone, the others are written, exit 1; the
// message is tfmirror's with the reason, not Go's "open PATH:" glued on.
func TestLockFromUnreadableLockFileStopsOnlyItself(t *testing.T) {
	mirror := lockMirror(t)
	tree := t.TempDir()
	const alpha = "provider \"example.com/acme/alpha\" {\n  version = \"1.2.0\"\n}\n"
	writeTree(t, tree, map[string]string{
		"good/.terraform.lock.hcl":   alpha,
		"broken/.terraform.lock.hcl": "provider \"example.com/acme/alpha\" {\n",
		"loop/main.tf":               "terraform {\n  required_providers {\n    alpha = { source = \"example.com/acme/alpha\" }\n  }\n}\n",
	})
	loop := filepath.Join(tree, "loop", ".terraform.lock.hcl")
	if err := os.Symlink(".terraform.lock.hcl", loop); err != nil {
		t.Fatal(err)
	}
	denied := ""
	if os.Geteuid() != 0 {
		denied = filepath.Join(tree, "denied", ".terraform.lock.hcl")
		writeTree(t, tree, map[string]string{"denied/.terraform.lock.hcl": alpha})
		if err := os.Chmod(denied, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(denied, 0o644) })
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, tree, "empty.tfrc", "")}
	r := run(t, env, "lock", mirror, "--from", tree, "--platform", "linux_amd64")
	if r.code != 1 {
		t.Fatalf("lock --from with unreadable lock files: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(tree, "good", ".terraform.lock.hcl")); strings.Count(got, `"h1:`) != 1 {
		t.Errorf("the readable lock file was not written:\n%s\n%s", got, r.stderr)
	}
	wants := []string{
		loop + ": cannot read this lock file: too many levels of symbolic links",
		loop + ": not changed",
		filepath.Join(tree, "broken", ".terraform.lock.hcl") + ":",
		filepath.Join(tree, "broken", ".terraform.lock.hcl") + ": not changed",
	}
	if denied != "" {
		wants = append(wants, denied+": cannot read this lock file: permission denied", denied+": not changed")
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "open "+tree) {
		t.Errorf("Go's \"open PATH:\" is glued onto the message:\n%s", r.stderr)
	}
	if got := readFile(t, filepath.Join(tree, "broken", ".terraform.lock.hcl")); got != "provider \"example.com/acme/alpha\" {\n" {
		t.Errorf("the broken lock file was changed:\n%s", got)
	}
	if fi, err := os.Lstat(loop); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the looping link was replaced: %v %v", fi.Mode(), err)
	}
}
