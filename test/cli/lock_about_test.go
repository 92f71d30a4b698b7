package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `tfmirror lock MIRROR --lock FILE` without --platform completes FILE for
// the platforms it is about (check's rule, issue 34): a lock holding only
// the h1: of two platforms' packages (what init through a mirror writes)
// gets their zh: and nothing of the other two platforms the mirror holds;
// check then passes. A new lock file names no platform: exit 2, saying to
// add --platform; so does a --from tree whose configurations lock nothing.
func TestLockWithoutPlatformCompletesTheLock(t *testing.T) {
	mirror := lockMirror(t)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.hcl")
	mine := []string{"darwin_arm64", "linux_amd64"}
	if r := run(t, nil, append([]string{"lock", mirror, "--lock", full, "-p", "acme/alpha", "-p", "acme/beta", "-v", "1.2.0"}, platformArgs("--platform=", mine)...)...); r.code != 0 {
		t.Fatalf("lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want, _ := os.ReadFile(full)
	var h1Only []string
	for _, line := range strings.SplitAfter(string(want), "\n") {
		if !strings.Contains(line, `"zh:`) {
			h1Only = append(h1Only, line)
		}
	}
	lock := writeFile(t, dir, ".terraform.lock.hcl", strings.Join(h1Only, ""))

	r := run(t, nil, "lock", mirror, "--lock", lock, "--json")
	if r.code != 0 {
		t.Fatalf("lock without --platform: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "locking the platforms it is about: darwin_arm64, linux_amd64") {
		t.Errorf("lock did not say which platforms:\n%s", r.stderr)
	}
	if got, _ := os.ReadFile(lock); string(got) != string(want) {
		t.Errorf("completed lock:\n%s\nwant (h1: and zh: of %v):\n%s", got, mine, want)
	}
	var line struct {
		Providers []struct {
			Provider  string
			Platforms []string
			Added     []struct{ Hash, Platform string }
		}
	}
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &line); err != nil || len(line.Providers) != 2 {
		t.Fatalf("lock --json: %v\n%s", err, r.stdout)
	}
	for _, p := range line.Providers {
		if !slices.Equal(p.Platforms, mine) || len(p.Added) != len(mine) {
			t.Errorf("%s: platforms %v, added %v; want the zh: of %v", p.Provider, p.Platforms, p.Added, mine)
		}
	}
	if r := run(t, nil, "check", mirror, "--lock", lock); r.code != 0 || strings.Count(r.stdout, "\nok ") != 2*len(mine) {
		t.Errorf("check after lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = run(t, nil, "lock", mirror, "--lock", filepath.Join(dir, "new.hcl"))
	if r.code != 2 || !strings.Contains(r.stderr, "needs --platform") {
		t.Errorf("new lock without --platform: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cfg := filepath.Join(dir, "cfg")
	writeFile(t, mustMkdir(t, cfg), "main.tf", lockConfig)
	r = run(t, nil, "lock", mirror, "--from", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "--platform") {
		t.Errorf("--from without a lock, without --platform: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func mustMkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
