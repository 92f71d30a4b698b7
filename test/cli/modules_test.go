package cli

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// moduleCLIWorld is a module registry and an OCI registry, both over TLS,
// and the environment that makes the binary trust them.
type moduleCLIWorld struct {
	reg  *modulestest.Server
	oci  *ocitest.Registry
	env  []string
	repo string // the git repository behind version 1.2.0
}

func newModuleCLIWorld(t *testing.T) *moduleCLIWorld {
	t.Helper()
	reg := modulestest.New(t)
	files := []modulestest.Entry{{Name: "main.tf", Body: "variable \"name\" {\n  default = \"x\"\n}\n"}, {Name: "modules/sub/main.tf", Body: "output \"ok\" {\n  value = true\n}\n"}}
	reg.File("/archives/net-1.0.0.zip", modulestest.Zip(t, files))
	reg.File("/archives/net-1.1.0.tar.gz", modulestest.TarGz(t, files))
	repo := modulestest.GitRepo(t, []string{"v1.2.0"}, [][]modulestest.Entry{files})
	reg.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "/archives/net-1.0.0.zip"})
	reg.Add("acme/net/aws", "v1.1", modulestest.Download{Location: reg.URL() + "/archives/net-1.1.0.tar.gz", Style: modulestest.Header204})
	reg.Add("acme/net/aws", "1.2.0", modulestest.Download{Location: "git::file://" + repo + "//modules/sub?ref=v1.2.0"})
	o := ocitest.New(t)
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	a, _ := os.ReadFile(reg.CAFile())
	b, _ := os.ReadFile(o.CAFile())
	os.WriteFile(bundle, append(a, b...), 0o644)
	os.Mkdir(filepath.Join(dir, "certs"), 0o755)
	os.Mkdir(filepath.Join(dir, "home"), 0o755)
	env := []string{"SSL_CERT_FILE=" + bundle, "SSL_CERT_DIR=" + filepath.Join(dir, "certs"), "HOME=" + filepath.Join(dir, "home"),
		"DOCKER_CONFIG=" + filepath.Join(dir, "home"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "home"), "XDG_RUNTIME_DIR=", "REGISTRY_AUTH_FILE=",
		"TF_CLI_CONFIG_FILE=" + filepath.Join(dir, "none.tfrc"), "NO_COLOR=1"}
	return &moduleCLIWorld{reg: reg, oci: o, env: env, repo: repo}
}

func (w *moduleCLIWorld) template() string {
	return "oci://" + w.oci.Host() + "/modules/${namespace}/${name}-${system}"
}

