package push_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

// tfmirrorBin is the real command, built once for these tests.
var tfmirrorBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tfmirror-push-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tfmirrorBin = filepath.Join(dir, "tfmirror")
	goTool, err := exec.LookPath("go") // go test puts its GOROOT/bin first on PATH
	if err != nil {
		goTool = "go"
	}
	if out, err := exec.Command(goTool, "build", "-o", tfmirrorBin, "github.com/tfmirror/tfmirror").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building tfmirror: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs tfmirror with a clean environment: no credentials but the test's,
// and the registry's certificate as the only trusted one.
func run(t *testing.T, reg *ocitest.Registry, args ...string) result {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "DOCKER_CONFIG=" + filepath.Join(home, ".docker"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"), "NO_COLOR=1"}
	if reg != nil && reg.CAFile() != "" {
		certDir := t.TempDir()
		pemBytes, err := os.ReadFile(reg.CAFile())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certDir, "ca.pem"), pemBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "SSL_CERT_FILE="+filepath.Join(certDir, "ca.pem"), "SSL_CERT_DIR="+certDir)
	}
	cmd := exec.Command(tfmirrorBin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// releaseZip writes a zip as goreleaser names them.
func releaseZip(t *testing.T, dir, typ, version, platform, salt string) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("terraform-provider-%s_%s_%s.zip", typ, version, platform))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: "terraform-provider-" + typ + "_v" + version, Method: zip.Deflate, Modified: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, "#!/bin/sh\necho %s %s %s %s\n", typ, version, platform, salt)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

type lsRow struct {
	Provider, Version, Platform string
	Hashes                      []string
	Size                        int64
}

func lsJSON(t *testing.T, reg *ocitest.Registry, args ...string) []lsRow {
	t.Helper()
	r := run(t, reg, append([]string{"ls", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("ls: %s", r)
	}
	var rows []lsRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, r)
	}
	return rows
}

func TestPushZipsThenList(t *testing.T) {
	reg := ocitest.New(t)
	dist := t.TempDir()
	zips := alphaRelease(t, dist)
	dst := "oci://" + reg.Host() + "/providers/${hostname}/${namespace}/${type}"

	r := run(t, reg, append(append([]string{"push", "--provider", "registry.opentofu.org/acme/alpha"}, zips...), dst)...)
	if r.code != 0 {
		t.Fatalf("push: %s", r)
	}
	for _, zp := range zips {
		sums, err := hashing.HashPath(zp, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// A line per archive with its size, rate and the hash computed:
		// zh:, the layer's digest (h1: only with --hashes all).
		var line string
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "pushed ") && strings.Contains(l, string(sums.ZH)) {
				line = l
			}
		}
		if line == "" || strings.Contains(line, string(sums.H1)) || !strings.Contains(line, "/s)") || !strings.Contains(line, " B in ") {
			t.Errorf("no progress line for %s with its hashes and rate:\n%s", zp, r)
		}
	}
	for _, want := range []string{
		`repository_template = "` + reg.Host() + `/providers/${hostname}/${namespace}/${type}"`,
		`include             = ["registry.opentofu.org/acme/alpha"]`,
		"tagged registry.opentofu.org/acme/alpha",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("push output lacks %q:\n%s", want, r)
		}
	}

	// ls reads the registry's catalogue back through the template.
	rows := lsJSON(t, reg, dst)
	if len(rows) != 3 {
		t.Fatalf("ls: %d rows, want 3: %+v", len(rows), rows)
	}
	for _, row := range rows {
		zp := filepath.Join(dist, fmt.Sprintf("terraform-provider-alpha_1.2.3_%s.zip", row.Platform))
		sums, _ := hashing.HashPath(zp, hashing.Options{})
		fi, _ := os.Stat(zp)
		if row.Provider != "registry.opentofu.org/acme/alpha" || row.Version != "1.2.3" || len(row.Hashes) != 1 || row.Hashes[0] != string(sums.ZH) || row.Size != fi.Size() {
			t.Errorf("ls row %+v, want zh %s size %d", row, sums.ZH, fi.Size())
		}
	}
	if r := run(t, reg, "verify", dst, "-p", "registry.opentofu.org/acme/alpha"); r.code != 0 || !strings.Contains(r.stderr, "3 ok") {
		t.Errorf("verify: %s", r)
	}

	// The same zips again: nothing uploaded.
	reg.ResetRequests()
	r = run(t, reg, append(append([]string{"push", "-p", "registry.opentofu.org/acme/alpha"}, zips...), dst)...)
	if r.code != 0 || strings.Count(r.stdout, "= registry.opentofu.org/acme/alpha 1.2.3") != 3 {
		t.Fatalf("second push: %s", r)
	}
	if n := reg.BlobUploads(); n != 0 {
		t.Errorf("second push started %d blob uploads", n)
	}

	// A rebuilt zip for one platform: refused, then replaced with --force.
	rebuilt := releaseZip(t, t.TempDir(), "alpha", "1.2.3", "linux_amd64", "rebuilt")
	r = run(t, reg, "push", "-p", "registry.opentofu.org/acme/alpha", rebuilt, dst)
	if r.code != 1 || !strings.Contains(r.stderr, "conflict") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("conflicting push: %s", r)
	}
	r = run(t, reg, "push", "-p", "registry.opentofu.org/acme/alpha", "--force", rebuilt, dst)
	if r.code != 0 {
		t.Fatalf("forced push: %s", r)
	}
	rows = lsJSON(t, reg, dst, "--platform", "linux_amd64")
	rebuiltSums, _ := hashing.HashPath(rebuilt, hashing.Options{})
	if len(rows) != 1 || rows[0].Hashes[0] != string(rebuiltSums.ZH) {
		t.Errorf("after --force: %+v", rows)
	}
	if rows = lsJSON(t, reg, dst); len(rows) != 3 {
		t.Errorf("after --force: %d platforms, want 3", len(rows))
	}
}

