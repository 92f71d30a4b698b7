package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noCrash fails the test when the process died of a Go runtime error (a
// stack overflow exits 2, like a usage error, so the code alone says
// nothing).
func noCrash(t *testing.T, what string, r result) {
	t.Helper()
	if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("%s: the process crashed (exit %d):\n%.600s", what, r.code, r.stderr)
	}
}

// Deeply nested brackets in the CLI configuration, which every command
// reads, or in a lock file kill a process that hands them to hcl (a Go stack
// overflow, which no recover catches). The built binary refuses them with
// the file and line instead, and commands that only take credentials from
// the configuration still run.
func TestCLIDeeplyNestedFiles(t *testing.T) {
	const levels = 200_000 // 400 KB; hcl's parser overflows the stack at this depth
	dir := t.TempDir()
	mirror := lockMirror(t)
	deep := "[" + strings.Repeat("[", levels) + strings.Repeat("]", levels) + "]"
	tfrc := writeFile(t, dir, "deep.tfrc", "plugin_cache_dir = \"/tmp\"\n\nx = "+deep+"\n")
	tfrcJSON := writeFile(t, dir, "deep.tfrc.json", "{\n  \"x\": "+deep+"\n}\n")
	for _, cfg := range []struct{ path, pos string }{{tfrc, "deep.tfrc:3:"}, {tfrcJSON, "deep.tfrc.json:2:"}} {
		env := []string{"TF_CLI_CONFIG_FILE=" + cfg.path}
		r := run(t, env, "config")
		noCrash(t, "config", r)
		if r.code != 2 || !strings.Contains(r.stderr, cfg.pos) || !strings.Contains(r.stderr, "Nesting too deep") {
			t.Errorf("config with %s: exit %d, want 2 and %q:\n%s%.600s", cfg.path, r.code, cfg.pos, r.stdout, r.stderr)
		}
		r = run(t, env, "ls", mirror, "-p", "acme/alpha", "--platform", "linux_amd64")
		noCrash(t, "ls", r)
		if r.code != 0 || !strings.Contains(r.stdout, "1.2.0") {
			t.Errorf("ls with %s: exit %d\n%s%.600s", cfg.path, r.code, r.stdout, r.stderr)
		}
	}

	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, dir, "empty.tfrc", "")}
	lock := writeFile(t, dir, "deep.lock.hcl", `provider "example.com/acme/alpha" {
  version = "1.2.0"
  hashes  = `+deep+`
}
`)
	for _, args := range [][]string{
		{"check", mirror, "--lock", lock},
		{"lock", mirror, "--lock", lock, "--platform", "linux_amd64"},
		{"ls", mirror, "--lock", lock},
	} {
		r := run(t, env, args...)
		noCrash(t, args[0], r)
		if r.code != 2 || !strings.Contains(r.stderr, "deep.lock.hcl:3:") || !strings.Contains(r.stderr, "Nesting too deep") {
			t.Errorf("%s: exit %d, want 2 and deep.lock.hcl:3:\n%s%.600s", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(lock); !strings.Contains(string(b), deep) {
		t.Error("lock rewrote the file it refused")
	}
}

// An oversized lock file or CLI configuration is refused before it is read
// in full, with a message naming it: a 100 MB lock file once took minutes
// and gigabytes.
func TestCLIOversizedFiles(t *testing.T) {
	dir := t.TempDir()
	mirror := lockMirror(t)
	var b strings.Builder
	b.WriteString("# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n")
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "\nprovider \"example.com/acme/p%d\" {\n  version = \"1.0.0\"\n  hashes = [\n    \"h1:x=\",\n  ]\n}\n", i)
	}
	lock := writeFile(t, dir, "big.lock.hcl", b.String())
	env := []string{"TF_CLI_CONFIG_FILE=" + writeFile(t, dir, "empty.tfrc", "")}
	for _, args := range [][]string{
		{"check", mirror, "--lock", lock},
		{"lock", mirror, "--lock", lock, "--platform", "linux_amd64"},
	} {
		r := run(t, env, args...)
		noCrash(t, args[0], r)
		if r.code != 2 || !strings.Contains(r.stderr, lock+": ") || !strings.Contains(r.stderr, "larger than 1 MiB") {
			t.Errorf("%s: exit %d, want 2 naming %s:\n%s%.600s", args[0], r.code, lock, r.stdout, r.stderr)
		}
	}
	if got, _ := os.ReadFile(lock); string(got) != b.String() {
		t.Error("lock rewrote the file it refused")
	}

	b.Reset()
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "credentials \"host%d.example\" {\n  token = \"t\"\n}\n", i)
	}
	tfrc := filepath.Join(dir, "big.tfrc")
	writeFile(t, dir, "big.tfrc", b.String())
	r := run(t, []string{"TF_CLI_CONFIG_FILE=" + tfrc}, "config")
	noCrash(t, "config", r)
	if r.code != 2 || !strings.Contains(r.stderr, tfrc+": ") || !strings.Contains(r.stderr, "larger than 1 MiB") {
		t.Errorf("config: exit %d\n%s%.600s", r.code, r.stdout, r.stderr)
	}
}