func TestCLIModulesLs(t *testing.T) {
	w := newModuleCLIWorld(t)
	r := run(t, w.env, "ls", "registry://"+w.reg.Host(), "--module", "acme/net/aws")
	if r.code != 0 {
		t.Fatalf("ls: %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"MODULE", w.reg.Host() + "/acme/net/aws  1.2.0 ", "git::file://" + w.repo + "//modules/sub?ref=v1.2.0",
		"1.1.0 (v1.1)", w.reg.URL() + "/archives/net-1.1.0.tar.gz", w.reg.URL() + "/archives/net-1.0.0.zip",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("ls output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, w.env, "ls", "registry://"+w.reg.Host(), "--module", "acme/net/aws", "-v", "~> 1.1.0", "--json")
	var rows []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("ls --json: %v %d\n%s%s", err, r.code, r.stdout, r.stderr)
	}
	if len(rows) != 1 || rows[0]["version"] != "1.1.0" || rows[0]["listed"] != "v1.1" || rows[0]["module"] != w.reg.Host()+"/acme/net/aws" {
		t.Errorf("rows %v", rows)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ls", "registry://" + w.reg.Host(), "--module", "acme/none/aws"}, 1, "not found"},
		{[]string{"ls", "registry://" + w.reg.Host(), "--module", "acme/net/aws", "--platform", "linux_amd64"}, 2, "no --provider or --platform"},
		{[]string{"ls", "registry://" + w.reg.Host(), "--module", "acme/net"}, 2, "--module"},
		{[]string{"ls", "https://" + w.reg.Host() + "/", "--module", "acme/net/aws"}, 2, "not a module place"},
	} {
		r := run(t, w.env, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

var digestAddr = regexp.MustCompile(`oci://[^\s"]+\?digest=sha256:[0-9a-f]{64}`)

func TestCLIModulesSyncToOCIAndRewrite(t *testing.T) {
	w := newModuleCLIWorld(t)
	args := []string{"sync", "registry://" + w.reg.Host(), w.template(), "--module", "acme/net/aws", "-v", ">= 1.0"}
	r := run(t, w.env, args...)
	if r.code != 0 {
		t.Fatalf("sync: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	repo := "oci://" + w.oci.Host() + "/modules/acme/net-aws"
	addrs := digestAddr.FindAllString(r.stdout, -1)
	if len(addrs) != 3 || !strings.Contains(r.stdout, "Module sources") || !strings.Contains(r.stdout, repo+"//modules/sub?digest=sha256:") {
		t.Fatalf("sync output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "3 modules synced") || !strings.Contains(r.stderr, "0 already present") {
		t.Errorf("summary: %s", r.stderr)
	}
	if !strings.Contains(r.stdout, "✓ "+w.reg.Host()+"/acme/net/aws 1.0.0  ") {
		t.Errorf("job lines:\n%s", r.stdout)
	}
	// Again: nothing is uploaded, the same addresses are printed.
	w.oci.ResetRequests()
	r = run(t, w.env, args...)
	if r.code != 0 || !strings.Contains(r.stderr, "0 modules synced") || !strings.Contains(r.stderr, "3 already present") {
		t.Fatalf("second sync: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if again := digestAddr.FindAllString(r.stdout, -1); strings.Join(again, " ") != strings.Join(addrs, " ") {
		t.Errorf("addresses changed: %v -> %v", addrs, again)
	}
	if n := w.oci.BlobUploads() + w.oci.Count(http.MethodPut, "/manifests/"); n != 0 {
		t.Errorf("second sync uploaded %d times", n)
	}
	// JSON: one event per line, module jobs named, sources at the end.
	r = run(t, w.env, append(args, "--json", "-v", "= 1.0.0")...)
	if r.code != 0 {
		t.Fatalf("sync --json: %d %s", r.code, r.stderr)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %s", sc.Text())
		}
		types = append(types, ev["type"].(string))
		if ev["type"] == "done" && ev["name"] != w.reg.Host()+"/acme/net/aws 1.0.0" {
			t.Errorf("done event %v", ev)
		}
		if ev["type"] == "module_source" && (ev["present"] != true || !strings.HasPrefix(ev["source"].(string), repo+"?digest=")) {
			t.Errorf("module_source event %v", ev)
		}
	}
	if got := strings.Join(types, ","); !strings.HasPrefix(got, "queued,started") || !strings.HasSuffix(got, "idle,module_source,summary") {
		t.Errorf("event types %s", got)
	}
	// A listing of the mirror names the same digests.
	r = run(t, w.env, "ls", w.template(), "--module", w.reg.Host()+"/acme/net/aws")
	if r.code != 0 || strings.Join(digestAddr.FindAllString(r.stdout, -1), " ") != strings.Join(addrs, " ") {
		t.Errorf("ls of the mirror: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Rewrite a configuration to use the mirror.
	dir := t.TempDir()
	cfg := "module \"net\" {\n  source  = \"" + w.reg.Host() + "/acme/net/aws\"\n  version = \"~> 1.0.0\"\n}\n"
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644)
	r = run(t, w.env, "modules", "rewrite", dir, "--oci", w.template())
	if r.code != 0 || !strings.Contains(r.stdout, "-  version = \"~> 1.0.0\"") || !strings.Contains(r.stdout, "+  source = \""+repo+"?digest=sha256:") ||
		!strings.Contains(r.stderr, "would be rewritten") {
		t.Fatalf("rewrite: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.tf")); string(b) != cfg {
		t.Fatal("rewrite without --write changed the file")
	}
	r = run(t, w.env, "modules", "rewrite", dir, "--oci", w.template(), "--write")
	b, _ := os.ReadFile(filepath.Join(dir, "main.tf"))
	if r.code != 0 || !strings.Contains(string(b), addrs[2]) || strings.Contains(string(b), "version") {
		t.Fatalf("rewrite --write: %d %s\n%s", r.code, r.stderr, b)
	}
	// A module nothing was mirrored for is a problem (exit 1).
	os.WriteFile(filepath.Join(dir, "other.tf"), []byte("module \"x\" {\n  source = \""+w.reg.Host()+"/acme/other/aws\"\n}\n"), 0o644)
	r = run(t, w.env, "modules", "rewrite", dir, "--oci", w.template())
	if r.code != 1 || !strings.Contains(r.stderr, `not rewritten: `) || !strings.Contains(r.stderr, `module "x"`) {
		t.Errorf("unmirrored module: %d %s", r.code, r.stderr)
	}
}

func TestCLIModulesSyncToDirAndErrors(t *testing.T) {
	w := newModuleCLIWorld(t)
	dst := t.TempDir()
	r := run(t, w.env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", "latest")
	zip := filepath.Join(dst, w.reg.Host(), "acme/net/aws/1.2.0.zip")
	if r.code != 0 || !strings.Contains(r.stdout, zip+"//modules/sub") {
		t.Fatalf("sync to a directory: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(zip); err != nil {
		t.Fatal(err)
	}
	r = run(t, w.env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", "= 1.0.0", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, w.reg.URL()+"/archives/net-1.0.0.zip") {
		t.Errorf("dry run: %d\n%s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dst, w.reg.Host(), "acme/net/aws/1.0.0.zip")); err == nil {
		t.Error("the dry run wrote a package")
	}
	// A version whose archive is gone fails, and says which.
	w.reg.Handle("/archives/net-1.0.0.zip", func(rw http.ResponseWriter, r *http.Request) { http.NotFound(rw, r) })
	r = run(t, w.env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", "= 1.0.0")
	if r.code != 1 || !strings.Contains(r.stderr, "failed: "+w.reg.Host()+"/acme/net/aws 1.0.0") || !strings.Contains(r.stderr, "404") {
		t.Errorf("missing archive: %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sync", "registry://" + w.reg.Host(), dst, "--module", "acme/net/aws"}, 2, "needs --version"},
		{[]string{"sync", dst, dst, "--module", "acme/net/aws", "-v", "1.0.0"}, 2, "registry://HOST"},
		{[]string{"sync", "registry://" + w.reg.Host(), "registry://" + w.reg.Host(), "--module", "acme/net/aws", "-v", "1.0.0"}, 2, "read-only"},
		{[]string{"sync", "registry://" + w.reg.Host(), dst, "--module", "other.example.com/acme/net/aws", "-v", "1.0.0"}, 2, "name modules on it"},
		{[]string{"sync", "registry://" + w.reg.Host(), "oci://" + w.oci.Host() + "/one/repo", "--module", "acme/net/aws", "--module", "acme/vpc/aws", "-v", "1.0.0"}, 2, "would share the repository"},
		{[]string{"sync", "registry://" + w.reg.Host(), "oci://" + w.oci.Host() + "/${type}", "--module", "acme/net/aws", "-v", "1.0.0"}, 2, "unknown placeholder"},
		{[]string{"sync", "registry://" + w.reg.Host(), dst, "--module", "acme/net/aws", "-v", "> 9"}, 1, "no version matches"},
		{[]string{"modules", "rewrite", dst}, 2, "needs --oci"},
	} {
		r := run(t, w.env, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// TestCLIModuleRegistryCredentialsFromCLIConfig: a credentials block of the
// CLI configuration opens a module registry that requires a token, as it
// opens a provider registry; the token goes to the registry API, not to the
// package archives. Without it the refusal says what to set.
func TestCLIModuleRegistryCredentialsFromCLIConfig(t *testing.T) {
	w := newModuleCLIWorld(t)
	w.reg.RequireToken("s3cret")
	cfg := filepath.Join(t.TempDir(), "cli.tfrc")
	os.WriteFile(cfg, []byte("credentials \""+w.reg.Host()+"\" {\n  token = \"s3cret\"\n}\n"), 0o644)
	withCfg := append(append([]string(nil), w.env...), "TF_CLI_CONFIG_FILE="+cfg)

	r := run(t, w.env, "ls", "registry://"+w.reg.Host(), "--module", "acme/net/aws")
	if r.code != 1 || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "TF_TOKEN_127_0_0_1") {
		t.Fatalf("ls without credentials: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dst := t.TempDir()
	r = run(t, withCfg, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", "= 1.0.0")
	if r.code != 0 {
		t.Fatalf("sync with a credentials block: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, w.reg.Host(), "acme/net/aws/1.0.0.zip")); err != nil {
		t.Fatal(err)
	}
	api := 0
	for _, s := range w.reg.Seen() {
		switch {
		case strings.HasPrefix(s.Path, "/v1/modules/") && s.Authorization == "Bearer s3cret":
			api++
		case strings.HasPrefix(s.Path, "/archives/") && s.Authorization != "":
			t.Errorf("%s got the token; an indirect package location gets none", s.Path)
		}
	}
	if api == 0 {
		t.Errorf("no API request carried the token: %+v", w.reg.Seen())
	}
}

// TestTofuInstallsMirroredModule runs tofu init against a configuration
// whose module source is the address sync printed.
func TestTofuInstallsMirroredModule(t *testing.T) {
	tofu := backendtest.Tofu(t, "the tofu init test of a mirrored oci:// module")
	w := newModuleCLIWorld(t)
	r := run(t, w.env, "sync", "registry://"+w.reg.Host(), w.template(), "--module", "acme/net/aws", "-v", "= 1.2.0")
	addr := digestAddr.FindString(r.stdout)
	if r.code != 0 || addr == "" {
		t.Fatalf("sync: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte("module \"net\" {\n  source = \""+addr+"\"\n}\n\noutput \"ok\" {\n  value = module.net.ok\n}\n"), 0o644)
	cliConfig := filepath.Join(dir, "tofu.tfrc")
	os.WriteFile(cliConfig, []byte("oci_default_credentials {\n  discover_ambient_credentials = false\n}\n"), 0o644)
	cmd := exec.Command(tofu, "init", "-input=false", "-no-color")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), w.env...)
	cmd.Env = append(cmd.Env, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_PLUGIN_CACHE_DIR=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tofu init: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "net", "modules", "sub", "main.tf"))
	if err != nil || !strings.Contains(string(b), `output "ok"`) {
		t.Fatalf("installed module: %v\n%s", err, out)
	}
}

// TestTerraformInstallsPackedModule checks the zips tfmirror packs with a
// real client: terraform init installs a module from a mirrored zip (a
// local go-getter source, extracted by the same zip code OpenTofu uses for
// oci:// packages), //subdir included, with a relative call inside the
// package.
func TestTerraformInstallsPackedModule(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not installed: skipping the terraform init test of a packed module")
	}
	w := newModuleCLIWorld(t)
	dst := t.TempDir()
	r := run(t, w.env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", "= 1.2.0")
	zip := filepath.Join(dst, w.reg.Host(), "acme/net/aws/1.2.0.zip")
	if r.code != 0 || !strings.Contains(r.stdout, zip+"//modules/sub") {
		t.Fatalf("sync: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := t.TempDir()
	cfg := "module \"sub\" {\n  source = \"" + zip + "//modules/sub\"\n}\n\noutput \"ok\" {\n  value = module.sub.ok\n}\n"
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644)
	cliConfig := filepath.Join(dir, "empty.tfrc")
	os.WriteFile(cliConfig, nil, 0o644)
	cmd := exec.Command(tf, "init", "-input=false", "-no-color", "-backend=false")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	installed := filepath.Join(dir, ".terraform", "modules", "sub")
	for name, want := range map[string]string{"main.tf": "variable \"name\"", "modules/sub/main.tf": "output \"ok\""} {
		b, err := os.ReadFile(filepath.Join(installed, name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v %q\n%s", name, err, b, out)
		}
		fi, err := os.Stat(filepath.Join(installed, name))
		if err == nil && fi.Mode().Perm() != 0o644 {
			t.Errorf("%s extracted with mode %v, want 0644", name, fi.Mode().Perm())
		}
	}
	cmd = exec.Command(tf, "plan", "-input=false", "-no-color")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "ok = true") {
		t.Errorf("terraform plan: %v\n%s", err, out)
	}
}

// TestTerraformAgreesWithSync is a differential test against a real
// client: for each kind of location (relative X-Terraform-Get paths, a
// git source with a //subdir), the files terraform init installs from the
// test registry are exactly the files of the package tfmirror mirrors
// from it. (Terraform 1.11 reads only X-Terraform-Get; the JSON location
// body is OpenTofu's.)
func TestTerraformAgreesWithSync(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not installed: skipping the comparison with terraform init")
	}
	w := newModuleCLIWorld(t)
	w.reg.Add("acme/net/aws", "2.0.0", modulestest.Download{Location: "/archives/net-1.1.0.tar.gz", Style: modulestest.Header204})
	w.reg.Add("acme/net/aws", "2.1.0", modulestest.Download{Location: "../../../../../../archives/net-1.0.0.zip", Style: modulestest.Header204})
	w.reg.Add("acme/net/aws", "2.2.0", modulestest.Download{Location: "git::file://" + w.repo + "//modules/sub?ref=v1.2.0", Style: modulestest.Header204})
	dst := t.TempDir()
	if r := run(t, w.env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", ">= 2.0"); r.code != 0 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	for _, v := range []string{"2.0.0", "2.1.0", "2.2.0"} {
		dir := t.TempDir()
		cfg := "module \"net\" {\n  source  = \"" + w.reg.Host() + "/acme/net/aws\"\n  version = \"" + v + "\"\n}\n"
		os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644)
		cliConfig := filepath.Join(dir, "empty.tfrc")
		os.WriteFile(cliConfig, nil, 0o644)
		cmd := exec.Command(tf, "init", "-input=false", "-no-color", "-backend=false")
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), w.env...), "HOME="+dir, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: terraform init: %v\n%s", v, err, out)
		}
		installed := map[string]string{}
		root := filepath.Join(dir, ".terraform", "modules", "net")
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.Name() == ".git" {
					return filepath.SkipDir
				}
				return err
			}
			rel, _ := filepath.Rel(root, p)
			b, _ := os.ReadFile(p)
			installed[filepath.ToSlash(rel)] = string(b)
			return nil
		})
		packed := zipFiles(t, filepath.Join(dst, w.reg.Host(), "acme/net/aws", v+".zip"))
		if len(installed) == 0 || len(installed) != len(packed) {
			t.Errorf("%s: terraform installed %d files, the package has %d", v, len(installed), len(packed))
		}
		for name, body := range installed {
			if packed[name] != body {
				t.Errorf("%s: %s differs: terraform %q, package %q", v, name, body, packed[name])
			}
		}
	}
}

func zipFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	out := map[string]string{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

// sync --module into a bucket: the packages land under its prefix with
// their records, ls --module lists them with their sha256 and commit, and
// a second sync finds them present.
func TestCLIModulesSyncToABucket(t *testing.T) {
	w := newModuleCLIWorld(t)
	srv := s3test.Start(t)
	dst := "s3://" + srv.Bucket(t) + "/modules"
	env := append(append(w.env, srv.Env()...), "AWS_CA_BUNDLE="+srv.CAFile())
	r := run(t, env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", ">= 1.0", "--s3-endpoint", srv.URL)
	if r.code != 0 || !strings.Contains(r.stdout, dst+"/"+w.reg.Host()+"/acme/net/aws/1.2.0.zip//modules/sub") {
		t.Fatalf("sync to a bucket: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, env, "ls", dst, "--module", w.reg.Host()+"/acme/net/aws", "--json", "--s3-endpoint", srv.URL)
	var rows []struct{ Version, SHA256, Revision string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 || len(rows) != 3 {
		t.Fatalf("ls --module of the bucket: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	for _, row := range rows {
		if len(row.SHA256) != 64 || (row.Version == "1.2.0") != (len(row.Revision) == 40) {
			t.Errorf("ls --module row %+v: want its sha256, and the git version's commit", row)
		}
	}
	r = run(t, env, "sync", "registry://"+w.reg.Host(), dst, "--module", "acme/net/aws", "-v", ">= 1.0", "--s3-endpoint", srv.URL, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"present":3`) {
		t.Errorf("sync again: exit %d, want 3 present\n%s%s", r.code, r.stdout, r.stderr)
	}
}
