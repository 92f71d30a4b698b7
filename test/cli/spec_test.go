package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// specRegistry serves acme/TYPE for each type at each version, for
// linux_amd64 and darwin_arm64, each zip its own.
func specRegistry(t *testing.T, types []string, versions map[string][]string) *registrytest.Server {
	t.Helper()
	var ps []registrytest.Provider
	for _, typ := range types {
		p := registrytest.Provider{Namespace: "acme", Type: typ}
		for _, v := range versions[typ] {
			ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
			for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
				ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/"+typ, v, plat), "")
			}
			p.Versions = append(p.Versions, ver)
		}
		ps = append(ps, p)
	}
	return registrytest.New(t, ps...)
}

// caFile writes the PEM certificates into one file for --ca-cert.
func caFile(t *testing.T, pems ...[]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	var all []byte
	for _, b := range pems {
		all = append(all, b...)
	}
	if err := os.WriteFile(p, all, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lastJSON decodes the last line of JSON lines output.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var last string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			last = sc.Text()
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(last), &m); err != nil {
		t.Fatalf("last line %q: %v", last, err)
	}
	return m
}

type specRow struct {
	Provider, Version, Platform, Status, Detail, Destination, Source string
	From                                                             []string
}

func specRows(t *testing.T, out string) []specRow {
	t.Helper()
	var rows []specRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, out)
	}
	return rows
}

