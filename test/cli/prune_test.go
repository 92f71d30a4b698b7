package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// lockFile writes a .terraform.lock.hcl at path locking each provider
// address at its version (no hashes: prune reads only the versions).
func lockFile(t *testing.T, path string, locks map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n")
	addrs := make([]string, 0, len(locks))
	for a := range locks {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		fmt.Fprintf(&b, "\nprovider %q {\n  version = %q\n}\n", a, locks[a])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// held lists the mirror's packages as "PROVIDER VERSION PLATFORM", sorted.
func held(t *testing.T, dir string) []string {
	t.Helper()
	r := run(t, nil, "ls", dir, "--json")
	var rows []struct{ Provider, Version, Platform string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("ls --json: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var out []string
	for _, row := range rows {
		out = append(out, row.Provider+" "+row.Version+" "+row.Platform)
	}
	sort.Strings(out)
	return out
}

func versionsHeld(t *testing.T, dir, provider string) string {
	t.Helper()
	seen := map[string]bool{}
	var vs []string
	for _, h := range held(t, dir) {
		f := strings.Fields(h)
		if f[0] == provider && !seen[f[1]] {
			seen[f[1]] = true
			vs = append(vs, f[1])
		}
	}
	return strings.Join(vs, " ")
}

// prune --keep N keeps the newest N versions of each provider and every
// version a lock file under --keep-locked locks (but not one in a
// .terraform directory); it prints the plan and removes nothing without
// --yes; with --yes the mirror verifies clean afterwards.
func TestPruneKeepAndKeepLocked(t *testing.T) {
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"},
		[]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	dir := sourceMirror(t, seeds)
	configs := t.TempDir()
	lockFile(t, filepath.Join(configs, "infra", ".terraform.lock.hcl"), map[string]string{"example.com/acme/alpha": "1.0.0"})
	lockFile(t, filepath.Join(configs, "platform", "eu", ".terraform.lock.hcl"), map[string]string{"example.com/acme/beta": "1.1.0", "example.com/acme/alpha": "2.0.0"})
	lockFile(t, filepath.Join(configs, "infra", ".terraform", "modules", "x", ".terraform.lock.hcl"), map[string]string{"example.com/acme/beta": "1.0.0"})
	before := held(t, dir)

	r := run(t, nil, "prune", dir, "--keep", "1", "--keep-locked", configs)
	if r.code != 0 || !strings.Contains(r.stderr, "8 remove, 8 keep") || !strings.Contains(r.stderr, "run again with --yes") {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !hasLineWith(r.stdout, "keep", "example.com/acme/alpha", "1.0.0", "linux_amd64", "locked by "+filepath.Join(configs, "infra", ".terraform.lock.hcl")) ||
		!hasLineWith(r.stdout, "remove", "example.com/acme/beta", "1.0.0", "darwin_arm64", "older than the newest 1 (2.0.0)") {
		t.Fatalf("plan rows:\n%s", r.stdout)
	}
	if got := held(t, dir); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Fatalf("prune without --yes changed the mirror:\n%v", got)
	}

	r = run(t, nil, "prune", dir, "--keep", "1", "--keep-locked", configs, "--yes", "--json")
	var rows []struct{ Provider, Version, Platform, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("prune --yes --json: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	count := map[string]int{}
	for _, row := range rows {
		count[row.Status]++
	}
	if len(rows) != 16 || count["keep"] != 8 || count["removed"] != 8 {
		t.Fatalf("prune --yes --json rows: %v\n%s", count, r.stdout)
	}
	if got := versionsHeld(t, dir, "example.com/acme/alpha"); got != "1.0.0 2.0.0" {
		t.Errorf("alpha holds %s, want 1.0.0 (locked) and 2.0.0 (newest, locked)", got)
	}
	if got := versionsHeld(t, dir, "example.com/acme/beta"); got != "1.1.0 2.0.0" {
		t.Errorf("beta holds %s, want 1.1.0 (locked) and 2.0.0 (newest)", got)
	}
	if r := run(t, nil, "verify", dir); r.code != 0 {
		t.Fatalf("verify after prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Nothing left to remove: a second prune says so and succeeds.
	r = run(t, nil, "prune", dir, "--keep", "1", "--keep-locked", configs, "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "8 keep") || strings.Contains(r.stderr, "remove") {
		t.Fatalf("second prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestPruneUsageErrors(t *testing.T) {
	dir := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	configs := t.TempDir()
	bad := filepath.Join(configs, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, ".terraform.lock.hcl"), []byte("provider \"example.com/acme/alpha\" {\n  version = \n}\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", dir}, "prune needs --keep N"},
		{[]string{"prune", dir, "--keep", "-1"}, "--keep -1"},
		{[]string{"prune", dir, "--keep", "1", "--keep-locked", filepath.Join(configs, "none")}, "no such directory"},
		{[]string{"prune", dir, "--keep", "1", "--keep-locked", t.TempDir()}, "no .terraform.lock.hcl under it"},
		{[]string{"prune", dir, "--keep", "1", "--keep-locked", configs}, filepath.Join(bad, ".terraform.lock.hcl") + ":2"},
		{[]string{"prune", "https://127.0.0.1:1/mirror/", "--keep", "1", "-p", "example.com/acme/alpha"}, "cannot be changed"},
		{[]string{"prune", filepath.Join(dir, "missing"), "--keep", "1"}, "no such directory"},
	} {
		r := run(t, nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
