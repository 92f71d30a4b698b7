package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// moduleWorld is pullWorld's origin at 127.0.0.1:443 answering modules.v1
// too (a module registry behind it), and a plain HTTP server holding the
// packages it names: an archive, one named through X-Terraform-Get, and a
// git repository served by git http-backend.
type moduleWorld struct {
	*pullWorld
	reg   *modulestest.Server
	files *httptest.Server
}

// The modules: net has a submodule (used as //modules/sub), app calls net
// through the registry, gitmod's package is a git tag.
const (
	netMain   = "variable \"name\" {\n  default = \"net\"\n}\noutput \"name\" {\n  value = var.name\n}\n"
	subMain   = "output \"sub\" {\n  value = \"sub\"\n}\n"
	appMain   = "module \"net\" {\n  source  = \"127.0.0.1/acme/net/aws\"\n  version = \"1.0.0\"\n}\n"
	gitMain   = "output \"git\" {\n  value = \"git\"\n}\n"
	modConfig = `terraform {
  required_providers {
    alpha = { source = "127.0.0.1/acme/alpha", version = "= 1.0.0" }
  }
}
module "sub" {
  source  = "127.0.0.1/acme/net/aws//modules/sub"
  version = "1.0.0"
}
module "app" {
  source  = "127.0.0.1/acme/app/aws"
  version = "~> 1.0"
}
module "git" {
  source  = "127.0.0.1/acme/gitmod/aws"
  version = "1.0.0"
}
`
)

func newModuleWorld(t *testing.T) *moduleWorld {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: skipping the module pull-through test (its git package needs git http-backend)")
	}
	w := &moduleWorld{pullWorld: newPullWorld(t, registrytest.Faults{}), reg: modulestest.New(t)}
	repo := modulestest.GitRepo(t, []string{"v1.0.0"}, [][]modulestest.Entry{modulestest.Files(map[string]string{"main.tf": gitMain})})
	root := t.TempDir()
	modulestest.Git(t, root, "clone", "--bare", "--quiet", repo, filepath.Join(root, "gitmod.git"))
	mux := http.NewServeMux()
	mux.Handle("/git/", &cgi.Handler{Path: git, Root: "/git", Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	netZip := modulestest.Zip(t, modulestest.Files(map[string]string{"main.tf": netMain, "modules/sub/main.tf": subMain}))
	appZip := modulestest.Zip(t, modulestest.Files(map[string]string{"main.tf": appMain}))
	mux.HandleFunc("/pkg/net.zip", func(rw http.ResponseWriter, _ *http.Request) { rw.Write(netZip) })
	mux.HandleFunc("/pkg/app.zip", func(rw http.ResponseWriter, _ *http.Request) { rw.Write(appZip) })
	w.files = httptest.NewServer(mux)
	t.Cleanup(w.files.Close)

	w.reg.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: w.files.URL + "/pkg/net.zip"})
	w.reg.Add("acme/app/aws", "v1.0.0", modulestest.Download{Location: w.files.URL + "/pkg/app.zip", Style: modulestest.Header204})
	w.reg.Add("acme/gitmod/aws", "1.0.0", modulestest.Download{Location: "git::" + w.files.URL + "/git/gitmod.git?ref=v1.0.0"})
	target, _ := url.Parse(w.reg.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = w.reg.Client().Transport
	w.pullWorld.reg.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/modules/") {
				proxy.ServeHTTP(rw, r)
				return
			}
			next.ServeHTTP(rw, r)
		})
	})
	return w
}

// installedModules are the module keys init recorded in
// .terraform/modules/modules.json, sorted.
func installedModules(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatalf("no modules.json: %v", err)
	}
	var doc struct{ Modules []struct{ Key string } }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decoding b: %v", err)
	}
	var out []string
	for _, m := range doc.Modules {
		if m.Key != "" {
			out = append(out, m.Key)
		}
	}
	slices.Sort(out)
	return out
}

