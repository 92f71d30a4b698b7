package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCLIUILock is the lock job in a real terminal at 80x24: a lock written
// by the real `terraform providers lock -platform=linux_amd64
// -platform=darwin_arm64` from a registry whose SHA256SUMS lists the
// release's manifest, a mirror holding only linux_amd64. `ui MIRROR
// registry://HOST --lock FILE` shows the gaps (darwin_arm64 and
// windows_amd64, which the registry's signed SHA256SUMS ties the lock's
// zh: to), the manifest's zh: as untied; L queues the gaps from the
// registry; once they land, `tfmirror check --lock` exits 0 and `terraform
// init -lockfile=readonly` installs from the mirror.
func TestCLIUILock(t *testing.T) {
	if here := runtime.GOOS + "_" + runtime.GOARCH; here != "linux_amd64" {
		t.Skipf("init installs the linux_amd64 package; this machine is %s", here)
	}
	reg := manifestRegistry(t)
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	lock := realLock(t, reg, tf, env, "linux_amd64", "darwin_arm64")
	mirror := filepath.Join(t.TempDir(), "mirror")
	if r := run(t, env, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64"); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "check", mirror, "--lock", lock); r.code != 1 || !strings.Contains(r.stdout, "darwin_arm64") || !strings.Contains(r.stdout, "windows_amd64") {
		t.Fatalf("check before: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	s := newTmux(t, 80, 24, append(env, "NO_COLOR=1"), "ui", mirror, "registry://"+reg.Host(), "--lock", lock)
	scr := s.waitLoaded("acme/alpha", "darwin_arm64", "windows_amd64", "2 missing", "untied locked hashes: 1 (zh: of a non-package file)")
	t.Logf("the lock view at 80x24:\n%s", scr)
	if !strings.Contains(scr, "○") {
		t.Errorf("no gap shown:\n%s", scr)
	}
	s.keys("L")
	scr = s.waitFor("2 package(s) missing or differing of 1 lock file", "2 to copy: 2 from [2] registry")
	t.Logf("L:\n%s", scr)
	s.keys("Enter")
	scr = s.waitFor("2 done", "─ ok ─")
	t.Logf("landed:\n%s", scr)
	// C completes the lock: windows_amd64, which its signed zh: alone
	// covered, gains its h1:, as terraform providers lock for the three
	// platforms would write it.
	s.keys("C")
	scr = s.waitFor("Add 1 hash to 1 lock file?", "windows_amd64 from [")
	t.Logf("C:\n%s", scr)
	s.keys("Enter")
	s.waitFor("1 hash added to ")
	s.keys("q")
	s.waitGone()
	byC, _ := os.ReadFile(lock)
	byTF, _ := os.ReadFile(realLock(t, reg, tf, env, "linux_amd64", "darwin_arm64", "windows_amd64"))
	if string(byC) != string(byTF) {
		t.Errorf("the lock C completed:\n%s\nterraform providers lock for the three platforms:\n%s", byC, byTF)
	}

	if r := run(t, env, "check", mirror, "--lock", lock); r.code != 0 {
		t.Errorf("check after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tfm, envm := terraformEnv(t, reg.CertPEM(), fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror))
	out := runTerraform(t, tfm, envm, "-chdir="+filepath.Dir(lock), "init", "-input=false", "-no-color", "-lockfile=readonly")
	if !strings.Contains(out, "Installed "+reg.Host()+"/acme/alpha v1.0.0") {
		t.Errorf("init did not install from the mirror:\n%s", out)
	}
}

// ui --lock and --from refuse, exit 2, what gives the lock view nothing to
// show or cannot be read, naming the file or directory.
func TestCLIUILockUsageErrors(t *testing.T) {
	dir, _ := fsMirror(t)
	empty := t.TempDir()
	emptyLock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	writeFile(t, filepath.Dir(emptyLock), ".terraform.lock.hcl", "# nothing locked\n")
	broken := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	writeFile(t, filepath.Dir(broken), ".terraform.lock.hcl", "provider \"x\" {\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"--from a tree without lock files", []string{"ui", dir, "--from", empty}, []string{"--from " + empty, "no .terraform.lock.hcl under it"}},
		{"--lock of a lock that locks nothing", []string{"ui", dir, "--lock", emptyLock}, []string{emptyLock, "locks no provider"}},
		{"--lock of a broken lock", []string{"ui", dir, "--lock", broken}, []string{"--lock", broken}},
		{"--lock of a missing file", []string{"ui", dir, "--lock", filepath.Join(empty, "nope.hcl")}, []string{"nope.hcl"}},
		{"--spec and --lock", []string{"ui", "--spec", filepath.Join(empty, "m.hcl"), "--lock", emptyLock}, []string{"--spec or --lock/--from"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, tc.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr %q", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}