func TestPushJSONAndMirrorSource(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	// A filesystem mirror in the packed layout.
	mirror := t.TempDir()
	provDir := filepath.Join(mirror, "example.com", "acme", "beta")
	if err := os.MkdirAll(provDir, 0o755); err != nil {
		t.Fatal(err)
	}
	releaseZip(t, provDir, "beta", "2.0.0", "linux_amd64", "")
	releaseZip(t, provDir, "beta", "2.0.0", "linux_arm64", "")
	releaseZip(t, provDir, "beta", "1.0.0", "linux_amd64", "")
	dst := "oci://" + reg.Host() + "/m/${namespace}/${type}"

	r := run(t, reg, "push", "--plain-http", "--json", "-v", ">= 2.0", mirror, dst)
	if r.code != 0 {
		t.Fatalf("push: %s", r)
	}
	types := map[string]int{}
	var config map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		typ, _ := ev["type"].(string)
		if typ == "" {
			t.Errorf("event without a type: %s", sc.Text())
		}
		types[typ]++
		if typ == "oci_mirror_config" {
			config = ev
		}
	}
	if types["done"] != 2 || types["index_written"] != 1 || config == nil {
		t.Fatalf("events %v:\n%s", types, r)
	}
	if inc, _ := config["include"].([]any); len(inc) != 1 || inc[0] != "example.com/acme/beta" {
		t.Errorf("config event %v", config)
	}
	if notes := fmt.Sprint(config["notes"]); !strings.Contains(notes, "HTTPS only") {
		t.Errorf("no note that OpenTofu needs HTTPS: %v", notes)
	}

	// Without ${hostname} there is no catalogue: name the provider.
	rows := lsJSON(t, reg, "--plain-http", dst, "-p", "example.com/acme/beta")
	if len(rows) != 2 || rows[0].Version != "2.0.0" {
		t.Errorf("ls: %+v", rows)
	}
	r = run(t, reg, "ls", "--plain-http", dst)
	if r.code == 0 || !strings.Contains(r.stderr, "--provider") {
		t.Errorf("ls without a catalogue: %s", r)
	}
}