// terraform init and tofu init of a configuration with registry modules (a
// //submodule, one calling another registry module, one whose package is a
// git tag served by git http-backend) and a provider, through `serve CACHE
// --upstream origin --modules MODCACHE` with only a host block: cold, each
// package is fetched once, packed and landed in MODCACHE with its sha256
// (and commit); warm, a fresh serve with the origin, the archives and the
// git server all stopped serves both clients from the caches.
func TestModulesV1ThroughAHostBlock(t *testing.T) {
	clients := pullClients(t)
	w := newModuleWorld(t)
	cache, modcache := filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "modules")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", modcache)
	caPEM, _ := os.ReadFile(cert)
	want := []string{"app", "app.net", "git", "sub"}
	first := firstClient(clients)
	work := t.TempDir()
	writeFile(t, work, "main.tf", modConfig)
	out, err := runClient(t, clients[first], caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color")
	if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
		t.Fatalf("%s init cold through the mirror: %v\n%s", first, err, out)
	}
	if got := installedModules(t, work); !slices.Equal(got, want) {
		t.Errorf("%s installed modules %v, want %v", first, got, want)
	}
	if b, err := os.ReadFile(filepath.Join(work, ".terraform", "modules", "sub", "modules", "sub", "main.tf")); err != nil || string(b) != subMain {
		t.Errorf("the //modules/sub module is not the package's submodule: %v %q", err, b)
	}
	for _, m := range []string{"net", "app", "gitmod"} {
		if _, err := os.Stat(filepath.Join(modcache, "127.0.0.1", "acme", m, "aws", "1.0.0.zip")); err != nil {
			t.Errorf("module %s did not land in the module cache: %v", m, err)
		}
	}
	rec, _ := os.ReadFile(filepath.Join(modcache, "127.0.0.1", "acme", "gitmod", "aws", "1.0.0.json"))
	var kept struct{ Revision, ZH string }
	if json.Unmarshal(rec, &kept); len(kept.Revision) != 40 || !strings.HasPrefix(kept.ZH, "zh:") {
		t.Errorf("the git module's record keeps no commit or sha256:\n%s", rec)
	} else if r := run(t, w.env, "ls", modcache, "--module", "127.0.0.1/acme/gitmod/aws"); r.code != 0 ||
		!strings.Contains(r.stdout, kept.Revision[:12]) || !strings.Contains(r.stdout, kept.ZH[3:15]) {
		t.Errorf("ls --module of the module cache does not show the commit %s and sha256 %s: exit %d\n%s%s", kept.Revision, kept.ZH, r.code, r.stdout, r.stderr)
	}
	if n := w.reg.Count("/download"); n != 3 {
		t.Errorf("the module registry answered %d downloads, want 3 (one per package)", n)
	}
	for name, bin := range clients {
		work := t.TempDir()
		writeFile(t, work, "main.tf", modConfig)
		if out, err := runClient(t, bin, caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color"); err != nil {
			t.Errorf("%s init through the warm mirror: %v\n%s", name, err, out)
		}
	}
	if n := w.reg.Count("/download"); n != 3 {
		t.Errorf("warm inits asked the module registry for %d downloads in all, want the 3 of the cold one", n)
	}
	stop()

	w.stopOrigin()
	w.files.Close()
	url, cert, stop = startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", modcache)
	caPEM, _ = os.ReadFile(cert)
	for name, bin := range clients {
		work := t.TempDir()
		writeFile(t, work, "main.tf", modConfig)
		out, err := runClient(t, bin, caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color")
		if err != nil {
			t.Errorf("%s init with the upstream stopped: %v\n%s", name, err, out)
			continue
		}
		if got := installedModules(t, work); !slices.Equal(got, want) {
			t.Errorf("%s installed modules %v with the upstream stopped, want %v", name, got, want)
		}
	}
	stop()
}

