package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// A registry lock (every platform's signed zh:) against a mirror that
// keeps the signed SHA256SUMS but holds only linux_amd64 and darwin_arm64:
// darwin_arm64 and windows_amd64, of which the lock holds only the signed
// zh:, are assumed. check
// (--lock, --from, plain and --json), sync (--lock, --from, plain and
// --json) and lock say so in the same words (lockcheck.AssumedNote), and
// --platform narrows it away (issue 34).
func TestAssumedPlatformsAreSaidAlike(t *testing.T) {
	reg := manifestRegistry(t)
	ca := caFile(t, reg.CertPEM())
	host := reg.Host()
	dir := t.TempDir()
	lock := filepath.Join(mustMkdir(t, filepath.Join(dir, "infra")), ".terraform.lock.hcl")
	if r := run(t, nil, "lock", "registry://"+host, "--lock", lock, "-p", host+"/acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--ca-cert", ca); r.code != 0 {
		t.Fatalf("lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mirror := filepath.Join(dir, "mirror")
	if r := run(t, nil, "sync", "registry://"+host, mirror, "-p", "acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// darwin_arm64 too: the mirror holds it, but the lock holds only its
	// signed zh:.
	darwin, _ := backends.ParsePlatform("darwin_arm64")
	win, _ := backends.ParsePlatform("windows_amd64")
	note := lockcheck.AssumedNote([]backends.Platform{darwin, win})
	says := func(t *testing.T, what string, r result, wantCode int) {
		t.Helper()
		if r.code != wantCode || !strings.Contains(r.stdout+r.stderr, note) {
			t.Errorf("%s: exit %d (want %d), no %q:\n%s%s", what, r.code, wantCode, note, r.stdout, r.stderr)
		}
	}

	says(t, "check --lock", run(t, nil, "check", mirror, "--lock", lock), 1)
	says(t, "check --from", run(t, nil, "check", mirror, "--from", filepath.Dir(lock)), 1)
	r := run(t, nil, "check", mirror, "--lock", lock, "--json")
	var rows []struct{ Platform, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.stdout)
	}
	noted := false
	for _, row := range rows {
		noted = noted || row.Status == "ok" && row.Detail == "note: "+note
	}
	if !noted {
		t.Errorf("check --json has no note row %q:\n%s", note, r.stdout)
	}
	// Narrowed, the lock is about the platforms named: nothing assumed.
	if r := run(t, nil, "check", mirror, "--lock", lock, "--platform", "linux_amd64", "--platform", "darwin_arm64"); r.code != 0 || strings.Contains(r.stdout+r.stderr, "assumed") {
		t.Errorf("check --platform: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, from := range [][]string{{"--lock", lock}, {"--from", filepath.Dir(lock)}} {
		args := append([]string{"sync", mirror, filepath.Join(t.TempDir(), "m")}, from...)
		// The source lacks windows_amd64: nothing to copy there, no failure.
		says(t, "sync "+from[0], run(t, nil, args...), 0)
		r := run(t, nil, append(args[:2:2], append([]string{filepath.Join(t.TempDir(), "m")}, append(from, "--json")...)...)...)
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			var ev struct{ Type, Detail string }
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "note" && strings.HasSuffix(ev.Detail, note) {
				found = true
			}
		}
		if !found {
			t.Errorf("sync %s --json: no note line with %q:\n%s", from[0], note, r.stdout)
		}
	}

	before, _ := os.ReadFile(lock)
	says(t, "lock without --platform", run(t, nil, "lock", mirror, "--lock", lock), 1)
	if after, _ := os.ReadFile(lock); string(after) != string(before) {
		t.Errorf("lock changed the file though the mirror lacks an assumed platform")
	}
}

// check of one mirror that holds a package other than locked names its
// platform wherever a tie tells the lock is about it (issue 34): the
// hashes the mirror's index states and the signed SHA256SUMS it keeps
// (tfmirror sync writes both) tie the locked hashes of darwin_arm64, so
// the swapped darwin_arm64 zip is a mismatch on darwin_arm64. A mirror
// without them (as terraform providers mirror writes it) cannot tell:
// "init on some platform would fail"; --tie-with the origin tells again.
func TestCheckNamesThePlatformOfAPackageHeldWrongly(t *testing.T) {
	reg := manifestRegistry(t)
	ca := caFile(t, reg.CertPEM())
	host := reg.Host()
	dir := t.TempDir()
	lock := filepath.Join(dir, ".terraform.lock.hcl")
	if r := run(t, nil, "lock", "registry://"+host, "--lock", lock, "-p", host+"/acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca); r.code != 0 {
		t.Fatalf("lock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mirror := filepath.Join(dir, "mirror")
	if r := run(t, nil, "sync", "registry://"+host, mirror, "-p", "acme/alpha", "-v", "1.0.0", "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pkgDir := filepath.Join(mirror, host, "acme", "alpha")
	zip := filepath.Join(pkgDir, "terraform-provider-alpha_1.0.0_darwin_arm64.zip")
	if err := os.WriteFile(zip, backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64"), "swapped"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, wantNamed bool, more ...string) {
		t.Helper()
		r := run(t, nil, append([]string{"check", mirror, "--lock", lock, "--json"}, more...)...)
		var rows []struct{ Platform, Status, Detail string }
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 1 {
			t.Fatalf("check: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		named, some := false, false
		for _, row := range rows {
			named = named || row.Platform == "darwin_arm64" && row.Status == "mismatch" && strings.Contains(row.Detail, "--platform darwin_arm64 --force")
			some = some || strings.Contains(row.Detail, "init on some platform would fail")
		}
		if named != wantNamed || some == wantNamed {
			t.Errorf("darwin_arm64 named %v (want %v), \"some platform\" %v:\n%s", named, wantNamed, some, r.stdout)
		}
	}
	check(t, true)
	docs, _ := filepath.Glob(filepath.Join(pkgDir, "*.json"))
	for _, d := range append(docs, filepath.Join(pkgDir, ".tfmirror-provenance")) {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	check(t, false)
	check(t, true, "--tie-with", "registry://"+host, "--ca-cert", ca)
}