// A spec of five providers, each with its own kind of constraint, synced
// from a real origin registry (TLS, signed SHA256SUMS) into a filesystem
// mirror and an OCI registry at once: every wanted package lands in both,
// verified; a second run moves no archive byte and uploads no blob; diff
// --spec then finds everything present and names the spec line that asks
// for each version; terraform installs from the filesystem mirror, and
// OpenTofu from the OCI mirror where it is available.
func TestSpecSyncToFilesystemAndOCI(t *testing.T) {
	types := []string{"p1", "p2", "p3", "p4", "p5"}
	versions := map[string][]string{
		"p1": {"1.0.0", "1.1.0", "2.0.0"}, "p2": {"1.0.0", "1.1.0", "1.2.0"}, "p3": {"0.1.0", "0.2.0", "0.3.0"},
		"p4": {"3.0.0", "3.1.0"}, "p5": {"1.0.0", "2.0.0", "2.1.0"},
	}
	reg := specRegistry(t, types, versions)
	oreg := ocitest.New(t)
	ca, _ := os.ReadFile(oreg.CAFile())
	caPath := caFile(t, reg.CertPEM(), ca)
	host := reg.Host()
	dir := t.TempDir()
	specPath := filepath.Join(dir, "mirror.hcl")
	os.WriteFile(specPath, []byte(fmt.Sprintf(`destinations = ["./mirror", "oci://%s/tf/${namespace}/${type}"]
platforms    = ["linux_amd64", "darwin_arm64"]

provider "%[2]s/acme/p1" {
  versions = "~> 1.0"
}
provider "%[2]s/acme/p2" {
  versions = "latest"
}
provider "%[2]s/acme/p3" {
  versions = "latest 2"
}
provider "%[2]s/acme/p4" {
  versions  = "= 3.0.0"
  platforms = ["linux_amd64"]
}
provider "%[2]s/acme/p5" {
  versions = "latest, < 2.1"
}
`, oreg.Host(), host)), 0o644)
	want := map[string]string{ // provider: versions x platforms
		"p1": "1.1.0 1.0.0 x 2", "p2": "1.2.0 x 2", "p3": "0.3.0 0.2.0 x 2", "p4": "3.0.0 x 1", "p5": "2.0.0 x 2",
	}
	wantPackages := 2*2 + 2 + 2*2 + 1 + 2

	r := run(t, nil, "sync", "--spec", specPath, "--ca-cert", caPath, "--json")
	if r.code != 0 {
		t.Fatalf("sync --spec: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	sum := lastJSON(t, r.stdout)
	if sum["type"] != "summary" || sum["done"] != float64(2*wantPackages) || sum["ok"] != true {
		t.Fatalf("summary %v, want %d done in two destinations", sum, 2*wantPackages)
	}
	if reg.ArchiveBytes() == 0 {
		t.Fatal("no archive bytes came from the registry")
	}

	// What each destination holds: exactly what the spec wants.
	mirror := filepath.Join(dir, "mirror")
	oci := "oci://" + oreg.Host() + "/tf/${namespace}/${type}"
	// The template has no ${hostname}: the OCI mirror's providers are named.
	var named []string
	for _, typ := range types {
		named = append(named, "-p", host+"/acme/"+typ)
	}
	for _, dst := range []string{mirror, oci} {
		ls := run(t, nil, append([]string{"ls", dst, "--ca-cert", caPath, "--json"}, named...)...)
		var rows []struct{ Provider, Version, Platform string }
		if err := json.Unmarshal([]byte(ls.stdout), &rows); err != nil {
			t.Fatalf("decoding ls.stdout: %v\n%s", err, ls.stdout)
		}
		held := map[string]map[string]int{}
		for _, row := range rows {
			typ := row.Provider[strings.LastIndex(row.Provider, "/")+1:]
			if held[typ] == nil {
				held[typ] = map[string]int{}
			}
			held[typ][row.Version]++
		}
		for typ, w := range want {
			var vs []string
			n := 0
			for v, c := range held[typ] {
				vs = append(vs, v)
				n = c
			}
			sort.Sort(sort.Reverse(sort.StringSlice(vs)))
			if got := strings.Join(vs, " ") + fmt.Sprintf(" x %d", n); got != w {
				t.Errorf("%s holds %s %s, want %s", dst, typ, got, w)
			}
		}
		if v := run(t, nil, append([]string{"verify", dst, "--ca-cert", caPath}, named...)...); v.code != 0 {
			t.Errorf("verify %s: exit %d\n%s%s", dst, v.code, v.stdout, v.stderr)
		}
	}

	// Incremental: nothing moves the second time.
	reg.Reset()
	oreg.ResetRequests()
	r = run(t, nil, "sync", "--spec", specPath, "--ca-cert", caPath, "--json")
	if r.code != 0 {
		t.Fatalf("second sync: exit %d\n%s", r.code, r.stderr)
	}
	sum = lastJSON(t, r.stdout)
	if sum["done"] != float64(0) || sum["present"] != float64(2*wantPackages) || sum["bytes"] != float64(0) {
		t.Errorf("second sync summary %v: want nothing done, %d present", sum, 2*wantPackages)
	}
	if n := reg.ArchiveBytes(); n != 0 || reg.Count(registrytest.KindArchive) != 0 {
		t.Errorf("second sync downloaded %d archive bytes", n)
	}
	if n := oreg.BlobUploads(); n != 0 {
		t.Errorf("second sync uploaded %d blobs", n)
	}

	// The plan: everything present, each row naming the spec line asking.
	d := run(t, nil, "diff", "--spec", specPath, "--ca-cert", caPath, "--json")
	if d.code != 0 {
		t.Fatalf("diff --spec after sync: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	rows := specRows(t, d.stdout)
	if len(rows) != 2*wantPackages {
		t.Errorf("diff --spec: %d rows, want %d", len(rows), 2*wantPackages)
	}
	for _, row := range rows {
		if row.Status != "present" || len(row.From) != 1 || !strings.HasPrefix(row.From[0], specPath+":") || row.Destination == "" {
			t.Errorf("diff row %+v", row)
		}
	}

	t.Run("terraform installs from the filesystem mirror", func(t *testing.T) {
		tf, env := terraformEnv(t, reg.CertPEM(), fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror))
		cfg := t.TempDir()
		writeFile(t, cfg, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    p1 = { source = %q, version = \"~> 1.0\" }\n    p4 = { source = %q }\n  }\n}\n", host+"/acme/p1", host+"/acme/p4"))
		out := runTerraform(t, tf, env, "-chdir="+cfg, "init", "-input=false", "-no-color")
		for _, w := range []string{"Installed " + host + "/acme/p1 v1.1.0", "Installed " + host + "/acme/p4 v3.0.0"} {
			if !strings.Contains(out, w) {
				t.Errorf("init output lacks %q:\n%s", w, out)
			}
		}
	})
	t.Run("tofu installs from the OCI mirror", func(t *testing.T) {
		tofuInstallsFromOCI(t, oreg, ca, host+"/acme/p2", "1.2.0")
	})
}

// tofuInstallsFromOCI runs `tofu init` against the OCI mirror for one
// provider version, when OpenTofu has been built into the tools cache.
func tofuInstallsFromOCI(t *testing.T, oreg *ocitest.Registry, caPEM []byte, provider, version string) {
	home, _ := os.UserHomeDir()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(home, ".cache")
	}
	tofu := filepath.Join(cache, "tfmirror-tools", "tofu-1.12.6")
	if _, err := os.Stat(tofu); err != nil {
		t.Skipf("OpenTofu is not at %s (see shared testing notes to build it): skipping the install from the OCI mirror", tofu)
	}
	dir := t.TempDir()
	writeFile(t, dir, "ca.pem", string(caPEM))
	cfg := writeFile(t, dir, "cli.tfrc", fmt.Sprintf("provider_installation {\n  oci_mirror {\n    repository_template = \"%s/tf/${namespace}/${type}\"\n    include = [\"%s\"]\n  }\n}\noci_default_credentials {\n  discover_ambient_credentials = false\n}\n", oreg.Host(), provider))
	conf := t.TempDir()
	writeFile(t, conf, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    x = { source = %q, version = \"= %s\" }\n  }\n}\n", provider, version))
	cmd := exec.Command(tofu, "-chdir="+conf, "init", "-input=false", "-no-color")
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+filepath.Join(dir, "ca.pem"), "SSL_CERT_DIR="+dir, "HOME="+dir, "TF_CLI_CONFIG_FILE="+cfg, "TF_PLUGIN_CACHE_DIR=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Installed "+provider+" v"+version) {
		t.Errorf("tofu init from the OCI mirror: %v\n%s", err, out)
	}
}

// pkgSet lists a place's packages as "TYPE VERSION PLATFORM".
func pkgSet(t *testing.T, place string, extra ...string) []string {
	t.Helper()
	ls := run(t, nil, append([]string{"ls", place, "--json"}, extra...)...)
	if ls.code != 0 {
		t.Fatalf("ls %s: exit %d\n%s", place, ls.code, ls.stderr)
	}
	var rows []struct{ Provider, Version, Platform string }
	if err := json.Unmarshal([]byte(ls.stdout), &rows); err != nil {
		t.Fatalf("decoding ls.stdout: %v\n%s", err, ls.stdout)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.Provider[strings.LastIndex(r.Provider, "/")+1:]+" "+r.Version+" "+r.Platform)
	}
	sort.Strings(out)
	return out
}

