package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// demoWorld writes the demo's world (tfmirror demo --keep W --no-ui) and
// returns W.
func demoWorld(t *testing.T) string {
	t.Helper()
	w := filepath.Join(t.TempDir(), "W")
	if r := run(t, nil, "demo", "--keep", w, "--no-ui"); r.code != 0 {
		t.Fatalf("demo --keep: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return w
}

// Issue 34 on the demo's own world: one answer for the platforms the lock
// is about. primary holds every package the lock needs, and platforms
// nobody locked beside them: check says ok. sync --from copies what the
// lock is about, fails no job for a platform it is not about, and names
// the one package secondary holds wrongly and how to replace it; with
// --force, check of secondary is then ok.
func TestDemoWorldLockGaps(t *testing.T) {
	w := demoWorld(t)
	lock := filepath.Join(w, "infra", ".terraform.lock.hcl")
	primary, secondary := filepath.Join(w, "primary"), filepath.Join(w, "secondary")
	for _, args := range [][]string{
		{"check", primary, "--lock", lock},
		{"check", primary, "--from", filepath.Join(w, "infra")},
	} {
		r := run(t, nil, args...)
		if r.code != 0 || strings.Contains(r.stdout, "mismatch") || strings.Contains(r.stdout, "missing") {
			t.Errorf("%v: exit %d, want 0\n%s%s", args[2:], r.code, r.stdout, r.stderr)
		}
	}

	r := run(t, nil, "sync", primary, secondary, "--from", filepath.Join(w, "infra"))
	if r.code != 1 || !strings.Contains(r.stderr, " 0 failed") {
		t.Errorf("sync --from: exit %d, want 1 (secondary holds a wrong package) and no failed job\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	if n := strings.Count(out, "conflict "); n != 1 || !strings.Contains(out, "conflict registry.terraform.io/acme/cloud 2.0.0 linux_amd64") ||
		!strings.Contains(out, "holds a different package than "+lock+" locks") || !strings.Contains(out, "--force") {
		t.Errorf("sync --from names %d packages held wrongly; want cloud 2.0.0 linux_amd64, with --force to replace it\n%s", n, out)
	}
	for _, plat := range []string{"linux_arm64", "windows_amd64", "darwin_amd64"} {
		if strings.Contains(out, plat) {
			t.Errorf("sync --from copied or failed %s, which the lock is not about\n%s", plat, out)
		}
	}
	if r := run(t, nil, "check", secondary, "--lock", lock); r.code != 1 {
		t.Errorf("check of secondary before --force: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = run(t, nil, "sync", primary, secondary, "--from", filepath.Join(w, "infra"), "--force")
	if r.code != 0 || !strings.Contains(r.stderr, "1 synced") {
		t.Errorf("sync --from --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"check", secondary, "--lock", lock},
		{"check", secondary, "--from", filepath.Join(w, "infra")},
	} {
		if r := run(t, nil, args...); r.code != 0 {
			t.Errorf("%v after sync --force: exit %d, want 0\n%s%s", args[2:], r.code, r.stdout, r.stderr)
		}
	}
}

// A malformed hash beside the right ones is named as malformed, with
// file:line, and is no gap: init passes over it, so check is ok.
func TestCheckMalformedLockedHash(t *testing.T) {
	w := demoWorld(t)
	lock := filepath.Join(w, "infra", ".terraform.lock.hcl")
	src := readFile(t, lock)
	bad := strings.Replace(src, "  hashes = [\n", "  hashes = [\n    \"h1:!!!not-base64@@@\",\n    \"zh:"+strings.Repeat("a", 63)+"\",\n", 1)
	path := writeFile(t, t.TempDir(), "bad.lock.hcl", bad)
	r := run(t, nil, "check", filepath.Join(w, "primary"), "--lock", path)
	if r.code != 0 {
		t.Errorf("check with malformed hashes beside the right ones: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"malformed: " + path + ":8:", "malformed: " + path + ":9:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check does not say %q\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "init on some platform would fail") {
		t.Errorf("a malformed hash counted as a gap\n%s", r.stdout)
	}
}
