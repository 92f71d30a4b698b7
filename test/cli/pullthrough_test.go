package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// pullAddr is the provider the pull-through tests install: on the origin
// registry at 127.0.0.1:443 (network mirrors need a hostname without a
// port, and `--upstream origin` finds the registry by service discovery
// on that hostname).
const pullAddr = "127.0.0.1/acme/alpha"

// pullWorld is an origin registry serving pullAddr 1.0.0 signed for this
// machine's platform and another, and what trusts it.
type pullWorld struct {
	reg   *registrytest.Server
	zips  map[string][]byte // by platform
	plats []string          // this machine's first
	env   []string          // tfmirror's: trusts the registry
	ca    string
}

// newPullWorld is the registry at 127.0.0.1:443 serving pullAddr 1.0.0
// for this machine's platform and another. It waits until the port is free
// (another test's registry may hold it for a while).
func newPullWorld(t *testing.T, faults registrytest.Faults) *pullWorld {
	t.Helper()
	host := runtime.GOOS + "_" + runtime.GOARCH
	other := "darwin_arm64"
	if host == other {
		other = "linux_amd64"
	}
	zips := map[string][]byte{}
	for _, plat := range []string{host, other} {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, pullAddr, "1.0.0", plat), "pull")
	}
	w := newPullWorldWith(t, faults, zips)
	w.plats = []string{host, other}
	return w
}

