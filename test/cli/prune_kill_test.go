package cli

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/test/killtest"
)

// TestPruneCrashSafetyKill kills a prune with SIGKILL at random moments.
// After each kill no index document lists an archive that is gone (verify
// finds nothing but archives no index lists, which a kill between the
// rewrite of the documents and the deletes leaves), every locked version
// is still there, and a re-run of the prune completes it: the mirror then
// holds exactly what the retention keeps and verifies clean.
func TestPruneCrashSafetyKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test skipped in -short mode")
	}
	var providers []string
	for i := range 12 {
		providers = append(providers, fmt.Sprintf("example.com/acme/p%02d", i))
	}
	seeds := backendtest.Seeds(t, providers, []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0"}, []string{"linux_amd64", "darwin_arm64"})
	base := sourceMirror(t, seeds)
	configs := t.TempDir()
	locks := map[string]string{}
	for i, p := range providers {
		if i%3 == 0 {
			locks[p] = "1.0.0"
		}
	}
	lockFile(t, filepath.Join(configs, ".terraform.lock.hcl"), locks)
	args := []string{"prune", "", "--keep", "2", "--keep-locked", configs, "--yes"}

	// The end state, and how long a full prune takes here.
	want := copyTree(t, base)
	args[1] = want
	start := time.Now()
	if r := run(t, nil, args...); r.code != 0 {
		t.Fatalf("probe prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	full := time.Since(start)
	wantHeld := strings.Join(held(t, want), "\n")
	t.Logf("a full prune of %d archives takes %s", len(seeds), full)

	const kills = 30
	midRemoval := 0
	initial := len(seeds)
	landed, attempts := killtest.Kills{
		Start: func(t *testing.T, i int) *exec.Cmd {
			dst := copyTree(t, base)
			cmd := exec.Command(tfmirrorBin, append([]string{"prune", dst}, args[2:]...)...)
			cmd.Env = cleanEnv(t)
			return cmd
		},
		Window: full, N: kills, MaxAttempts: 6 * kills, Seed: 3,
		More: func() bool { return midRemoval == 0 },
		Check: func(t *testing.T, k killtest.Kill) {
			i, delay, dst := k.I, k.Delay, k.Cmd.Args[2]
			verifyAfterKill(t, i, delay, dst)
			now := held(t, dst)
			if n := len(now); n != initial && strings.Join(now, "\n") != wantHeld || zipsOnDisk(t, dst) != n {
				midRemoval++
			}
			for p, v := range locks {
				for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
					if !contains(now, p+" "+v+" "+plat) {
						t.Fatalf("kill %d after %s: the locked %s %s %s is gone", i, delay, p, v, plat)
					}
				}
			}
			args := append([]string{"prune", dst}, args[2:]...)
			if r := run(t, nil, args...); r.code != 0 {
				t.Fatalf("kill %d after %s: re-run: exit %d\n%s%s", i, delay, r.code, r.stdout, r.stderr)
			}
			if r := run(t, nil, "verify", dst); r.code != 0 {
				t.Fatalf("kill %d after %s: verify after the re-run: exit %d\n%s%s", i, delay, r.code, r.stdout, r.stderr)
			}
			if got := strings.Join(held(t, dst), "\n"); got != wantHeld {
				t.Fatalf("kill %d after %s: after the re-run the mirror holds\n%s\nwant\n%s", i, delay, got, wantHeld)
			}
			filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.Contains(p, ".tfmirror-tmp-") {
					t.Errorf("kill %d: staging file left after the re-run: %s", i, p)
				}
				return nil
			})
		},
	}.Run(t)
	t.Logf("%d kills interrupted the prune, %d of them while it was removing, in %d attempts", landed, midRemoval, attempts)
	if midRemoval == 0 {
		t.Errorf("none of %d attempts interrupted the prune while it was removing", attempts)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// zipsOnDisk counts the archives under dir.
func zipsOnDisk(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".zip") && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return nil
	})
	return n
}

// copyTree copies the regular files and directories under src into a new
// temp dir and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "mirror")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
