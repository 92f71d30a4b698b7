package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaDef compiles one definition of docs/schema/tfmirror.schema.json.
func schemaDef(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", "docs", "schema", "tfmirror.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	s, err := c.Compile("file://" + filepath.ToSlash(abs) + "#/$defs/" + def)
	if err != nil {
		t.Fatalf("the schema's %s: %v", def, err)
	}
	return s
}

// validate holds one JSON document to a definition of the schema.
func validate(t *testing.T, what, def, doc string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, doc)
	}
	if err := schemaDef(t, def).Validate(v); err != nil {
		t.Errorf("%s does not match the schema's %s: %v\n%s", what, def, err, doc)
	}
}

// validateLines holds JSON lines to the schema: each line to def, the last
// to summaryDef.
func validateLines(t *testing.T, what, def, summaryDef, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatalf("%s printed nothing", what)
	}
	for i, l := range lines[:len(lines)-1] {
		validate(t, what+" line "+string(rune('1'+i%9)), def, l)
	}
	validate(t, what+" (its last line)", summaryDef, lines[len(lines)-1])
}

// TestJSONOutputMatchesTheSchema runs every command that prints --json on a
// real mirror and holds what it prints to docs/schema/tfmirror.schema.json,
// the schema docs/json.md documents.
func TestJSONOutputMatchesTheSchema(t *testing.T) {
	src, _ := fsMirror(t)
	work := t.TempDir()
	dst := filepath.Join(work, "dst")
	ok := func(r result, what string) result {
		t.Helper()
		if r.code != 0 && r.code != 1 {
			t.Fatalf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
		return r
	}
	validate(t, "ls --json", "ls", ok(run(t, nil, "ls", src, "--json"), "ls").stdout)
	zip := filepath.Join(src, "example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip")
	validate(t, "hash --json", "hash_rows", ok(run(t, nil, "hash", zip, "--json"), "hash").stdout)
	validate(t, "verify --json", "findings", ok(run(t, nil, "verify", src, "--json"), "verify").stdout)
	validate(t, "diff --json", "findings", ok(run(t, nil, "diff", src, dst, "--json"), "diff").stdout)
	validateLines(t, "sync --json", "event", "run_summary", ok(run(t, nil, "sync", src, dst, "--json"), "sync").stdout)
	validateLines(t, "sync --json (nothing to do)", "event", "run_summary", ok(run(t, nil, "sync", src, dst, "--json"), "sync").stdout)

	lock := filepath.Join(work, ".terraform.lock.hcl")
	r := ok(run(t, nil, "lock", dst, "--lock", lock, "--platform", "linux_amd64", "--json"), "lock")
	validateLines(t, "lock --json", "lock_file", "lock_summary", r.stdout)
	if !strings.Contains(r.stdout, `"status":"written"`) {
		t.Errorf("lock --json of a new lock file: %s", r.stdout)
	}
	r = ok(run(t, nil, "lock", dst, "--lock", lock, "--platform", "linux_amd64", "--json"), "lock again")
	validateLines(t, "lock --json (unchanged)", "lock_file", "lock_summary", r.stdout)
	if !strings.Contains(r.stdout, `"status":"unchanged"`) || !strings.Contains(r.stdout, `"hashes_added":0`) {
		t.Errorf("lock --json of an up-to-date lock file: %s", r.stdout)
	}
	validate(t, "check --json", "findings", ok(run(t, nil, "check", dst, "--lock", lock, "--json"), "check").stdout)

	bundle := filepath.Join(work, "b.tar")
	r = ok(run(t, nil, "export", dst, bundle, "--json"), "export")
	validateLines(t, "export --json", "event", "run_summary", r.stdout)
	if !strings.Contains(r.stdout, `"written":true`) {
		t.Errorf("export --json says nothing of the bundle written: %s", r.stdout)
	}
	r = ok(run(t, nil, "import", bundle, filepath.Join(work, "imported"), "--json"), "import")
	validateLines(t, "import --json", "event", "run_summary", r.stdout)

	// An altered bundle is refused: the summary alone says why, exit 1.
	b, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("terraform-provider-alpha_1.0.0_linux_amd64.zip"))
	if i < 0 {
		t.Fatal("no archive in the bundle")
	}
	altered := filepath.Join(work, "altered.tar")
	b = append([]byte(nil), b...)
	// The zip's own bytes come after its 512-byte tar header.
	for j := i - i%512 + 512 + 40; j < i-i%512+512+60; j++ {
		b[j] ^= 0xff
	}
	if err := os.WriteFile(altered, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, nil, "import", altered, filepath.Join(work, "never"), "--json")
	if r.code != 1 {
		t.Fatalf("import of an altered bundle: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "" {
		validateLines(t, "import --json of an altered bundle", "event", "run_summary", r.stdout)
	}
}

// serve --json: a serving line, a line per request, a summary when it stops.
func TestServeJSONMatchesTheSchema(t *testing.T) {
	src, _ := fsMirror(t)
	cert := filepath.Join(t.TempDir(), "ca.pem")
	cmd := exec.Command(tfmirrorBin, "serve", src, "--addr", "127.0.0.1:0", "--cert-out", cert, "--json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var first string
	select {
	case first = <-lines:
	case <-time.After(time.Minute): // a bound for a loaded machine
		t.Fatalf("serve --json printed nothing; stderr:\n%s", stderr.String())
	}
	validate(t, "serve --json's first line", "serve_line", first)
	var serving struct{ URL string }
	if err := json.Unmarshal([]byte(first), &serving); err != nil || serving.URL == "" {
		t.Fatalf("serving line %q: %v", first, err)
	}
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	client := pullClient(pem)
	for _, p := range []string{"example.com/acme/alpha/index.json", "example.com/acme/nope/index.json"} {
		resp, err := client.Get(serving.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cmd.Process.Signal(syscall.SIGTERM)
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if cmd.Wait(); cmd.ProcessState.ExitCode() != 143 {
		t.Errorf("serve after SIGTERM: exit %d, want 143\n%s", cmd.ProcessState.ExitCode(), stderr.String())
	}
	if len(rest) != 3 {
		t.Fatalf("serve --json after its first line: %d lines, want 2 requests and the summary:\n%s", len(rest), strings.Join(rest, "\n"))
	}
	for _, l := range rest {
		validate(t, "serve --json", "serve_line", l)
	}
	if !strings.Contains(rest[2], `"type":"summary"`) || !strings.Contains(rest[2], `"requests":2`) || !strings.Contains(rest[2], `"not_found":1`) {
		t.Errorf("serve --json summary: %s", rest[2])
	}
}
