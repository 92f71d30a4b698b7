package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// prune --keep-locked reads the lock files under a linked directory
// (envs -> ../shared) and keeps what they lock; a link back to an
// ancestor (a loop) is walked once and ends.
func TestPruneKeepLockedFollowsDirectoryLinks(t *testing.T) {
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"},
		[]string{"1.0.0", "1.1.0", "2.0.0"}, []string{"linux_amd64"})
	dir := sourceMirror(t, seeds)
	top := t.TempDir()
	configs := filepath.Join(top, "configs")
	lockFile(t, filepath.Join(configs, "infra", ".terraform.lock.hcl"), map[string]string{"example.com/acme/alpha": "2.0.0"})
	lockFile(t, filepath.Join(top, "shared", "prod", ".terraform.lock.hcl"), map[string]string{"example.com/acme/alpha": "1.0.0"})
	if err := os.Symlink(filepath.Join("..", "shared"), filepath.Join(configs, "envs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(top, "shared", "loop")); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "prune", dir, "--keep", "1", "--keep-locked", configs, "--yes")
	if r.code != 0 {
		t.Fatalf("prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := versionsHeld(t, dir, "example.com/acme/alpha"); got != "1.0.0 2.0.0" {
		t.Fatalf("alpha holds %q, want 1.0.0 (locked under envs -> ../shared) and 2.0.0\n%s%s", got, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, filepath.Join(configs, "envs", "prod", ".terraform.lock.hcl")) {
		t.Errorf("the keep row does not name the lock file by the path it was found under:\n%s", r.stdout)
	}
}

// lock --from never writes outside the tree it walks: a lock file that is
// a symbolic link to a file elsewhere is replaced by a regular file (as
// terraform providers lock does), the file it named left alone; a
// configuration reached through a link to a directory elsewhere is read
// but not written, named, exit 1.
func TestLockFromWritesNothingOutsideTheTree(t *testing.T) {
	mirror := lockMirror(t)
	top := t.TempDir()
	tree, outside := filepath.Join(top, "tree"), filepath.Join(top, "outside")
	const alpha = "provider \"example.com/acme/alpha\" {\n  version = \"1.2.0\"\n}\n"
	writeTree(t, outside, map[string]string{"victim.hcl": alpha, "shared/.terraform.lock.hcl": alpha})
	writeTree(t, tree, map[string]string{"own/.terraform.lock.hcl": alpha})
	os.MkdirAll(filepath.Join(tree, "app"), 0o755)
	link := filepath.Join(tree, "app", ".terraform.lock.hcl")
	if err := os.Symlink(filepath.Join("..", "..", "outside", "victim.hcl"), link); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, top, "empty.tfrc", "")}
	r := run(t, env, "lock", mirror, "--from", tree, "--platform", "linux_amd64")
	if r.code != 0 {
		t.Fatalf("lock --from: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(outside, "victim.hcl")); got != alpha {
		t.Fatalf("lock --from wrote through a link to a file outside the tree:\n%s", got)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v %v, want a regular file in place of the link", link, fi.Mode(), err)
	}
	for _, p := range []string{link, filepath.Join(tree, "own", ".terraform.lock.hcl")} {
		if got := readFile(t, p); strings.Count(got, `"h1:`) != 1 {
			t.Errorf("%s was not locked:\n%s", p, got)
		}
	}

	// A directory link out of the tree: read, never written.
	if err := os.Symlink(filepath.Join("..", "outside", "shared"), filepath.Join(tree, "envs")); err != nil {
		t.Fatal(err)
	}
	r = run(t, env, "lock", mirror, "--from", tree, "--platform", "linux_amd64")
	if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(tree, "envs", ".terraform.lock.hcl")+": not written") {
		t.Fatalf("lock --from with envs -> ../outside/shared: exit %d, want 1 naming it\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(outside, "shared", ".terraform.lock.hcl")); got != alpha {
		t.Fatalf("lock --from wrote through a directory link outside the tree:\n%s", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(outside, "shared")); len(entries) != 1 {
		t.Errorf("outside/shared holds %v, want its one file", entries)
	}
}