func TestPushUsageErrors(t *testing.T) {
	dist := t.TempDir()
	z := releaseZip(t, dist, "alpha", "1.0.0", "linux_amd64", "")
	odd := filepath.Join(dist, "provider.zip")
	data, _ := os.ReadFile(z)
	if err := os.WriteFile(odd, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const dst = "oci://127.0.0.1:1/p/${namespace}/${type}"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no destination", []string{"push", z}, 2, "takes SRC... and OCI_DST"},
		{"not oci", []string{"push", z, "./elsewhere"}, 2, "must be oci://"},
		{"no provider", []string{"push", z, dst}, 2, "needs --provider"},
		{"odd name", []string{"push", "-p", "registry.opentofu.org/acme/alpha", odd, dst}, 2, "pass an exact --version and one --platform"},
		{"bad template", []string{"push", "-p", "registry.opentofu.org/acme/alpha", z, "oci://127.0.0.1:1/P/${type}"}, 2, "not a valid OCI repository address"},
		{"unknown symbol", []string{"push", "-p", "registry.opentofu.org/acme/alpha", z, "oci://127.0.0.1:1/p/${name}"}, 2, `the symbol "name" is not available`},
		{"no hostname", []string{"push", "-p", "acme/alpha", z, dst}, 2, "write the full address, HOSTNAME/acme/alpha"},
		{"not a zip", []string{"push", "-p", "registry.opentofu.org/acme/alpha", filepath.Join(dist, "terraform-provider-alpha_1.0.0_linux_arm64.zip"), dst}, 1, "not a usable zip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("%s\nwant exit %d and %q", r, tt.code, tt.want)
			}
		})
	}
}

