package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/ui/report"
)

// These tests call the run functions with options and buffers, as the
// cobra wiring does, without building or running the binary.

// testRun is a run's streams as buffers, and the Env the global flags'
// defaults make.
type testRun struct {
	env            *Env
	stdout, stderr bytes.Buffer
}

func newTestRun() *testRun {
	r := &testRun{}
	r.env = &Env{maxUnpacked: hashing.DefaultMaxUnpacked, stderr: &r.stderr}
	return r
}

func (r *testRun) streams() streams {
	return streams{stdin: strings.NewReader(""), stdout: &r.stdout, stderr: &r.stderr}
}

// exitOf is the exit code err makes, as Execute would return it.
func exitOf(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	default:
		return exitProblem
	}
}

// packedMirror is a filesystem mirror of two providers, one version, two
// platforms: four packages.
func packedMirror(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, backendtest.Seeds(t,
		[]string{"example.com/acme/alpha", "example.com/acme/beta"}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	return dir
}

func TestRunLs(t *testing.T) {
	mirror := packedMirror(t)
	cases := []struct {
		name     string
		flags    lsFlags
		args     []string
		exit     int
		rows     int
		only     string // in every row's provider and platform
		inStderr string
	}{
		{name: "every package", args: []string{mirror}, rows: 4},
		{name: "a provider", flags: lsFlags{sel: selectionFlags{providers: []string{"acme/beta"}}}, args: []string{mirror}, rows: 2, only: "acme/beta"},
		{name: "a platform", flags: lsFlags{sel: selectionFlags{platforms: []string{"linux_amd64"}}}, args: []string{mirror}, rows: 2, only: "linux_amd64"},
		{name: "platform typo", flags: lsFlags{sel: selectionFlags{platforms: []string{"linux_x86_64"}}}, args: []string{mirror}, exit: exitUsage},
		{name: "selection matches nothing", flags: lsFlags{sel: selectionFlags{providers: []string{"acme/gamma"}}}, args: []string{mirror}, exit: exitProblem},
		{name: "no such place", args: []string{mirror + "/nowhere"}, exit: exitUsage},
		{name: "one place of two missing", args: []string{mirror, mirror + "/nowhere"}, exit: exitProblem, rows: 4, inStderr: "1 of 2 places could not be listed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRun()
			tc.flags.asJSON = true
			err := runLs(context.Background(), r.env, &tc.flags, tc.args, r.streams())
			if got := exitOf(err); got != tc.exit {
				t.Fatalf("exit %d (%v), want %d; stderr:\n%s", got, err, tc.exit, r.stderr.String())
			}
			if !strings.Contains(r.stderr.String(), tc.inStderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.inStderr, r.stderr.String())
			}
			if tc.exit == exitUsage {
				return
			}
			var rows []report.PackageJSON
			if tc.rows > 0 || r.stdout.Len() > 0 {
				if err := json.Unmarshal(r.stdout.Bytes(), &rows); err != nil {
					t.Fatalf("stdout is not a JSON array of packages: %v\n%s", err, r.stdout.String())
				}
			}
			if len(rows) != tc.rows {
				t.Fatalf("%d rows, want %d:\n%s", len(rows), tc.rows, r.stdout.String())
			}
			for _, row := range rows {
				if !strings.Contains(row.Provider+" "+row.Platform, tc.only) {
					t.Errorf("row %s %s %s outside the selection (%s)", row.Provider, row.Version, row.Platform, tc.only)
				}
			}
		})
	}
}

// ls without --json writes a table with a line per package.
func TestRunLsTable(t *testing.T) {
	r := newTestRun()
	err := runLs(context.Background(), r.env, &lsFlags{}, []string{packedMirror(t)}, r.streams())
	if err != nil {
		t.Fatalf("ls: %v; stderr:\n%s", err, r.stderr.String())
	}
	for _, want := range []string{"example.com/acme/alpha", "example.com/acme/beta", "darwin_arm64", "linux_amd64"} {
		if !strings.Contains(r.stdout.String(), want) {
			t.Errorf("the table does not name %s:\n%s", want, r.stdout.String())
		}
	}
}