// newPullWorldWith is the registry at 127.0.0.1:443 serving zips (by
// platform) as pullAddr 1.0.0.
func newPullWorldWith(t *testing.T, faults registrytest.Faults, zips map[string][]byte) *pullWorld {
	t.Helper()
	w := &pullWorld{zips: zips}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		l, err := net.Listen("tcp", "127.0.0.1:443")
		if err == nil {
			l.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Skipf("127.0.0.1:443 stayed busy (%v): the pull-through tests need it for a provider hostname without a port", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.reg = registrytest.NewWithOptions(t, registrytest.Options{Addr: "127.0.0.1:443", Faults: faults}, registrytest.Provider{
		Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{{Version: "1.0.0", Archives: w.zips}}})
	w.ca = caFile(t, w.reg.CertPEM())
	w.env = append(cleanEnv(t), "SSL_CERT_FILE="+w.ca, "SSL_CERT_DIR="+filepath.Dir(w.ca))
	return w
}

// stopOrigin makes the registry's servers drop every connection, as a
// registry that is down does.
func (w *pullWorld) stopOrigin() {
	w.reg.Wrap(func(http.Handler) http.Handler {
		return http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	})
}

// cacheZips lists the zips in a directory CACHE, relative to it.
func cacheZips(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".zip") {
			rel, _ := filepath.Rel(cache, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// runClient runs a client in dir with the CLI configuration given,
// trusting only caPEM; it returns the output and how it exited.
func runClient(t *testing.T, bin string, caPEM []byte, cliConfig, dir string, args ...string) (string, error) {
	t.Helper()
	home := filepath.Join(dir, ".home")
	os.MkdirAll(home, 0o755)
	ca := filepath.Join(home, "ca.pem")
	cfg := filepath.Join(home, "cli.tfrc")
	os.WriteFile(ca, caPEM, 0o644)
	os.WriteFile(cfg, []byte(cliConfig), 0o644)
	cmd := exec.Command(bin, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+ca, "SSL_CERT_DIR="+home, "HOME="+home, "TF_CLI_CONFIG_FILE="+cfg,
		"TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// pullClients are the real clients there are: terraform and tofu, each
// skipped (in a subtest saying so) where it is not installed.
func pullClients(t *testing.T) map[string]string {
	t.Helper()
	clients := map[string]string{}
	t.Run("find terraform", func(t *testing.T) {
		clients["terraform"] = backendtest.Terraform(t, "terraform through a pull-through mirror")
	})
	t.Run("find tofu", func(t *testing.T) { clients["tofu"] = backendtest.Tofu(t, "tofu through a pull-through mirror") })
	for name, bin := range clients {
		if bin == "" {
			delete(clients, name)
		}
	}
	if len(clients) == 0 {
		t.Skip("neither terraform nor tofu is installed: skipping the pull-through tests with real clients")
	}
	return clients
}

// waitLanded waits until the mirror at url runs no fetch (/healthz): a
// client has its archive once the upstream's stream ends, a moment before
// CACHE's index and provenance are written.
func waitLanded(t *testing.T, url string, caPEM []byte) {
	t.Helper()
	c := pullClient(caPEM)
	deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
	for {
		var h struct{ Fetching int }
		resp, err := c.Get(url + "healthz")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
		}
		if err == nil && h.Fetching == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirror at %s still fetches after a minute (%v)", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pullConfig is a configuration requiring pullAddr 1.0.0.
func pullConfig(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "main.tf", fmt.Sprintf("terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= 1.0.0\" }\n  }\n}\n", pullAddr))
	return dir
}

// terraform init and tofu init through `serve CACHE --upstream origin`:
// from cold, exactly the archive installed lands in CACHE, with the
// version's provenance, fetched from the origin once; the version
// document lists the signed zh: of every platform, and tofu with
// trust_all_hashes locks the installed one's; `providers lock` for another platform through the mirror
// fetches only that platform's archive; and a fresh serve of the same
// CACHE with the origin down serves both clients what CACHE holds.
func TestPullThroughColdThenWarmWithTheOriginDown(t *testing.T) {
	clients := pullClients(t)
	w := newPullWorld(t, registrytest.Faults{})
	cache := filepath.Join(t.TempDir(), "cache")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--listing-ttl", "1ms")
	caPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	host, other := w.plats[0], w.plats[1]
	hostZip := fmt.Sprintf("127.0.0.1/acme/alpha/terraform-provider-alpha_1.0.0_%s.zip", host)
	sums := func(plat string) hashing.Sums {
		f := filepath.Join(t.TempDir(), "a.zip")
		os.WriteFile(f, w.zips[plat], 0o644)
		s, err := hashing.HashPath(f, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hostSums, otherSums := sums(host), sums(other)

	first := "terraform"
	if clients[first] == "" {
		first = "tofu"
	}
	out, err := runClient(t, clients[first], caPEM, networkMirror(url), pullConfig(t), "init", "-input=false", "-no-color")
	if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
		t.Fatalf("%s init through the pull-through mirror: %v\n%s", first, err, out)
	}
	waitLanded(t, url, caPEM)
	if got := cacheZips(t, cache); !slices.Equal(got, []string{hostZip}) {
		t.Errorf("CACHE holds %v after the first init, want exactly %s", got, hostZip)
	}
	if _, err := os.Stat(filepath.Join(cache, "127.0.0.1", "acme", "alpha", ".tfmirror-provenance", "1.0.0.json")); err != nil {
		t.Errorf("the version's provenance did not land with its archive: %v", err)
	}
	if n := w.reg.Count(registrytest.KindArchive); n != 1 {
		t.Errorf("the origin served %d archives, want 1", n)
	}

	if clients["tofu"] != "" {
		tofuAllHashes(t, clients["tofu"], caPEM, url, w, hostSums)
	}
	// The version document lists the signed zh: of every platform, the
	// one not fetched yet too.
	zhs := versionDocZH(t, url, caPEM)
	for plat, s := range map[string]hashing.Sums{host: hostSums, other: otherSums} {
		if !slices.Equal(zhs[plat], []string{string(s.ZH)}) {
			t.Errorf("VERSION.json lists %v for %s, want the signed %s", zhs[plat], plat, s.ZH)
		}
	}

	// Another platform: `providers lock` downloads its package through
	// the mirror, which fetches that one archive and no other.
	out, err = runClient(t, clients[first], caPEM, networkMirror(url), pullConfig(t), "providers", "lock", "-net-mirror="+url, "-platform="+other)
	if err != nil {
		t.Fatalf("providers lock -platform=%s through the mirror: %v\n%s", other, err, out)
	}
	waitLanded(t, url, caPEM)
	otherZip := fmt.Sprintf("127.0.0.1/acme/alpha/terraform-provider-alpha_1.0.0_%s.zip", other)
	if got, want := cacheZips(t, cache), []string{hostZip, otherZip}; !slices.Equal(got, sortedCopy(want)) {
		t.Errorf("CACHE holds %v after the lock for %s, want %v", got, other, sortedCopy(want))
	}
	if n := w.reg.Count(registrytest.KindArchive); n != 2 {
		t.Errorf("the origin served %d archives, want 2 (one per platform)", n)
	}
	stop()

	// Warm, with the origin down: a fresh process serves CACHE.
	w.stopOrigin()
	url, cert, stop = startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1")
	caPEM, _ = os.ReadFile(cert)
	for name, bin := range clients {
		out, err := runClient(t, bin, caPEM, networkMirror(url), pullConfig(t), "init", "-input=false", "-no-color")
		if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
			t.Errorf("%s init with the origin down: %v\n%s", name, err, out)
		}
	}
	if log := stop(); !strings.Contains(log, "listing what the cache holds") {
		t.Errorf("serve's log does not say it served the cache alone while the origin was down:\n%s", log)
	}

	// Sealed: --offline asks the origin nothing, and explains its 404s.
	asked := len(w.reg.Requests())
	url, cert, stop = startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--offline")
	caPEM, _ = os.ReadFile(cert)
	out, err = runClient(t, clients[first], caPEM, networkMirror(url), pullConfig(t), "init", "-input=false", "-no-color")
	if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
		t.Errorf("%s init from the sealed mirror: %v\n%s", first, err, out)
	}
	resp, err := pullClient(caPEM).Get(url + "127.0.0.1/acme/beta/index.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "offline") {
		t.Errorf("a provider the sealed mirror lacks: %d %q", resp.StatusCode, body)
	}
	stop()
	if n := len(w.reg.Requests()); n != asked {
		t.Errorf("the sealed mirror asked the origin %d times", n-asked)
	}
}

// serve's pull-through flags refuse what they cannot do, exit 2, naming
// the flag or the file and line.
func TestPullThroughUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.hcl", "destinations = [\"./x\"]\nmin_age = \"soon\"\n")
	aged := writeFile(t, dir, "aged.hcl", "min_age = \"7d\"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", dir, "--spec", aged}, "--spec is a pull-through policy"},
		{[]string{"serve", dir, "--audit", filepath.Join(dir, "a.jsonl")}, "give --upstream"},
		{[]string{"serve", dir, "--log-format", "xml"}, `--log-format "xml"`},
		{[]string{"serve", dir, "--upstream", "origin", "--allow-host", "127.0.0.1", "--spec", bad}, "bad.hcl:2"},
		{[]string{"serve", dir, "--upstream", "origin", "--allow-host", "127.0.0.1", "--spec", bad}, "no destinations"},
		{[]string{"serve", "https://mirror.example/", "--upstream", "origin", "--allow-host", "127.0.0.1"}, "cannot be written to"},
	} {
		r := run(t, cleanEnv(t), c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 saying %q\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
}

// A zip the origin serves that does not match its signed SHA256SUMS is
// refused: both clients fail, nothing of it lands in CACHE, and the log
// and the audit log say why.
func TestPullThroughRefusesATamperedZip(t *testing.T) {
	clients := pullClients(t)
	w := newPullWorld(t, registrytest.Faults{TamperArchive: true, NoPackages: true})
	cache := filepath.Join(t.TempDir(), "cache")
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--audit", auditFile)
	caPEM, _ := os.ReadFile(cert)
	for name, bin := range clients {
		out, err := runClient(t, bin, caPEM, networkMirror(url), pullConfig(t), "init", "-input=false", "-no-color")
		if err == nil || strings.Contains(out, "Installed 127.0.0.1/acme/alpha") {
			t.Errorf("%s init of a tampered zip through the mirror succeeded:\n%s", name, out)
		}
	}
	waitLanded(t, url, caPEM)
	if got := cacheZips(t, cache); len(got) != 0 {
		t.Errorf("CACHE holds %v: a tampered zip landed", got)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "127.0.0.1", "acme", "alpha", ".*"))
	for _, e := range entries {
		if !strings.HasSuffix(e, ".tfmirror-lock") {
			t.Errorf("left in CACHE: %s", e)
		}
	}
	log := stop()
	if !strings.Contains(log, "signed SHA256SUMS says") || !strings.Contains(log, "not landed") {
		t.Errorf("serve's log does not say why the zip was refused:\n%s", log)
	}
	if b, _ := os.ReadFile(auditFile); !strings.Contains(string(b), `"event":"refused"`) {
		t.Errorf("the audit log records no refusal:\n%s", b)
	}
}

// tofuAllHashes has tofu, with trust_all_hashes, install through the
// mirror holding the host's archive: it locks the h1: it computes and the
// signed zh: the mirror lists for that platform (tofu 1.12 records the
// installed platform's hashes only, from any source), and the mirror asks
// the origin for no archive.
func tofuAllHashes(t *testing.T, tofu string, caPEM []byte, url string, w *pullWorld, hostSums hashing.Sums) {
	t.Helper()
	tofuCfg := fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n    trust_all_hashes = true\n  }\n}\n", url)
	work := pullConfig(t)
	out, err := runClient(t, tofu, caPEM, tofuCfg, work, "init", "-input=false", "-no-color")
	if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
		t.Fatalf("tofu init through the pull-through mirror: %v\n%s", err, out)
	}
	locked := lockHashes(t, filepath.Join(work, ".terraform.lock.hcl"))
	for _, h := range []hashing.Hash{hostSums.H1, hostSums.ZH} {
		if !slices.Contains(locked, string(h)) {
			t.Errorf("tofu with trust_all_hashes did not lock %s; it locked %v", h, locked)
		}
	}
	if n := w.reg.Count(registrytest.KindArchive); n != 1 {
		t.Errorf("tofu's install of a cached archive went to the origin: %d archives served, want 1", n)
	}
}

// versionDocZH reads the mirror's VERSION.json for pullAddr 1.0.0 and
// returns the zh: it lists for each platform.
func versionDocZH(t *testing.T, url string, caPEM []byte) map[string][]string {
	t.Helper()
	resp, err := pullClient(caPEM).Get(url + pullAddr + "/1.0.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Archives map[string]struct{ Hashes []string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", resp.Request.URL, err)
	}
	out := map[string][]string{}
	for plat, a := range doc.Archives {
		for _, h := range a.Hashes {
			if strings.HasPrefix(h, "zh:") {
				out[plat] = append(out[plat], h)
			}
		}
	}
	return out
}