func TestPushHelp(t *testing.T) {
	r := run(t, nil, "push", "--help")
	for _, want := range []string{"registry.opentofu.org", "--provider", "--force", "--plain-http", "oci://REGISTRY[:PORT]/TEMPLATE", "Example", "SHA256SUMS", "integrity", "--signing-key", "dist/*", "manifest.json"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// writeSums writes goreleaser's SHA256SUMS for zips (as given, or with
// override's sums for some base names) into dir and returns its path.
func writeSums(t *testing.T, dir, name string, zips []string, override map[string]string) string {
	t.Helper()
	var b strings.Builder
	for _, z := range zips {
		sums, err := hashing.HashPath(z, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sum := sums.ZH.Value()
		if o, ok := override[filepath.Base(z)]; ok {
			sum = o
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(z))
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A release pushed as goreleaser leaves it (zips, SHA256SUMS and its
// signature): the zips go up under the digests SHA256SUMS states, in the
// layout OpenTofu reads, and the same push again uploads nothing.
func TestPushWithSHA256SUMS(t *testing.T) {
	reg := ocitest.New(t)
	dist := t.TempDir()
	zips := alphaRelease(t, dist)
	sumsFile := writeSums(t, dist, "terraform-provider-alpha_1.2.3_SHA256SUMS", zips, nil)
	sig := sumsFile + ".sig"
	if err := os.WriteFile(sig, []byte("not checked"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := "oci://" + reg.Host() + "/providers/${hostname}/${namespace}/${type}"
	args := append(append([]string{"push", "-p", "registry.opentofu.org/acme/alpha"}, zips...), sumsFile, sig, dst)
	r := run(t, reg, args...)
	if r.code != 0 || !strings.Contains(r.stderr, sig+" is not checked") {
		t.Fatalf("push: %s", r)
	}
	rows := lsJSON(t, reg, dst)
	if len(rows) != 3 {
		t.Fatalf("ls: %d rows, want 3: %+v", len(rows), rows)
	}
	for _, row := range rows {
		zp := filepath.Join(dist, fmt.Sprintf("terraform-provider-alpha_1.2.3_%s.zip", row.Platform))
		sums, _ := hashing.HashPath(zp, hashing.Options{})
		if len(row.Hashes) != 1 || row.Hashes[0] != string(sums.ZH) {
			t.Errorf("ls row %+v, want zh %s", row, sums.ZH)
		}
	}
	if r := run(t, reg, "verify", dst, "-p", "registry.opentofu.org/acme/alpha"); r.code != 0 || !strings.Contains(r.stderr, "3 ok") {
		t.Errorf("verify: %s", r)
	}
	reg.ResetRequests()
	if r := run(t, reg, args...); r.code != 0 {
		t.Fatalf("second push: %s", r)
	}
	if n := reg.BlobUploads(); n != 0 {
		t.Errorf("second push started %d blob uploads", n)
	}
}

// A zip that is not the one its SHA256SUMS line states, or that the line
// does not list, is refused: exit 1 naming the zip and both hashes, and
// the version's index lists only the zips that match.
func TestPushSHA256SUMSMismatch(t *testing.T) {
	reg := ocitest.New(t)
	dist := t.TempDir()
	good := releaseZip(t, dist, "alpha", "1.0.0", "linux_amd64", "")
	bad := releaseZip(t, dist, "alpha", "1.0.0", "darwin_arm64", "")
	other := releaseZip(t, t.TempDir(), "alpha", "1.0.0", "darwin_arm64", "the one that was signed")
	otherSums, _ := hashing.HashPath(other, hashing.Options{})
	badSums, _ := hashing.HashPath(bad, hashing.Options{})
	sumsFile := writeSums(t, dist, "terraform-provider-alpha_1.0.0_SHA256SUMS", []string{good, bad},
		map[string]string{filepath.Base(bad): otherSums.ZH.Value()})
	dst := "oci://" + reg.Host() + "/p/${namespace}/${type}"
	r := run(t, reg, "push", "-p", "registry.opentofu.org/acme/alpha", good, bad, sumsFile, dst)
	if r.code != 1 {
		t.Fatalf("push of a zip its SHA256SUMS does not state: %s", r)
	}
	for _, want := range []string{"integrity", bad, string(otherSums.ZH), string(badSums.ZH)} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error lacks %q:\n%s", want, r)
		}
	}
	rows := lsJSON(t, reg, dst, "-p", "registry.opentofu.org/acme/alpha")
	if len(rows) != 1 || rows[0].Platform != "linux_amd64" {
		t.Errorf("the index lists %+v, want linux_amd64 alone", rows)
	}

	// A zip of the release the SHA256SUMS does not list.
	extra := releaseZip(t, dist, "alpha", "1.0.0", "linux_arm64", "")
	r = run(t, reg, "push", "-p", "registry.opentofu.org/acme/alpha", good, extra, sumsFile, dst)
	if r.code != 1 || !strings.Contains(r.stderr, extra) || !strings.Contains(r.stderr, sumsFile) || !strings.Contains(r.stderr, "not listed") {
		t.Errorf("push of a zip its SHA256SUMS does not list: %s", r)
	}
}

// A mirror whose index states a zh: its zip does not have: the push,
// which uploads under the stated digest without reading the zip first,
// fails with the integrity error and lists nothing for that platform.
func TestPushMirrorStatedMismatch(t *testing.T) {
	reg := ocitest.New(t)
	mirror := t.TempDir()
	dir := filepath.Join(mirror, "example.com", "acme", "beta")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	good := releaseZip(t, dir, "beta", "2.0.0", "linux_amd64", "")
	bad := releaseZip(t, dir, "beta", "2.0.0", "linux_arm64", "")
	other := releaseZip(t, t.TempDir(), "beta", "2.0.0", "linux_arm64", "what the index describes")
	goodSums, _ := hashing.HashPath(good, hashing.Options{})
	badSums, _ := hashing.HashPath(bad, hashing.Options{})
	otherSums, _ := hashing.HashPath(other, hashing.Options{})
	archives := map[string]any{
		"linux_amd64": map[string]any{"url": filepath.Base(good), "hashes": []string{string(goodSums.ZH)}},
		"linux_arm64": map[string]any{"url": filepath.Base(bad), "hashes": []string{string(otherSums.ZH)}},
	}
	doc, _ := json.Marshal(map[string]any{"archives": archives})
	if err := os.WriteFile(filepath.Join(dir, "2.0.0.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"versions":{"2.0.0":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := "oci://" + reg.Host() + "/m/${namespace}/${type}"
	r := run(t, reg, "push", mirror, dst)
	if r.code != 1 {
		t.Fatalf("push of a mirror stating another zip: %s", r)
	}
	for _, want := range []string{"integrity", bad, string(otherSums.ZH), string(badSums.ZH)} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error lacks %q:\n%s", want, r)
		}
	}
	rows := lsJSON(t, reg, dst, "-p", "example.com/acme/beta")
	if len(rows) != 1 || rows[0].Platform != "linux_amd64" {
		t.Errorf("the index lists %+v, want linux_amd64 alone", rows)
	}
}

// alphaRelease writes alpha 1.2.3's release zips for three platforms into
// dist and returns their paths.
func alphaRelease(t *testing.T, dist string) []string {
	t.Helper()
	var zips []string
	for _, plat := range []string{"linux_amd64", "darwin_arm64", "windows_amd64"} {
		zips = append(zips, releaseZip(t, dist, "alpha", "1.2.3", plat, ""))
	}
	return zips
}
