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
