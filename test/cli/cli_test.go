package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// tfmirrorBin is the real binary, built once for the CLI tests.
var tfmirrorBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tfmirror-bin-")
	if err != nil {
		panic(err)
	}
	tfmirrorBin = filepath.Join(dir, "tfmirror")
	// The module root is two levels up.
	build := exec.Command("go", "build", "-o", tfmirrorBin, ".")
	build.Dir = filepath.Join("..", "..")
	out, err := build.CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("go build: " + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the built binary with args; env entries are added to the
// environment.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(tfmirrorBin, args...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(t, cmd)
}

// runCmd runs cmd to its end and returns its output and exit code; a
// command that cannot be started fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func fsMirror(t *testing.T) (string, []backendtest.Seed) {
	t.Helper()
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "registry.terraform.io/hashicorp/null"},
		[]string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64"})
	backendtest.WritePacked(t, dir, seeds)
	return dir, seeds
}

func TestCLILsAndHash(t *testing.T) {
	dir, seeds := fsMirror(t)
	r := run(t, nil, "ls", dir, "--json")
	if r.code != 0 {
		t.Fatalf("ls: %d %s", r.code, r.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, r.stdout)
	}
	if len(rows) != len(seeds) {
		t.Fatalf("ls listed %d packages, want %d", len(rows), len(seeds))
	}
	for _, k := range []string{"provider", "version", "platform", "hashes", "size"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("ls --json row lacks %q: %v", k, rows[0])
		}
	}
	r = run(t, nil, "ls", dir, "-p", "hashicorp/null", "-v", "~> 1.1", "--platform", "linux_amd64")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, "registry.terraform.io/hashicorp/null  1.1.0") {
		t.Fatalf("ls with selection: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	zip := filepath.Join(dir, "example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip")
	r = run(t, nil, "hash", zip, "--json")
	var hs []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &hs); err != nil || len(hs) != 1 {
		t.Fatalf("hash --json: %v\n%s", err, r.stdout)
	}
	if !strings.HasPrefix(hs[0]["h1"], "h1:") || !strings.HasPrefix(hs[0]["zh"], "zh:") || hs[0]["path"] != zip {
		t.Fatalf("hash row: %v", hs[0])
	}
	r = run(t, nil, "hash", filepath.Join(dir, "nope.zip"))
	if r.code != 1 || !strings.Contains(r.stderr, "nope.zip") {
		t.Fatalf("hash of a missing file: %d %s", r.code, r.stderr)
	}
}

