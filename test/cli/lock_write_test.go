package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `tfmirror lock` on a lock file that is a symbolic link to a private (0600)
// file writes through the link: the link stays, pointing where it did, and
// the file it names gets the hashes and keeps its mode.
func TestCLILockThroughSymlink(t *testing.T) {
	mirror := lockMirror(t)
	root := t.TempDir()
	shared, cfg := filepath.Join(root, "shared"), filepath.Join(root, "cfg")
	os.Mkdir(shared, 0o755)
	os.Mkdir(cfg, 0o755)
	target := filepath.Join(shared, "infra.lock.hcl")
	if err := os.WriteFile(target, []byte(`provider "example.com/acme/alpha" {
  version = "1.2.0"
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(cfg, ".terraform.lock.hcl")
	rel := filepath.Join("..", "shared", "infra.lock.hcl")
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, root, "empty.tfrc", "")}
	r := run(t, env, "lock", mirror, "--lock", link, "--platform", "linux_amd64")
	if r.code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link: %v %v", link, fi.Mode(), err)
	}
	if dest, _ := os.Readlink(link); dest != rel {
		t.Errorf("the link points at %q, want %q", dest, rel)
	}
	b, err := os.ReadFile(target)
	if err != nil || strings.Count(string(b), `"h1:`) != 1 || strings.Count(string(b), `"zh:`) != 1 {
		t.Errorf("the file the link names lacks the hashes (%v):\n%s", err, b)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600 kept", fi.Mode().Perm(), err)
	}
	for _, d := range []string{shared, cfg} {
		if entries, _ := os.ReadDir(d); len(entries) != 1 {
			t.Errorf("%s holds %v, want one file", d, entries)
		}
	}
}
