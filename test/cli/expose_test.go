package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// getBody GETs path of the mirror at url and returns the status and body.
func getBody(t *testing.T, caPEM []byte, url, path string) (int, string) {
	t.Helper()
	resp, err := pullClient(caPEM).Get(url + strings.TrimPrefix(path, "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The forged-host attack: a client names an internal host in a path
// (`/localhost%3aPORT/...`, `/127.0.0.1/...`). With `--upstream origin` and
// nothing named, only public hosts are reached: both are refused, and the
// internal registries are asked nothing (not even connected to for the
// literal address). With --allow-host, only the named host is reached.
// No answer names the CACHE path.
func TestPullThroughForgedHostReachesNothing(t *testing.T) {
	w := newPullWorld(t, registrytest.Faults{})
	internal := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha",
		Versions: []registrytest.Version{{Version: "1.0.0", Archives: w.zips}}})
	ca := caFile(t, w.reg.CertPEM(), internal.CertPEM())
	cache := filepath.Join(t.TempDir(), "cache")
	_, port, _ := strings.Cut(internal.Host(), ":")
	forged := []string{"/localhost%3a" + port + "/acme/alpha/index.json", "/127.0.0.1%3a" + port + "/acme/alpha/index.json",
		"/127.0.0.1/acme/alpha/index.json", "/LOCALHOST%3a" + port + "/acme/alpha/1.0.0.json"}

	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--ca-cert", ca)
	caPEM, _ := os.ReadFile(cert)
	for _, path := range forged {
		code, body := getBody(t, caPEM, url, path)
		if code == 200 || !strings.Contains(body, "allow-host") || strings.Contains(body, cache) {
			t.Errorf("%s with nothing named: %d %q", path, code, body)
		}
	}
	if code, body := getBody(t, caPEM, url, "/healthz"); code != 200 || strings.Contains(body, cache) || strings.Contains(body, filepath.Dir(cache)) {
		t.Errorf("/healthz: %d %q", code, body)
	}
	stop()
	if n, m := len(internal.Requests()), len(w.reg.Requests()); n+m != 0 {
		t.Errorf("the internal registries were asked %d and %d times", n, m)
	}

	url, cert, _ = startServeWith(t, w.env, cache, "--upstream", "origin", "--ca-cert", ca, "--allow-host", "127.0.0.1")
	caPEM, _ = os.ReadFile(cert)
	if code, body := getBody(t, caPEM, url, "/127.0.0.1/acme/alpha/index.json"); code != 200 || !strings.Contains(body, "1.0.0") {
		t.Errorf("the named host: %d %q", code, body)
	}
	if code, body := getBody(t, caPEM, url, forged[0]); code != 404 || !strings.Contains(body, "reaches only the registries its operator names") {
		t.Errorf("%s with 127.0.0.1 named: %d %q", forged[0], code, body)
	}
	if n := len(internal.Requests()); n != 0 {
		t.Errorf("the internal registry was asked %d times", n)
	}
}

// A password in --upstream is refused and never printed back.
func TestServeRedactsUpstreamPassword(t *testing.T) {
	cmd := exec.Command(tfmirrorBin, "serve", t.TempDir(), "--upstream", "https://user:S3CRETPASS@mirror.example/", "--addr", "127.0.0.1:0")
	cmd.Env = cleanEnv(t)
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "S3CRETPASS") || !strings.Contains(string(out), "REDACTED@mirror.example") {
		t.Errorf("serve --upstream with a password: %v\n%s", err, out)
	}
}
