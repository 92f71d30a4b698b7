package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// writeTree writes files (slash paths relative to root) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lock --from writes into each configuration under the tree the lock file
// `terraform providers lock` writes when run in it, byte for byte, from the
// same origin registry: a configuration without a lock file gets the newest
// versions its modules' merged constraints allow; one with a lock file
// keeps the versions it locks, gains the other platform's hashes, and its
// entries get the configuration's constraints; a lock file pinning a
// version the constraints exclude is refused by both (exit 1), and left
// alone while the others are written.
func TestLockFromWritesWhatTerraformProvidersLockWrites(t *testing.T) {
	reg := specRegistry(t, []string{"alpha", "beta", "gamma"}, map[string][]string{
		"alpha": {"1.0.0", "1.1.0", "1.2.0", "2.0.0"}, "beta": {"0.9.0", "1.0.0", "1.5.0"}, "gamma": {"3.0.0", "3.1.0"},
	})
	host := reg.Host()
	ca := caFile(t, reg.CertPEM())
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	src := func(typ string) string { return host + "/acme/" + typ }
	files := map[string]string{
		"infra/main.tf": fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \">= 1.0\" }\n  }\n}\nmodule \"net\" {\n  source = \"../modules/net\"\n}\n", src("alpha")),
		"modules/net/main.tf": fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"< 2.0\" }\n    beta  = { source = %q, version = \"~> 1.0\" }\n    gamma = { source = %q }\n  }\n}\n",
			src("alpha"), src("beta"), src("gamma")),
		"app/main.tf":   fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q }\n    beta = { source = %q, version = \">= 0.9\" }\n  }\n}\n", src("alpha"), src("beta")),
		"stale/main.tf": fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \">= 1.2\" }\n  }\n}\n", src("alpha")),
	}
	byTerraform, byTfmirror := t.TempDir(), t.TempDir()
	writeTree(t, byTerraform, files)
	writeTree(t, byTfmirror, files)
	// app and stale lock older versions, for linux_amd64 only so far.
	for _, pin := range [][3]string{{"app", "alpha", "1.1.0"}, {"app", "beta", "1.0.0"}, {"stale", "alpha", "1.1.0"}} {
		lock := filepath.Join(byTfmirror, pin[0], ".terraform.lock.hcl")
		if r := run(t, nil, "lock", "registry://"+host, "--lock", lock, "-p", "acme/"+pin[1], "-v", pin[2], "--platform", "linux_amd64", "--ca-cert", ca); r.code != 0 {
			t.Fatalf("lock %v: exit %d\n%s", pin, r.code, r.stderr)
		}
	}
	for _, c := range []string{"app", "stale"} {
		writeFile(t, filepath.Join(byTerraform, c), ".terraform.lock.hcl", readFile(t, filepath.Join(byTfmirror, c, ".terraform.lock.hcl")))
	}
	staleBefore := readFile(t, filepath.Join(byTfmirror, "stale", ".terraform.lock.hcl"))

	plats := []string{"-platform=linux_amd64", "-platform=darwin_arm64"}
	for _, c := range []string{"infra", "app"} {
		dir := filepath.Join(byTerraform, c)
		runTerraform(t, tf, env, "-chdir="+dir, "get", "-no-color")
		runTerraform(t, tf, env, append([]string{"-chdir=" + dir, "providers", "lock", "-no-color"}, plats...)...)
	}
	if out, err := runTerraformErr(tf, env, append([]string{"-chdir=" + filepath.Join(byTerraform, "stale"), "providers", "lock", "-no-color"}, plats...)...); err == nil {
		t.Fatalf("terraform providers lock accepted a locked version its constraints exclude:\n%s", out)
	}

	r := run(t, nil, "lock", "registry://"+host, "--from", byTfmirror, "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca)
	if r.code != 1 {
		t.Fatalf("lock --from with a stale lock file: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "locked at 1.1.0, which the configuration's constraints \">= 1.2\"") {
		t.Errorf("no message naming the stale lock:\n%s%s", r.stdout, r.stderr)
	}
	for _, c := range []string{"infra", "app"} {
		want := readFile(t, filepath.Join(byTerraform, c, ".terraform.lock.hcl"))
		if got := readFile(t, filepath.Join(byTfmirror, c, ".terraform.lock.hcl")); got != want {
			t.Errorf("%s: tfmirror lock --from wrote\n%s\nterraform providers lock wrote\n%s", c, got, want)
		}
	}
	if got := readFile(t, filepath.Join(byTfmirror, "stale", ".terraform.lock.hcl")); got != staleBefore {
		t.Errorf("the stale lock file was changed:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(byTfmirror, "modules", "net", ".terraform.lock.hcl")); err == nil {
		t.Errorf("a lock file was written for a called module")
	}

	// Again: nothing to add; the stale file still fails.
	r = run(t, nil, "lock", "registry://"+host, "--from", byTfmirror, "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca)
	if r.code != 1 || strings.Count(r.stderr, "already has every hash") != 2 {
		t.Errorf("second lock --from: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		// Without --platform, a configuration that locks nothing yet says
		// no platform.
		{[]string{"lock", "registry://" + host, "--from", newConfig(t, src("alpha")), "--ca-cert", ca}, "--platform"},
		{[]string{"lock", "registry://" + host, "--from", byTfmirror, "--platform", "linux_amd64", "-p", "acme/alpha"}, "do not go with --from"},
		{[]string{"lock", "registry://" + host, "--from", t.TempDir(), "--platform", "linux_amd64"}, "no configuration"},
	} {
		if r := run(t, nil, c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// check --from checks every lock file under a tree against one place in
// one report, each row naming its lock file, and exits 1 when init would
// fail with any; lock files under .terraform/ are not configurations'. A
// package two lock files lock is downloaded and hashed once.
func TestCheckFromChecksEveryLockFile(t *testing.T) {
	reg := specRegistry(t, []string{"alpha", "beta"}, map[string][]string{"alpha": {"1.0.0", "1.1.0"}, "beta": {"2.0.0"}})
	host := reg.Host()
	ca := caFile(t, reg.CertPEM())
	tree := t.TempDir()
	lock := func(dir, typ, v string) {
		t.Helper()
		os.MkdirAll(filepath.Join(tree, dir), 0o755)
		r := run(t, nil, "lock", "registry://"+host, "--lock", filepath.Join(tree, dir, ".terraform.lock.hcl"), "-p", "acme/"+typ, "-v", v,
			"--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca)
		if r.code != 0 {
			t.Fatalf("lock %s %s: exit %d\n%s", dir, typ, r.code, r.stderr)
		}
	}
	lock("a", "alpha", "1.1.0")
	lock("b", "alpha", "1.1.0")
	lock("b", "beta", "2.0.0")
	// c locks alpha 1.0.0 with a hash of nothing the registry serves.
	writeTree(t, tree, map[string]string{"c/.terraform.lock.hcl": fmt.Sprintf(`provider %q {
  version = "1.0.0"
  hashes = [
    "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  ]
}
`, host+"/acme/alpha")})
	writeTree(t, tree, map[string]string{"d/.terraform/.terraform.lock.hcl": readFile(t, filepath.Join(tree, "c", ".terraform.lock.hcl"))})

	reg.Reset()
	r := run(t, nil, "check", "registry://"+host, "--from", tree, "--ca-cert", ca, "--json")
	if r.code != 1 {
		t.Fatalf("check --from with a bad lock file: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rows []struct{ Provider, Version, Platform, Status, Detail, Lock string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("check --from --json: %v\n%s", err, r.stdout)
	}
	got := map[string][]string{}
	for _, row := range rows {
		rel, _ := filepath.Rel(tree, row.Lock)
		typ := row.Provider[strings.LastIndex(row.Provider, "/")+1:]
		got[filepath.Dir(filepath.ToSlash(rel))] = append(got[filepath.Dir(filepath.ToSlash(rel))], fmt.Sprintf("%s %s %s %s", row.Status, typ, row.Version, row.Platform))
	}
	want := map[string]string{
		"a": "ok alpha 1.1.0 darwin_arm64, ok alpha 1.1.0 linux_amd64",
		"b": "ok alpha 1.1.0 darwin_arm64, ok alpha 1.1.0 linux_amd64, ok beta 2.0.0 darwin_arm64, ok beta 2.0.0 linux_amd64",
		// c's one h1: is no package any place holds: init fails on the
		// platform it is of, which no place can tell.
		"c": "missing alpha 1.0.0 _",
	}
	if len(got) != len(want) {
		t.Errorf("rows for the lock files %v, want a, b and c:\n%s", got, r.stdout)
	}
	for dir, w := range want {
		if g := strings.Join(got[dir], ", "); g != w {
			t.Errorf("%s: rows %q, want %q", dir, g, w)
		}
	}

	os.Remove(filepath.Join(tree, "c", ".terraform.lock.hcl"))
	reg.Reset()
	r = run(t, nil, "check", "registry://"+host, "--from", tree, "--ca-cert", ca)
	if r.code != 0 || !strings.Contains(r.stdout, "LOCK") || !strings.Contains(r.stdout, filepath.Join(tree, "b", ".terraform.lock.hcl")) || !strings.Contains(r.stderr, "2 lock files") {
		t.Errorf("check --from of good lock files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// alpha 1.1.0 is locked twice and downloaded once: 4 packages in all.
	if n := reg.Count(registrytest.KindArchive); n != 4 {
		t.Errorf("check --from downloaded %d archives, want 4 (each package once)", n)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "registry://" + host, "--from", tree, "--lock", filepath.Join(tree, "a", ".terraform.lock.hcl")}, "not both"},
		{[]string{"check", "registry://" + host, "--from", t.TempDir()}, "nothing to check"},
		{[]string{"check", "registry://" + host}, "--from DIR"},
	} {
		if r := run(t, nil, c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// newConfig is a configuration requiring source, with no lock file yet.
func newConfig(t *testing.T, source string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    p = { source = %q }\n  }\n}\n", source))
	return dir
}
