package pull_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/trust"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/pull"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// clock is a policy's clock, moved by the test.
type clock struct {
	mu  gosync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// body GETs file of the world's provider (or another path when file
// starts with "/") and returns the status and body.
func (w *world) body(t *testing.T, file string) (int, string) {
	t.Helper()
	url := w.url(file)
	if strings.HasPrefix(file, "/") {
		url = w.srv.URL + file
	}
	resp, err := w.srv.Client().Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The policy's versions, platforms, deny patterns and cooldown decide
// what is offered; each refusal is a 404 whose body and log line say why;
// a version is offered once min_age has passed since it was first seen,
// which is recorded in CACHE; /metrics counts the refusals and /healthz
// answers.
func TestPolicyRefusesWithAReason(t *testing.T) {
	zips := map[string][]byte{}
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
	}
	c := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	cache := ""
	w := newWorld(t, registrytest.Faults{}, func(host string) *pull.Policy {
		file := filepath.Join(t.TempDir(), "policy.hcl")
		os.WriteFile(file, []byte(fmt.Sprintf(`platforms = ["linux_amd64"]
min_age   = "3d"
deny      = ["%[1]s/acme/beta"]

provider "%[1]s/acme/alpha" {
  versions = "= 1.0.0"
}
`, host)), 0o644)
		s, err := spec.LoadPolicy(file)
		if err != nil {
			t.Fatal(err)
		}
		cache = t.TempDir()
		return &pull.Policy{Spec: s, Seen: &pull.SeenDir{Dir: cache}, Now: c.Now}
	}, zips, registrytest.Provider{Namespace: "acme", Type: "beta", Versions: []registrytest.Version{{Version: "1.0.0", Archives: zips}}},
		registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{{Version: "1.1.0", Archives: zips}}})
	w.reg.Reset()

	if code, body := w.body(t, "index.json"); code != 404 || !strings.Contains(body, "first seen") || !strings.Contains(body, "72h") {
		t.Errorf("index.json within the cooldown: %d %q", code, body)
	}
	if _, err := os.Stat(filepath.Join(cache, ".tfmirror-pull", "first-seen", w.prov.Hostname, "acme", "alpha.json")); err != nil {
		t.Errorf("the first sighting is not recorded in CACHE: %v", err)
	}
	c.add(73 * time.Hour)
	// The handler reuses a listing for a moment (netmirror.ListingTTL).
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := w.body(t, "index.json")
		if code == 200 && strings.Contains(body, `"1.0.0"`) && !strings.Contains(body, `"1.1.0"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("index.json after the cooldown: %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := w.body(t, "1.1.0.json"); code != 404 || !strings.Contains(body, `allows versions "= 1.0.0"`) {
		t.Errorf("a version the policy's constraint leaves out: %d %q", code, body)
	}
	if code, body := w.body(t, "1.0.0.json"); code != 200 || !strings.Contains(body, "linux_amd64") || strings.Contains(body, "darwin_arm64") {
		t.Errorf("1.0.0.json lists other platforms than the policy's: %d %q", code, body)
	}
	if code, body := w.body(t, "terraform-provider-alpha_1.0.0_darwin_arm64.zip"); code != 404 || !strings.Contains(body, "allows platforms [linux_amd64]") {
		t.Errorf("a zip of a platform the policy leaves out: %d %q", code, body)
	}
	beta := "/" + strings.Replace(w.prov.String(), "alpha", "beta", 1) + "/index.json"
	if code, body := w.body(t, beta); code != 404 || !strings.Contains(body, "deny") {
		t.Errorf("a denied provider: %d %q", code, body)
	}
	// 1.0.0.json started the prefetch of the policy's one platform, and
	// nothing else.
	w.waitIdle(t)
	for _, r := range w.reg.Requests() {
		if r.Kind == registrytest.KindArchive && !strings.HasSuffix(r.Path, "_linux_amd64.zip") {
			t.Errorf("the origin served %s for a refused request", r.Path)
		}
	}
	if code, body := w.body(t, "/metrics"); code != 200 || !strings.Contains(body, "tfmirror_pull_policy_refusals_total 4") {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
	if code, body := w.body(t, "/healthz"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if b, _ := os.ReadFile(w.audit); !strings.Contains(string(b), `"event":"refused"`) || !strings.Contains(string(b), `"platform":"darwin_arm64"`) {
		t.Errorf("the audit log does not record the refused zip:\n%s", b)
	}
	reasons := 0
	for _, line := range strings.Split(strings.TrimSpace(w.logs.String()), "\n") {
		var a struct{ Path, Reason string }
		if json.Unmarshal([]byte(line), &a) == nil && a.Reason != "" {
			reasons++
		}
	}
	if reasons != 4 {
		t.Errorf("%d access log lines give a reason, want 4:\n%s", reasons, w.logs)
	}
}

// With --require-signature, a version the upstream keeps no signature of
// (a directory of zips) is refused: its version document and zips are
// 404s saying why, and nothing is fetched into CACHE.
func TestRequireSignatureRefusesUnsignedVersions(t *testing.T) {
	upDir, cacheDir := t.TempDir(), t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, upDir, seeds)
	up, err := fs.Open(upDir, upDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := fs.Open(cacheDir, cacheDir, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tp := trust.Defaults(func(string) string { return "" })
	tp.RequireSignature = true
	m := pull.New(pull.Options{Cache: cache, UpstreamName: upDir, Trust: tp,
		Upstream: func(context.Context, backends.Provider) (backends.Reader, error) { return up, nil }})
	defer m.Close()
	srv := httptest.NewTLSServer(&pull.Server{Mirror: m, Next: netmirror.NewHandler(m, nil, hashing.Options{})})
	defer srv.Close()
	for _, file := range []string{"1.0.0.json", "terraform-provider-alpha_1.0.0_linux_amd64.zip"} {
		resp, err := srv.Client().Get(srv.URL + "/example.com/acme/alpha/" + file)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.Contains(string(b), "refused") || !strings.Contains(string(b), "signature") {
			t.Errorf("%s of an unsigned version with --require-signature: %d %q", file, resp.StatusCode, b)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(cacheDir, "example.com")); len(left) != 0 {
		t.Errorf("CACHE holds %v", left)
	}
}