// verify finds every archive of an intact mirror ok, and exits 1 naming
// the one archive that no longer unpacks.
func TestRunVerify(t *testing.T) {
	mirror := packedMirror(t)
	r := newTestRun()
	if err := runVerify(context.Background(), r.env, &verifyFlags{asJSON: true}, []string{mirror}, r.streams()); err != nil {
		t.Fatalf("verify of an intact mirror: %v; stderr:\n%s", err, r.stderr.String())
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["ok"] != 4 {
		t.Fatalf("statuses %v, want 4 ok", got)
	}

	damaged := filepath.Join(mirror, "example.com/acme/beta/terraform-provider-beta_1.0.0_linux_amd64.zip")
	if err := os.WriteFile(damaged, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = newTestRun()
	err := runVerify(context.Background(), r.env, &verifyFlags{asJSON: true}, []string{mirror}, r.streams())
	if exitOf(err) != exitProblem {
		t.Fatalf("verify of a damaged mirror: exit %d (%v), want 1", exitOf(err), err)
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["ok"] != 3 || len(got) != 2 {
		t.Fatalf("statuses %v, want 3 ok and one problem", got)
	}
}

func findingStatuses(t *testing.T, out []byte) map[string]int {
	t.Helper()
	var rows []report.FindingJSON
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("not a JSON array of findings: %v\n%s", err, out)
	}
	n := map[string]int{}
	for _, row := range rows {
		n[string(row.Status)]++
	}
	return n
}

// prune --keep 1 plans the older versions away; without --yes and with no
// terminal to ask on, nothing goes; with it, they go.
func TestRunPrune(t *testing.T) {
	mirror := t.TempDir()
	backendtest.WritePacked(t, mirror, backendtest.Seeds(t,
		[]string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0", "2.0.0"}, []string{"linux_amd64"}))
	zips := func() int {
		m, err := filepath.Glob(filepath.Join(mirror, "example.com/acme/alpha/*.zip"))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	r := newTestRun()
	if err := runPrune(context.Background(), r.env, &pruneFlags{keep: 1}, []string{mirror}, r.streams()); err != nil {
		t.Fatalf("prune without --yes: %v; stderr:\n%s", err, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "nothing removed") || zips() != 3 {
		t.Fatalf("prune without --yes and no terminal: %d zips left, stderr:\n%s", zips(), r.stderr.String())
	}

	r = newTestRun()
	if err := runPrune(context.Background(), r.env, &pruneFlags{keep: 1, yes: true, asJSON: true}, []string{mirror}, r.streams()); err != nil {
		t.Fatalf("prune --yes: %v; stderr:\n%s", err, r.stderr.String())
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["removed"] != 2 || got["keep"] != 1 {
		t.Fatalf("prune --yes --json: statuses %v, want 2 removed and 1 keep", got)
	}
	if zips() != 1 {
		t.Fatalf("%d zips left after prune --keep 1 --yes, want 1", zips())
	}

	r = newTestRun()
	err := runPrune(context.Background(), r.env, &pruneFlags{}, []string{mirror}, r.streams())
	if exitOf(err) != exitUsage {
		t.Fatalf("prune with neither --keep nor --spec: exit %d (%v), want 2", exitOf(err), err)
	}
}

// config reads the file TF_CLI_CONFIG_FILE names: its mirror as a place
// argument, and a malformed file exits 2.
func TestRunConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ci.tfrc")
	conf := `provider_installation {
  filesystem_mirror {
    path    = "/srv/mirror"
    include = ["example.com/*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
`
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", file)
	r := newTestRun()
	if err := runConfig(context.Background(), r.env, &configFlags{asJSON: true}, nil, r.streams()); err != nil {
		t.Fatalf("config: %v; stderr:\n%s", err, r.stderr.String())
	}
	var got struct {
		Mirrors []struct {
			Place string `json:"place"`
		} `json:"mirrors"`
	}
	if err := json.Unmarshal(r.stdout.Bytes(), &got); err != nil {
		t.Fatalf("config --json: %v\n%s", err, r.stdout.String())
	}
	if len(got.Mirrors) != 1 || got.Mirrors[0].Place != "/srv/mirror" {
		t.Fatalf("mirrors %+v, want the one at /srv/mirror\n%s", got.Mirrors, r.stdout.String())
	}

	if err := os.WriteFile(file, []byte("provider_installation {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = newTestRun()
	err := runConfig(context.Background(), r.env, &configFlags{}, nil, r.streams())
	if exitOf(err) != exitUsage || !strings.Contains(err.Error(), "ci.tfrc") {
		t.Fatalf("config of a malformed file: exit %d (%v), want 2 naming ci.tfrc", exitOf(err), err)
	}
}

// hash states a zip's zh: as the SHA-256 of its bytes, keeps the order
// given, and exits 1 naming a path it cannot read after hashing the rest.
func TestRunHash(t *testing.T) {
	dir := t.TempDir()
	zip := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64"), "")
	path := filepath.Join(dir, "terraform-provider-alpha_1.0.0_linux_amd64.zip")
	if err := os.WriteFile(path, zip, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.zip")
	r := newTestRun()
	err := runHash(context.Background(), r.env, &hashFlags{asJSON: true}, []string{missing, path}, r.streams())
	if exitOf(err) != exitProblem || !strings.Contains(r.stderr.String(), "missing.zip") {
		t.Fatalf("hash of a missing and a present zip: exit %d (%v), want 1 naming missing.zip; stderr:\n%s", exitOf(err), err, r.stderr.String())
	}
	var rows []report.HashRow
	if err := json.Unmarshal(r.stdout.Bytes(), &rows); err != nil {
		t.Fatalf("hash --json: %v\n%s", err, r.stdout.String())
	}
	want := fmt.Sprintf("zh:%x", sha256.Sum256(zip))
	if len(rows) != 1 || rows[0].Path != path || string(rows[0].ZH) != want || !strings.HasPrefix(string(rows[0].H1), "h1:") {
		t.Fatalf("rows %+v, want one for %s with %s and an h1:", rows, path, want)
	}
}

// demo --keep DIR --no-ui builds the world and prints its two mirrors;
// the UI without a terminal, and --no-ui without --keep, exit 2.
func TestRunDemo(t *testing.T) {
	for _, d := range []demoFlags{{noUI: true}, {}} {
		r := newTestRun()
		if err := runDemo(context.Background(), r.env, &d, nil, r.streams()); exitOf(err) != exitUsage {
			t.Fatalf("demo %+v: exit %d (%v), want 2", d, exitOf(err), err)
		}
	}
	r := newTestRun()
	keep := t.TempDir()
	if err := runDemo(context.Background(), r.env, &demoFlags{keep: keep, noUI: true}, nil, r.streams()); err != nil {
		t.Fatalf("demo --keep --no-ui: %v; stderr:\n%s", err, r.stderr.String())
	}
	lines := strings.Fields(r.stdout.String())
	if len(lines) != 2 {
		t.Fatalf("demo --no-ui printed %q, want the two mirror directories", r.stdout.String())
	}
	for _, dir := range lines {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || !strings.HasPrefix(dir, keep) {
			t.Errorf("%s: not a directory of the kept world in %s (%v)", dir, keep, err)
		}
	}
}

// export packs a packed mirror's selection into a bundle, and says so in
// its --json summary; a selection of nothing writes no bundle and exits 1.
func TestRunExport(t *testing.T) {
	mirror := packedMirror(t)
	out := filepath.Join(t.TempDir(), "providers.tar")
	r := newTestRun()
	f := &exportFlags{sel: selectionFlags{providers: []string{"acme/alpha"}}, jobs: 2, json: true}
	if err := runExport(context.Background(), r.env, f, []string{mirror, out}, r.streams()); err != nil {
		t.Fatalf("export: %v; stderr:\n%s", err, r.stderr.String())
	}
	sum := lastJSONLine(t, r.stdout.String())
	if sum["type"] != "summary" || sum["written"] != true || sum["archives"] != 2.0 || sum["bundle"] != out {
		t.Fatalf("export summary %v, want 2 archives written to %s", sum, out)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("no bundle: %v", err)
	}

	r = newTestRun()
	f = &exportFlags{sel: selectionFlags{providers: []string{"acme/gamma"}}, jobs: 2}
	other := filepath.Join(t.TempDir(), "none.tar")
	if err := runExport(context.Background(), r.env, f, []string{mirror, other}, r.streams()); exitOf(err) != exitProblem {
		t.Fatalf("export of nothing: exit %d (%v), want 1", exitOf(err), err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Fatalf("export of nothing wrote %s", other)
	}
}

// lastJSONLine is the last line of JSON lines output, decoded.
func lastJSONLine(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("last line not JSON: %v\n%s", err, out)
	}
	return v
}

// import lands what export packed, verified; a bundle that is not one
// exits 2 and lands nothing.
func TestRunImport(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "providers.tar")
	r := newTestRun()
	if err := runExport(context.Background(), r.env, &exportFlags{jobs: 2}, []string{packedMirror(t), out}, r.streams()); err != nil {
		t.Fatalf("export: %v; stderr:\n%s", err, r.stderr.String())
	}
	dst := filepath.Join(tmp, "landed")
	r = newTestRun()
	if err := runImport(context.Background(), r.env, &importFlags{jobs: 2, json: true}, []string{out, dst}, r.streams()); err != nil {
		t.Fatalf("import: %v; stderr:\n%s", err, r.stderr.String())
	}
	if sum := lastJSONLine(t, r.stdout.String()); sum["verified"] != 4.0 || sum["ok"] != true {
		t.Fatalf("import summary %v, want 4 verified, ok", sum)
	}
	r = newTestRun()
	if err := runVerify(context.Background(), r.env, &verifyFlags{asJSON: true}, []string{dst}, r.streams()); err != nil {
		t.Fatalf("verify of the imported mirror: %v; stderr:\n%s", err, r.stderr.String())
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["ok"] != 4 {
		t.Fatalf("the imported mirror verifies %v, want 4 ok", got)
	}

	notBundle := filepath.Join(tmp, "not.tar")
	if err := os.WriteFile(notBundle, []byte("not a tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "other")
	r = newTestRun()
	if err := runImport(context.Background(), r.env, &importFlags{jobs: 2}, []string{notBundle, other}, r.streams()); exitOf(err) == exitOK {
		t.Fatalf("import of %s succeeded", notBundle)
	}
	if _, err := os.Stat(other); err == nil {
		t.Fatalf("import of a broken bundle made %s", other)
	}
}

// diff of a mirror against a directory that does not exist yet plans every
// package missing (exit 1); against a copy of itself, every one present.
func TestRunDiff(t *testing.T) {
	mirror := packedMirror(t)
	r := newTestRun()
	err := runDiff(context.Background(), r.env, &diffFlags{asJSON: true}, []string{mirror, filepath.Join(t.TempDir(), "new")}, r.streams())
	if exitOf(err) != exitProblem {
		t.Fatalf("diff to a new directory: exit %d (%v), want 1", exitOf(err), err)
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["missing"] != 4 || len(got) != 1 {
		t.Fatalf("diff to a new directory: %v, want 4 missing", got)
	}
	r = newTestRun()
	if err := runDiff(context.Background(), r.env, &diffFlags{asJSON: true}, []string{mirror, mirror}, r.streams()); err != nil {
		t.Fatalf("diff of a mirror with itself: %v; stderr:\n%s", err, r.stderr.String())
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["present"] != 4 || len(got) != 1 {
		t.Fatalf("diff of a mirror with itself: %v, want 4 present", got)
	}
}

// outdated finds the release a --source holds that the mirror lacks.
func TestRunOutdated(t *testing.T) {
	mirror, source := t.TempDir(), t.TempDir()
	provs, plats := []string{"example.com/acme/alpha"}, []string{"linux_amd64"}
	backendtest.WritePacked(t, mirror, backendtest.Seeds(t, provs, []string{"1.0.0"}, plats))
	backendtest.WritePacked(t, source, backendtest.Seeds(t, provs, []string{"1.0.0", "2.0.0"}, plats))
	r := newTestRun()
	err := runOutdated(context.Background(), r.env, &outdatedFlags{source: source, asJSON: true}, []string{mirror}, r.streams())
	if exitOf(err) != exitProblem {
		t.Fatalf("outdated: exit %d (%v), want 1; stderr:\n%s", exitOf(err), err, r.stderr.String())
	}
	var rows []struct{ Provider, Version, Status string }
	if err := json.Unmarshal(r.stdout.Bytes(), &rows); err != nil {
		t.Fatalf("outdated --json: %v\n%s", err, r.stdout.String())
	}
	if len(rows) != 1 || rows[0].Version != "2.0.0" || rows[0].Status != "missing" {
		t.Fatalf("rows %+v, want 2.0.0 missing", rows)
	}
}

// modules rewrite without --oci, or of no directory, is a usage error.
func TestRunModulesRewriteUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		o    modulesRewriteFlags
		arg  string
		says string
	}{
		{o: modulesRewriteFlags{}, arg: dir, says: "needs --oci"},
		{o: modulesRewriteFlags{tmpl: "registry.corp/m/${namespace}/${name}-${system}"}, arg: filepath.Join(dir, "none"), says: "not a directory"},
	} {
		r := newTestRun()
		err := runModulesRewrite(context.Background(), r.env, &tc.o, []string{tc.arg}, r.streams())
		if exitOf(err) != exitUsage || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("rewrite %+v %s: exit %d (%v), want 2 saying %q", tc.o, tc.arg, exitOf(err), err, tc.says)
		}
	}
}

// ui without a terminal says to use the commands; a place that does not
// exist and reads like a command is named as a typo of it.
func TestRunUIUsage(t *testing.T) {
	r := newTestRun()
	err := runUI(context.Background(), r.env, &uiFlags{}, []string{packedMirror(t)}, r.streams())
	if exitOf(err) != exitUsage || !strings.Contains(err.Error(), "needs a terminal") {
		t.Fatalf("ui without a terminal: exit %d (%v), want 2 saying it needs one", exitOf(err), err)
	}
	r = newTestRun()
	u := &uiFlags{commandTypos: func(arg string) []string {
		if arg == "snyc" {
			return []string{"sync"}
		}
		return nil
	}}
	t.Chdir(t.TempDir())
	err = runUI(context.Background(), r.env, u, []string{"snyc"}, r.streams())
	if exitOf(err) != exitUsage || !strings.Contains(err.Error(), `typo of the command "sync"`) {
		t.Fatalf("ui snyc: exit %d (%v), want 2 naming the command sync", exitOf(err), err)
	}
}

// check finds a lock file's provider in a mirror on the platforms it
// holds, and exits 1 for a platform it lacks; neither --lock nor --from
// is a usage error.
func TestRunCheck(t *testing.T) {
	mirror := packedMirror(t)
	var hashes []string
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		zip := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
		hashes = append(hashes, fmt.Sprintf("%q", fmt.Sprintf("zh:%x", sha256.Sum256(zip))))
	}
	lock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	body := fmt.Sprintf("provider \"example.com/acme/alpha\" {\n  version = \"1.0.0\"\n  hashes = [%s]\n}\n", strings.Join(hashes, ", "))
	if err := os.WriteFile(lock, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(f checkFlags) (*testRun, error) {
		r := newTestRun()
		f.asJSON = true
		return r, runCheck(context.Background(), r.env, &f, []string{mirror}, r.streams())
	}
	r, err := run(checkFlags{sel: selectionFlags{lock: lock, platforms: []string{"linux_amd64", "darwin_arm64"}}})
	if err != nil {
		t.Fatalf("check: %v; stderr:\n%s", err, r.stderr.String())
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["ok"] != 2 || len(got) != 1 {
		t.Fatalf("check: %v, want 2 ok", got)
	}
	r, err = run(checkFlags{sel: selectionFlags{lock: lock, platforms: []string{"linux_amd64", "windows_amd64"}}})
	if exitOf(err) != exitProblem {
		t.Fatalf("check with a platform the mirror lacks: exit %d (%v), want 1", exitOf(err), err)
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["ok"] != 1 || len(got) != 2 {
		t.Fatalf("check with a platform the mirror lacks: %v, want 1 ok and 1 not", got)
	}
	if _, err := run(checkFlags{}); exitOf(err) != exitUsage {
		t.Fatalf("check with neither --lock nor --from: exit %d (%v), want 2", exitOf(err), err)
	}
}

// lock writes a new lock file with a mirror's hashes of the platforms
// named; --hashes takes only "all".
func TestRunLock(t *testing.T) {
	mirror := packedMirror(t)
	path := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	f := &lockFlags{sel: selectionFlags{lock: path, providers: []string{"acme/alpha"}, platforms: []string{"linux_amd64"}}, out: lockOut{json: true}}
	r := newTestRun()
	if err := runLock(context.Background(), r.env, f, []string{mirror}, r.streams()); err != nil {
		t.Fatalf("lock: %v; stderr:\n%s", err, r.stderr.String())
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no lock file: %v", err)
	}
	zip := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64"), "")
	for _, want := range []string{`provider "example.com/acme/alpha"`, `version = "1.0.0"`, fmt.Sprintf("zh:%x", sha256.Sum256(zip))} {
		if !strings.Contains(string(written), want) {
			t.Errorf("the lock file lacks %s:\n%s", want, written)
		}
	}
	if sum := lastJSONLine(t, r.stdout.String()); sum["type"] != "summary" || sum["written"] != 1.0 {
		t.Errorf("lock --json summary %v, want 1 written", sum)
	}
	r = newTestRun()
	if err := runLock(context.Background(), r.env, &lockFlags{hashes: "needed"}, []string{mirror}, r.streams()); exitOf(err) != exitUsage {
		t.Fatalf("lock --hashes needed: exit %d (%v), want 2", exitOf(err), err)
	}
}

// sync copies a packed mirror's selection into a new directory, which
// then verifies; --module with --spec is a usage error.
func TestRunSync(t *testing.T) {
	mirror := packedMirror(t)
	dst := filepath.Join(t.TempDir(), "dst")
	r := newTestRun()
	f := &syncFlags{sel: selectionFlags{platforms: []string{"linux_amd64"}}, jobs: 2, asJSON: true}
	if err := runSync(context.Background(), r.env, f, []string{mirror, dst}, r.streams()); err != nil {
		t.Fatalf("sync: %v; stderr:\n%s", err, r.stderr.String())
	}
	if sum := lastJSONLine(t, r.stdout.String()); sum["type"] != "summary" || sum["done"] != 2.0 {
		t.Fatalf("sync summary %v, want 2 done", sum)
	}
	r = newTestRun()
	if err := runVerify(context.Background(), r.env, &verifyFlags{asJSON: true}, []string{dst}, r.streams()); err != nil {
		t.Fatalf("verify of the synced mirror: %v; stderr:\n%s", err, r.stderr.String())
	}
	if got := findingStatuses(t, r.stdout.Bytes()); got["ok"] != 2 || len(got) != 1 {
		t.Fatalf("the synced mirror verifies %v, want 2 ok", got)
	}
	r = newTestRun()
	f = &syncFlags{spec: specFlags{file: "mirror.hcl"}, mods: moduleFlags{modules: []string{"acme/vpc/aws"}}}
	if err := runSync(context.Background(), r.env, f, nil, r.streams()); exitOf(err) != exitUsage {
		t.Fatalf("sync --spec --module: exit %d (%v), want 2", exitOf(err), err)
	}
}

// serve refuses flags that cannot work before it opens anything.
func TestRunServeUsage(t *testing.T) {
	mirror := packedMirror(t)
	for _, sf := range []serveFlags{
		{addr: "127.0.0.1:0", certFile: "mirror.crt"},
		{addr: "127.0.0.1:http"},
		{addr: "127.0.0.1:0", certFile: "mirror.crt", keyFile: "mirror.key", certOut: "ca.pem"},
	} {
		r := newTestRun()
		if err := runServe(context.Background(), r.env, &sf, []string{mirror}, r.streams()); exitOf(err) != exitUsage {
			t.Errorf("serve %+v: exit %d (%v), want 2", sf, exitOf(err), err)
		}
	}
}

// man writes a page per command of the tree it is wired to.
func TestManWritesTheTreesPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	if code := Execute(context.Background(), []string{"man", dir}); code != exitOK {
		t.Fatalf("tfmirror man %s: exit %d", dir, code)
	}
	for _, page := range []string{"tfmirror.1", "tfmirror-sync.1", "tfmirror-config-suggest.1"} {
		if _, err := os.Stat(filepath.Join(dir, page)); err != nil {
			t.Errorf("no page %s: %v", page, err)
		}
	}
}