// --from over a tree of two configurations (one calling a shared module
// that calls a nested one, the other with a lock file pinning older
// versions) selects the providers and versions `terraform providers mirror`
// selects in each configuration, together: constraints merged across the
// modules of a configuration, the lock file's versions honoured. diff --json
// names the files that ask for each version.
func TestFromSelectsWhatTerraformProvidersMirrorSelects(t *testing.T) {
	reg := specRegistry(t, []string{"alpha", "beta", "gamma"}, map[string][]string{
		"alpha": {"1.0.0", "1.1.0", "1.2.0", "2.0.0"}, "beta": {"0.9.0", "1.0.0", "1.5.0"}, "gamma": {"3.0.0", "3.1.0"},
	})
	host := reg.Host()
	ca := caFile(t, reg.CertPEM())
	tf, env := terraformEnv(t, reg.CertPEM(), "")
	tree := t.TempDir()
	src := func(typ string) string { return host + "/acme/" + typ }
	files := map[string]string{
		"infra/main.tf": fmt.Sprintf(`terraform {
  required_providers {
    alpha = { source = %q, version = ">= 1.0" }
  }
}
module "net" {
  source = "../modules/net"
}
`, src("alpha")),
		"modules/net/main.tf": fmt.Sprintf(`terraform {
  required_providers {
    alpha = { source = %q, version = "< 2.0" }
    beta  = { source = %q, version = "~> 1.0" }
  }
}
module "inner" {
  source = "./inner"
}
`, src("alpha"), src("beta")),
		"modules/net/inner/main.tf": fmt.Sprintf("terraform {\n  required_providers {\n    gamma = { source = %q }\n  }\n}\n", src("gamma")),
		"app/main.tf":               fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q }\n    beta = { source = %q, version = \">= 0.9\" }\n  }\n}\n", src("alpha"), src("beta")),
	}
	for p, c := range files {
		full := filepath.Join(tree, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
	}
	// app's lock file pins versions older than the newest its constraints allow.
	lock := filepath.Join(tree, "app", ".terraform.lock.hcl")
	for _, pin := range [][2]string{{"alpha", "1.1.0"}, {"beta", "1.0.0"}} {
		if r := run(t, nil, "lock", "registry://"+host, "--lock", lock, "-p", "acme/"+pin[0], "-v", pin[1], "--platform", "linux_amd64", "--ca-cert", ca); r.code != 0 {
			t.Fatalf("lock %s: exit %d\n%s", pin[0], r.code, r.stderr)
		}
	}
	plats := []string{"-platform=linux_amd64", "-platform=darwin_arm64"}

	var byTerraform []string
	for _, root := range []string{"infra", "app"} {
		dir := filepath.Join(tree, root)
		runTerraform(t, tf, env, "-chdir="+dir, "get", "-no-color")
		out := t.TempDir()
		runTerraform(t, tf, env, append([]string{"-chdir=" + dir, "providers", "mirror"}, append(plats, out)...)...)
		byTerraform = append(byTerraform, pkgSet(t, out)...)
	}
	byTerraform = uniqueSorted(byTerraform)
	want := []string{
		"alpha 1.1.0 darwin_arm64", "alpha 1.1.0 linux_amd64", "alpha 1.2.0 darwin_arm64", "alpha 1.2.0 linux_amd64",
		"beta 1.0.0 darwin_arm64", "beta 1.0.0 linux_amd64", "beta 1.5.0 darwin_arm64", "beta 1.5.0 linux_amd64",
		"gamma 3.1.0 darwin_arm64", "gamma 3.1.0 linux_amd64",
	}
	if strings.Join(byTerraform, "\n") != strings.Join(want, "\n") {
		t.Fatalf("terraform providers mirror selected\n  %s\nthe test expects\n  %s", strings.Join(byTerraform, "\n  "), strings.Join(want, "\n  "))
	}

	dst := filepath.Join(t.TempDir(), "mirror")
	d := run(t, nil, "diff", dst, "--from", tree, "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca, "--json")
	if d.code != 1 {
		t.Errorf("diff into an empty mirror: exit %d, want 1\n%s", d.code, d.stderr)
	}
	from := map[string][]string{}
	for _, row := range specRows(t, d.stdout) {
		if row.Status != "missing" {
			t.Errorf("diff row %+v", row)
		}
		typ := row.Provider[strings.LastIndex(row.Provider, "/")+1:]
		for _, f := range row.From {
			rel, _ := filepath.Rel(tree, f)
			from[typ+" "+row.Version] = appendUnique(from[typ+" "+row.Version], filepath.ToSlash(rel))
		}
	}
	for k, w := range map[string]string{
		"alpha 1.1.0": "app/main.tf:3 app/.terraform.lock.hcl",
		"alpha 1.2.0": "infra/main.tf:3 modules/net/main.tf:3",
		"beta 1.5.0":  "modules/net/main.tf:4",
		"gamma 3.1.0": "modules/net/inner/main.tf:3",
	} {
		if got := strings.Join(from[k], " "); got != w {
			t.Errorf("%s asked for by %q, want %q", k, got, w)
		}
	}

	r := run(t, nil, "sync", dst, "--from", tree, "--platform", "linux_amd64", "--platform", "darwin_arm64", "--ca-cert", ca)
	if r.code != 0 {
		t.Fatalf("sync --from: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := pkgSet(t, dst); strings.Join(got, "\n") != strings.Join(byTerraform, "\n") {
		t.Errorf("sync --from selected\n  %s\nterraform providers mirror\n  %s", strings.Join(got, "\n  "), strings.Join(byTerraform, "\n  "))
	}
}

func uniqueSorted(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func appendUnique(list []string, s string) []string {
	for _, l := range list {
		if l == s {
			return list
		}
	}
	return append(list, s)
}

// Exit codes: a spec with a mistake, or flags that do not go with it, exit
// 2 naming the file and line; a wanted version no source offers makes sync
// exit 1 after syncing the rest, and is counted in the JSON summary, the
// last line; --help shows a real spec.
func TestSpecExitCodes(t *testing.T) {
	src, _ := fsMirror(t) // example.com/acme/alpha 1.0.0, 1.1.0
	dir := t.TempDir()
	good := writeFile(t, dir, "good.hcl", fmt.Sprintf(`destinations = ["./dst"]
source = %q
provider "example.com/acme/alpha" {
  versions = ">= 1.1"
}
provider "example.com/acme/alpha-gone" {
  versions = "latest"
}
`, src))
	bad := writeFile(t, dir, "bad.hcl", "destinations = [\"./dst\"]\nprovider \"example.com/acme/alpha\" {\n  versions = \"~> x\"\n}\n")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"malformed spec", []string{"sync", "--spec", bad}, 2, "bad.hcl:3:"},
		{"diff of a malformed spec", []string{"diff", "--spec", bad}, 2, "bad.hcl:3:"},
		{"spec and places", []string{"sync", "--spec", good, src, "x"}, 2, "takes no SRC or DST"},
		{"spec and --provider", []string{"diff", "--spec", good, "-p", "acme/alpha"}, 2, "do not go with --spec"},
		{"spec and --platform", []string{"sync", "--spec", good, "--platform", "linux_amd64"}, 2, "spec's platforms"},
		{"--from without DST", []string{"sync", "--from", dir}, 2, "[SRC] DST"},
		{"--from finding nothing", []string{"diff", t.TempDir(), "--from", dir}, 2, "nothing to mirror"},
		{"missing spec", []string{"sync", "--spec", filepath.Join(dir, "none.hcl")}, 2, "none.hcl"},
	} {
		r := run(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, r.code, r.stderr, c.code, c.want)
		}
	}

	r := run(t, nil, "sync", "--spec", good, "--json")
	if r.code != 1 {
		t.Fatalf("sync with a wanted provider the source lacks: exit %d, want 1\n%s", r.code, r.stderr)
	}
	sum := lastJSON(t, r.stdout)
	if sum["type"] != "summary" || sum["unavailable"] != float64(1) || sum["done"] != float64(2) || sum["ok"] != false {
		t.Errorf("summary %v: want 2 done (alpha 1.1.0 on two platforms), 1 unavailable", sum)
	}
	if !strings.Contains(r.stdout, `"type":"unavailable"`) || !strings.Contains(r.stdout, "alpha-gone") || !strings.Contains(r.stdout, "good.hcl:6") {
		t.Errorf("no unavailable event naming alpha-gone and good.hcl:6:\n%s", r.stdout)
	}
	if d := run(t, nil, "diff", "--spec", good); d.code != 1 || !strings.Contains(d.stdout, "unavailable") {
		t.Errorf("diff --spec: exit %d\n%s", d.code, d.stdout)
	}

	h := run(t, nil, "sync", "--help")
	for _, w := range []string{"--spec", "--from", "destinations = [", `provider "hashicorp/aws"`, "latest 3"} {
		if !strings.Contains(h.stdout, w) {
			t.Errorf("sync --help lacks %q", w)
		}
	}
}