// tofu init through the same host block gets its modules from an OCI
// CACHE: serve lands each package as OpenTofu's module artifact and sends
// tofu to it by digest (tofu pulls the blob from the registry itself),
// while terraform, which reads no oci:// source, gets the same zip through
// the mirror; warm, with the upstream stopped, tofu installs from the OCI
// CACHE again.
func TestModulesV1FromAnOCICache(t *testing.T) {
	clients := pullClients(t)
	if clients["tofu"] == "" {
		t.Skip("tofu is not installed: skipping the OCI module CACHE test (terraform reads no oci:// source)")
	}
	w := newModuleWorld(t)
	o := ocitest.New(t)
	a, _ := os.ReadFile(w.ca)
	b, _ := os.ReadFile(o.CAFile())
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(bundle, append(a, b...), 0o644)
	env := append(slices.Clip(w.env), "SSL_CERT_FILE="+bundle, "SSL_CERT_DIR="+filepath.Dir(bundle))
	template := "oci://" + o.Host() + "/modules/${namespace}/${name}-${system}"
	cache := filepath.Join(t.TempDir(), "cache")
	url, cert, stop := startServeWith(t, env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", template)
	mirrorCA, _ := os.ReadFile(cert)
	trust := append(append(slices.Clip(mirrorCA), b...), a...)
	cfg := hostBlock(url, "127.0.0.1") + "oci_default_credentials {\n  discover_ambient_credentials = false\n}\n"
	want := []string{"app", "app.net", "git", "sub"}
	init := func(name, when string) {
		t.Helper()
		work := t.TempDir()
		writeFile(t, work, "main.tf", modConfig)
		out, err := runClient(t, clients[name], trust, cfg, work, "init", "-input=false", "-no-color")
		if err != nil {
			t.Errorf("%s init %s: %v\n%s", name, when, err, out)
			return
		}
		if got := installedModules(t, work); !slices.Equal(got, want) {
			t.Errorf("%s init %s installed modules %v, want %v", name, when, got, want)
		}
	}
	init("tofu", "cold, with an OCI module CACHE")
	blobs := func() int { return o.Count(http.MethodGet, "/blobs/sha256:") }
	if blobs() == 0 {
		t.Errorf("tofu installed the modules without fetching a blob from the OCI CACHE")
	}
	for _, m := range []string{"net-aws", "app-aws", "gitmod-aws"} {
		if o.Count(http.MethodPut, "/modules/acme/"+m+"/manifests/1.0.0") == 0 {
			t.Errorf("no manifest tagged 1.0.0 was pushed to modules/acme/%s", m)
		}
	}
	if clients["terraform"] != "" {
		init("terraform", "with an OCI module CACHE (the zip through the mirror)")
	}
	stop()

	w.stopOrigin()
	w.files.Close()
	url, cert, stop = startServeWith(t, env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", template)
	mirrorCA, _ = os.ReadFile(cert)
	trust = append(append(slices.Clip(mirrorCA), b...), a...)
	cfg = hostBlock(url, "127.0.0.1") + "oci_default_credentials {\n  discover_ambient_credentials = false\n}\n"
	before := blobs()
	init("tofu", "warm, with the upstream stopped")
	if blobs() == before {
		t.Errorf("tofu's warm init fetched no blob from the OCI CACHE")
	}
	stop()
}

// The policy applies to modules: a deny pattern and a module block's
// versions refuse with a 404 whose body and access log line say why, and
// nothing is fetched.
func TestModulesV1PolicyRefusesWithAReason(t *testing.T) {
	w := newModuleWorld(t)
	policy := writeFile(t, t.TempDir(), "policy.hcl", "deny = [\"127.0.0.1/acme/gitmod/*\"]\nmodule \"127.0.0.1/acme/net/aws\" {\n  versions = \"~> 2.0\"\n}\n")
	cache, modcache := filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "modules")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", modcache, "--spec", policy)
	caPEM, _ := os.ReadFile(cert)
	c := pullClient(caPEM)
	for _, r := range []struct{ path, want string }{
		{"v1/modules/127.0.0.1/acme/gitmod/aws/versions", "deny 127.0.0.1/acme/gitmod/*"},
		{"v1/modules/127.0.0.1/acme/gitmod/aws/1.0.0/download", "deny 127.0.0.1/acme/gitmod/*"},
		{"v1/modules/127.0.0.1/acme/net/aws/versions", `allows versions "~> 2.0" of module 127.0.0.1/acme/net/aws, not 1.0.0`},
		{"v1/modules/127.0.0.1/acme/net/aws/1.0.0/download", `allows versions "~> 2.0" of module 127.0.0.1/acme/net/aws, not 1.0.0`},
	} {
		resp, err := c.Get(url + r.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), r.want) {
			t.Errorf("GET %s: %d %q, want a 404 saying %q", r.path, resp.StatusCode, body, r.want)
		}
	}
	if n := w.reg.Count("/download"); n != 0 {
		t.Errorf("the mirror asked the module registry for %d downloads the policy refuses", n)
	}
	if log := stop(); !strings.Contains(log, "(the policy policy.hcl refuses module 127.0.0.1/acme/gitmod/aws") {
		t.Errorf("the access log does not say why:\n%s", log)
	}
}