func TestCLIUsageErrors(t *testing.T) {
	dir, _ := fsMirror(t)
	noConfig := []string{"TF_CLI_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none.tfrc")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ls"}, "no MIRROR given"},
		{[]string{"ls", dir, "--platform", "linux"}, "--platform"},
		{[]string{"ls", dir, "-v", ">= banana"}, "--version"},
		{[]string{"ls", dir, "-p", "aws"}, "--provider"},
		{[]string{"ls", filepath.Join(dir, "missing")}, "no such directory"},
		{[]string{"ls", "http://example.com/"}, "https"},
		{[]string{"ls", "--bogus", dir}, "unknown flag"},
		{[]string{"sync", dir}, "SRC and DST"},
		{[]string{"hash"}, "hash takes PATH..."},
		{[]string{"modules", "frobnicate"}, `unknown command "frobnicate"`},
		// One message for a tree that is not there, whichever command walks it.
		{[]string{"check", dir, "--from", filepath.Join(dir, "none")}, "none: no such directory"},
		{[]string{"sync", dir, filepath.Join(dir, "x"), "--from", filepath.Join(dir, "none")}, "none: no such directory"},
		{[]string{"lock", dir, "--platform", "linux_amd64", "--from", filepath.Join(dir, "none")}, "none: no such directory"},
	} {
		r := run(t, noConfig, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func TestCLIVerifyDiffSync(t *testing.T) {
	src, seeds := fsMirror(t)
	dst := filepath.Join(t.TempDir(), "dst")

	// A destination that does not exist yet is empty: a first sync can be
	// previewed, and nothing is created.
	r := run(t, nil, "diff", src, dst)
	if r.code != 1 || !strings.Contains(r.stderr, "8 missing") {
		t.Fatalf("diff to a missing dir: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("diff created %s: %v", dst, err)
	}
	os.MkdirAll(dst, 0o755)
	r = run(t, nil, "diff", src, dst, "--json")
	if r.code != 1 {
		t.Fatalf("diff with missing packages: exit %d, want 1", r.code)
	}
	var findings []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &findings); err != nil {
		t.Fatalf("decoding r.stdout: %v\n%s", err, r.stdout)
	}
	if len(findings) != len(seeds) || findings[0]["status"] != "missing" {
		t.Fatalf("diff --json: %s", r.stdout)
	}

	r = run(t, nil, "sync", src, dst, "--json")
	if r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	types := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("sync --json line %q: %v", sc.Text(), err)
		}
		types[ev["type"].(string)]++
	}
	if types["done"] != len(seeds) || types["queued"] != len(seeds) || types["index_written"] != 2 {
		t.Fatalf("sync events: %v", types)
	}

	r = run(t, nil, "verify", dst)
	if r.code != 0 {
		t.Fatalf("verify after sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, "diff", src, dst)
	if r.code != 0 || !strings.Contains(r.stderr, "8 present") {
		t.Fatalf("diff after sync: %d %s", r.code, r.stderr)
	}
	r = run(t, nil, "sync", src, dst)
	if r.code != 0 || !strings.Contains(r.stderr, "0 synced (0 B)") || !strings.Contains(r.stderr, "8 already present") {
		t.Fatalf("second sync: %d %s", r.code, r.stderr)
	}
	// With nothing to do, --json still ends with the summary.
	r = run(t, nil, "sync", src, dst, "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || r.code != 0 {
		t.Fatalf("no-op sync --json: %d %v\n%s", r.code, err, r.stdout)
	}
	if last["type"] != "summary" || last["present"] != float64(8) || last["done"] != float64(0) || last["ok"] != true {
		t.Fatalf("no-op sync --json summary: %v", last)
	}

	// Tamper with an archive in the destination: verify names it and exits 1.
	victim := filepath.Join(dst, "example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip")
	os.WriteFile(victim, backendtest.ProviderZip(t, seeds[0].Package, "evil"), 0o644)
	r = run(t, nil, "verify", dst)
	if r.code != 1 || !strings.Contains(r.stdout, "mismatch") || !strings.Contains(r.stdout, "example.com/acme/alpha 1.0.0 linux_amd64: h1 mismatch against mirror index") {
		t.Fatalf("verify tampered: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// An incremental sync trusts what the destination states (the tampered
	// file hides behind a correct index); --verify-existing sees the conflict
	// and leaves it alone; with --force it replaces the file.
	if r = run(t, nil, "sync", src, dst); r.code != 0 {
		t.Fatalf("incremental sync: %d %s", r.code, r.stderr)
	}
	r = run(t, nil, "sync", src, dst, "--verify-existing")
	if r.code != 1 || !strings.Contains(r.stderr, "conflict") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("sync --verify-existing over a conflict: %d %s", r.code, r.stderr)
	}
	r = run(t, nil, "sync", src, dst, "--verify-existing", "--force")
	if r.code != 0 {
		t.Fatalf("sync --force: %d %s", r.code, r.stderr)
	}
	if r = run(t, nil, "verify", dst); r.code != 0 {
		t.Fatalf("verify after --force: %d %s", r.code, r.stdout)
	}
	// Deleting an archive the index lists is reported as missing.
	os.Remove(victim)
	r = run(t, nil, "verify", dst, "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"status": "missing"`) {
		t.Fatalf("verify with a listed archive deleted: %d %s", r.code, r.stdout)
	}
}

func TestCLIHelpHasExamples(t *testing.T) {
	top := run(t, nil, "--help")
	_, list, ok := strings.Cut(top.stdout, "Available Commands:")
	if !ok {
		t.Fatalf("tfmirror --help lists no commands:\n%s", top.stdout)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		name := strings.Fields(line)[0]
		if name == "help" || name == "completion" {
			continue
		}
		n++
		if r := run(t, nil, name, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("tfmirror %s --help has no example (exit %d)", name, r.code)
		}
	}
	if n < 10 {
		t.Fatalf("only %d commands listed:\n%s", n, list)
	}
}

// oci_credentials blocks of the user's CLI configuration open a registry that
// requires a login; without them the registry's refusal is named.
func TestCLIOCICredentialsFromCLIConfig(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{Users: map[string]string{"ci": "s3cret"}})
	src, _ := fsMirror(t)
	home := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "cli.tfrc")
	os.WriteFile(cfg, []byte(fmt.Sprintf("oci_credentials %q {\n  username = \"ci\"\n  password = \"s3cret\"\n}\n", reg.Host())), 0o644)
	dst := "oci://" + reg.Host() + "/tf/${namespace}/${type}"
	withCfg := []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + cfg, "DOCKER_CONFIG=" + home, "REGISTRY_AUTH_FILE=" + filepath.Join(home, "none.json"), "XDG_RUNTIME_DIR=" + home}
	r := run(t, withCfg, "sync", src, dst, "--ca-cert", reg.CAFile(), "-p", "example.com/acme/alpha")
	if r.code != 0 {
		t.Fatalf("sync with oci_credentials: %d\n%s", r.code, r.stderr)
	}
	noCfg := append([]string{"TF_CLI_CONFIG_FILE=" + filepath.Join(home, "absent.tfrc")}, withCfg[:1]...)
	noCfg = append(noCfg, withCfg[2:]...)
	r = run(t, noCfg, "ls", dst, "--ca-cert", reg.CAFile(), "-p", "example.com/acme/alpha")
	if r.code == 0 || !strings.Contains(strings.ToLower(r.stderr), "unauthorized") && !strings.Contains(r.stderr, "401") {
		t.Fatalf("ls without credentials: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("without credentials: %s", r.stderr)
	r = run(t, withCfg, "ls", dst, "--ca-cert", reg.CAFile(), "-p", "example.com/acme/alpha", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"provider"`) != 4 {
		t.Fatalf("ls with credentials: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Without MIRROR, ls lists the mirrors of the user's CLI configuration.
func TestCLILsConfiguredMirrors(t *testing.T) {
	a, seedsA := fsMirror(t)
	b, _ := fsMirror(t)
	cfg := filepath.Join(t.TempDir(), "cli.tfrc")
	os.WriteFile(cfg, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n  filesystem_mirror {\n    path = %q\n  }\n  direct {}\n}\n", a, b)), 0o644)
	r := run(t, []string{"TF_CLI_CONFIG_FILE=" + cfg}, "ls", "--json", "-p", "acme/alpha")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); r.code != 0 || err != nil {
		t.Fatalf("ls: %d %v\n%s", r.code, err, r.stderr)
	}
	if len(rows) != len(seedsA) { // alpha's half of each mirror
		t.Fatalf("ls listed %d packages from the two configured mirrors, want %d", len(rows), len(seedsA))
	}
	r = run(t, []string{"TF_CLI_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none")}, "ls")
	if r.code != 2 || !strings.Contains(r.stderr, "names no mirror") {
		t.Fatalf("ls with nothing configured: %d %s", r.code, r.stderr)
	}
}
