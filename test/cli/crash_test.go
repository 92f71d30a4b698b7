package cli

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/test/killtest"
)

// TestCrashSafetyKill runs a sync and kills it with SIGKILL at 50 random
// moments. After each kill the destination must verify clean (no partial or
// corrupt archive visible, index documents consistent with the archives) and
// a re-run must complete the sync.
func TestCrashSafetyKill(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test skipped in -short mode")
	}
	src := t.TempDir()
	var seeds []backendtest.Seed
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []string{"example.com/acme/alpha", "example.com/acme/beta", "example.com/acme/gamma"} {
		for _, v := range []string{"1.0.0", "1.1.0"} {
			for _, plat := range []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"} {
				pkg := backendtest.Pkg(t, p, v, plat)
				// Incompressible bytes, so each archive takes a while to move.
				body := make([]byte, 256<<10)
				for i := range body {
					body[i] = byte(rng.Uint32())
				}
				seeds = append(seeds, backendtest.Seed{Package: pkg, Zip: backendtest.Zip(t,
					backendtest.Entry{Name: "terraform-provider-" + pkg.Provider.Type, Body: body})})
			}
		}
	}
	backendtest.WritePacked(t, src, seeds)
	m, _ := fs.Open(src, src, fs.Options{})
	for _, p := range []string{"example.com/acme/alpha", "example.com/acme/beta", "example.com/acme/gamma"} {
		pp, _ := backends.ParseProvider(p)
		m.Flush(context.Background(), pp)
	}

	// How long a full sync takes here, to spread the kills over it.
	probe := filepath.Join(t.TempDir(), "probe")
	start := time.Now()
	if r := run(t, nil, "sync", src, probe, "--jobs", "4"); r.code != 0 {
		t.Fatalf("probe sync: %d %s", r.code, r.stderr)
	}
	full := time.Since(start)
	t.Logf("a full sync of %d archives takes %s", len(seeds), full)

	// Only kills that interrupt a running sync count (killtest shrinks the
	// window when a sync ended first); 50 must land.
	killtest.Kills{
		Start: func(t *testing.T, i int) *exec.Cmd {
			return exec.Command(tfmirrorBin, "sync", src, filepath.Join(t.TempDir(), "dst"), "--jobs", "4")
		},
		Window: full, N: 50, Seed: 1,
		Check: func(t *testing.T, k killtest.Kill) {
			dst := k.Cmd.Args[3]
			if _, statErr := os.Stat(dst); statErr == nil {
				verifyAfterKill(t, k.I, k.Delay, dst)
			}
			if r := run(t, nil, "sync", src, dst, "--jobs", "4"); r.code != 0 {
				t.Fatalf("kill %d after %s: re-run: exit %d\n%s", k.I, k.Delay, r.code, r.stderr)
			}
			if r := run(t, nil, "diff", src, dst); r.code != 0 {
				t.Fatalf("kill %d: after the re-run the destination still differs:\n%s%s", k.I, r.stdout, r.stderr)
			}
			if r := run(t, nil, "verify", dst); r.code != 0 {
				t.Fatalf("kill %d: verify after the re-run: exit %d\n%s%s", k.I, r.code, r.stdout, r.stderr)
			}
			filepath.Walk(dst, func(p string, info os.FileInfo, err error) error {
				if err == nil && strings.Contains(p, ".tfmirror-tmp-") {
					t.Errorf("kill %d: staging file left after the re-run: %s", k.I, p)
				}
				return nil
			})
		},
	}.Run(t)
}

// verifyAfterKill checks a destination a kill left: every archive in it
// verifies, and no index document lists an archive that is not there. The
// one thing a kill may leave is an archive that landed but is not listed
// yet (the index documents are written after the archives, never before):
// verify reports it, and the next sync lists it.
func verifyAfterKill(t *testing.T, kill int, delay time.Duration, dst string) {
	t.Helper()
	r := run(t, nil, "verify", dst, "--json")
	if r.code == 1 && strings.Contains(r.stderr, "holds no") && !holdsZip(t, dst) {
		return // killed before the first archive landed: an empty mirror
	}
	var findings []struct{ Provider, Version, Platform, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &findings); err != nil {
		t.Fatalf("kill %d after %s: verify --json: exit %d, %v\n%s%s", kill, delay, r.code, err, r.stdout, r.stderr)
	}
	unlisted := 0
	for _, f := range findings {
		switch {
		case f.Status == "ok":
		case f.Status == "mismatch" && strings.Contains(f.Detail, "is on disk but not listed in"):
			unlisted++
		default:
			t.Fatalf("kill %d after %s: verify: %s %s %s: %s: %s", kill, delay, f.Provider, f.Version, f.Platform, f.Status, f.Detail)
		}
	}
	if want := min(unlisted, 1); r.code != want {
		t.Fatalf("kill %d after %s: verify found %d unlisted archives and exited %d\n%s", kill, delay, unlisted, r.code, r.stderr)
	}
}

// holdsZip reports whether any archive is under dir.
func holdsZip(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".zip") {
			found = true
		}
		return nil
	})
	return found
}