// The module CACHE may be a bucket: terraform init (or tofu's) through
// the host block lands each package in s3://BUCKET/modules with its
// record (/healthz and /metrics count the fetches), ls --module lists it
// there, and, warm, a fresh serve with the origin, the archives and the
// git server stopped serves both clients from the bucket.
func TestModulesV1FromAnS3Cache(t *testing.T) {
	clients := pullClients(t)
	w := newModuleWorld(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	a, _ := os.ReadFile(w.ca)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(bundle, append(a, srv.CertPEM()...), 0o644)
	env := append(append(slices.Clip(w.env), srv.Env()...), "SSL_CERT_FILE="+bundle, "SSL_CERT_DIR="+filepath.Dir(bundle), "AWS_CA_BUNDLE="+srv.CAFile())
	modcache := "s3://" + bucket + "/modules"
	cache := filepath.Join(t.TempDir(), "cache")
	args := []string{cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", modcache, "--s3-endpoint", srv.URL}
	want := []string{"app", "app.net", "git", "sub"}
	init := func(name, url, cert, when string) {
		t.Helper()
		caPEM, _ := os.ReadFile(cert)
		work := t.TempDir()
		writeFile(t, work, "main.tf", modConfig)
		out, err := runClient(t, clients[name], caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color")
		if err != nil {
			t.Errorf("%s init %s: %v\n%s", name, when, err, out)
			return
		}
		if got := installedModules(t, work); !slices.Equal(got, want) {
			t.Errorf("%s init %s installed modules %v, want %v", name, when, got, want)
		}
	}
	url, cert, stop := startServeWith(t, env, args...)
	init(firstClient(clients), url, cert, "cold, with an S3 module CACHE")
	// /healthz and /metrics count the three module fetches, as they count
	// the provider's.
	// The client has the provider's archive as its stream ends, a moment
	// before the fetch is counted (after waitLanded's flights end, too):
	// poll, within a bound for a loaded machine.
	caPEM, _ := os.ReadFile(cert)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var health struct {
			Fetches       int `json:"fetches"`
			ModuleFetches int `json:"module_fetches"`
			ModuleFailed  int `json:"module_fetch_failures"`
		}
		code, body := getBody(t, caPEM, url, "/healthz")
		err := json.Unmarshal([]byte(body), &health)
		if code == 200 && err == nil && health.ModuleFetches == 3 && health.ModuleFailed == 0 && health.Fetches == 1 {
			break
		}
		if time.Now().After(deadline) || err != nil || health.ModuleFetches != 3 {
			t.Errorf("/healthz after a cold init: %d %s; want 3 module fetches and the provider's 1", code, body)
			break
		}
	}
	if n := metricSum(t, pullClient(caPEM), url, `tfmirror_pull_module_fetches_total{outcome="landed"}`); n != 3 {
		t.Errorf("/metrics counts %v module fetches landed, want 3", n)
	}
	if log := stop(); t.Failed() {
		t.Logf("serve:\n%s", log)
	}
	r := run(t, env, "ls", modcache, "--module", "127.0.0.1/acme/gitmod/aws", "--s3-endpoint", srv.URL)
	if r.code != 0 || !strings.Contains(r.stdout, "s3://"+bucket+"/modules/127.0.0.1/acme/gitmod/aws/1.0.0.zip") {
		t.Errorf("ls --module of the bucket does not list the git module's package: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := w.reg.Count("/download"); n != 3 {
		t.Errorf("the module registry answered %d downloads, want 3 (one per package)", n)
	}

	w.stopOrigin()
	w.files.Close()
	url, cert, stop = startServeWith(t, env, args...)
	for name := range clients {
		init(name, url, cert, "warm from the bucket, with the upstream stopped")
	}
	stop()
}