// A spec with two destinations lists its source once: the origin
// registry answers one download-metadata request per wanted package, not
// one per package and destination, in sync --spec and in diff --spec;
// both destinations still get every package.
func TestSpecListsSourceOncePerPackage(t *testing.T) {
	reg := specRegistry(t, []string{"one", "two"}, map[string][]string{"one": {"1.0.0", "1.1.0"}, "two": {"2.0.0", "2.1.0"}})
	ca := caFile(t, reg.CertPEM())
	dir := t.TempDir()
	specPath := writeFile(t, dir, "mirror.hcl", fmt.Sprintf(`destinations = ["./a", "./b"]
platforms    = ["linux_amd64", "darwin_arm64"]
provider "%[1]s/acme/one" {
  versions = ">= 1.0"
}
provider "%[1]s/acme/two" {
  versions = ">= 2.0"
}
`, reg.Host()))
	const packages = 2 * 2 * 2 // providers x versions x platforms
	reg.Reset()
	r := run(t, nil, "sync", "--spec", specPath, "--ca-cert", ca, "--json")
	if r.code != 0 {
		t.Fatalf("sync --spec: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if sum := lastJSON(t, r.stdout); sum["done"] != float64(2*packages) {
		t.Errorf("summary %v: want %d packages landed in two destinations", sum, 2*packages)
	}
	if n := reg.Count(registrytest.KindDownload); n != packages {
		t.Errorf("sync --spec into two destinations made %d download-metadata requests, want %d (one per package)", n, packages)
	}
	for _, d := range []string{"a", "b"} {
		if got := pkgSet(t, filepath.Join(dir, d)); len(got) != packages {
			t.Errorf("%s holds %d packages, want %d: %v", d, len(got), packages, got)
		}
	}
	reg.Reset()
	if d := run(t, nil, "diff", "--spec", specPath, "--ca-cert", ca, "--json"); d.code != 0 || len(specRows(t, d.stdout)) != 2*packages {
		t.Fatalf("diff --spec: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	if n := reg.Count(registrytest.KindDownload); n != packages {
		t.Errorf("diff --spec of two destinations made %d download-metadata requests, want %d", n, packages)
	}
}
