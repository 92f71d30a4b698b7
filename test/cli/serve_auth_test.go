package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/serveauth"
)

// serve --auth: terraform init and tofu init with the token in the CLI
// configuration's credentials block install from the mirror; without a
// token, with an unknown one, or with one whose patterns leave the
// provider out, they fail with their own unauthorized message. The access
// log names the token's name, never the token; /healthz needs none.
func TestServeAuthWithRealClients(t *testing.T) {
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host}))
	const good, narrow = "tok-GOOD-0123456789", "tok-NARROW-0123456789"
	tokens := filepath.Join(t.TempDir(), "tokens.hcl")
	os.WriteFile(tokens, []byte(fmt.Sprintf(`token "ci" {
  sha256    = %q
  providers = ["example.com/acme/*"]
}
token "other-team" {
  sha256    = %q
  providers = ["example.com/other/*"]
}
`, serveauth.HashToken(good), serveauth.HashToken(narrow))), 0o644)
	url, cert, stop := startServeWith(t, cleanEnv(t), src, "--auth", tokens)
	caPEM, _ := os.ReadFile(cert)
	mirrorHost := strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/")
	creds := func(tok string) string {
		if tok == "" {
			return networkMirror(url)
		}
		return networkMirror(url) + fmt.Sprintf("\ncredentials %q {\n  token = %q\n}\n", mirrorHost, tok)
	}
	if code, _ := getBody(t, caPEM, url, "/healthz"); code == 401 {
		t.Errorf("/healthz asks for a token")
	}
	for name, bin := range pullClients(t) {
		out, _, err := clientInit(t, bin, caPEM, creds(good), "example.com/acme/alpha", "1.0.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") {
			t.Errorf("%s init with the token: %v\n%s", name, err, out)
		}
		for what, tok := range map[string]string{"no token": "", "an unknown token": "tok-WRONG", "a token for other providers": narrow} {
			out, _, err := clientInit(t, bin, caPEM, creds(tok), "example.com/acme/alpha", "1.0.0")
			if err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "rejected the given authentication credentials") {
				t.Errorf("%s init with %s: %v, want the client's unauthorized message\n%s", name, what, err, out)
			} else {
				t.Logf("%s init with %s:\n%s", name, what, lastLines(out, 6))
			}
		}
	}
	log := stop()
	for _, tok := range []string{good, narrow, "tok-WRONG"} {
		if strings.Contains(log, tok) {
			t.Errorf("the access log holds a token:\n%s", log)
		}
	}
	if !strings.Contains(log, "client=ci") || !strings.Contains(log, "client=other-team") {
		t.Errorf("the access log does not name the tokens:\n%s", log)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// SIGHUP reloads the tokens file without dropping connections: a token
// taken out of it is refused on the connection it was accepted on; a file
// that no longer loads keeps the tokens in use (backends/serveauth tests
// what the log says of it).
func TestServeAuthReloadsOnSIGHUP(t *testing.T) {
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	tokens := filepath.Join(t.TempDir(), "tokens.hcl")
	entry := func(name, tok string) string {
		return fmt.Sprintf("token %q {\n  sha256 = %q\n  providers = [\"*/*/*\"]\n}\n", name, serveauth.HashToken(tok))
	}
	os.WriteFile(tokens, []byte(entry("a", "tok-A")+entry("b", "tok-B")), 0o644)
	url, cert, stop, cmd := startServeCmd(t, cleanEnv(t), src, "--auth", tokens)
	caPEM, _ := os.ReadFile(cert)
	c := pullClient(caPEM)
	var reused []bool
	get := func(tok string) int {
		req, _ := http.NewRequest(http.MethodGet, url+"example.com/acme/alpha/index.json", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("tok-A"); code != 200 {
		t.Fatalf("token A before the reload: %d", code)
	}
	os.WriteFile(tokens, []byte(entry("b", "tok-B")), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
	for get("tok-A") != 401 {
		if time.Now().After(deadline) {
			t.Fatal("token A still accepted a minute after SIGHUP")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := get("tok-B"); code != 200 {
		t.Errorf("token B after the reload: %d", code)
	}
	if !reused[len(reused)-1] {
		t.Errorf("the reload dropped the connection (reused %v)", reused)
	}
	os.WriteFile(tokens, []byte("token {"), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	if code := get("tok-B"); code != 200 {
		t.Errorf("token B after a reload of a broken file: %d", code)
	}
	if log := stop(); !strings.Contains(log, "reloaded 1 tokens") {
		t.Errorf("the log does not say the tokens were reloaded:\n%s", log)
	}
}

// Without --auth, serve on an address beyond loopback says at start that
// anyone who reaches it may use it.
func TestServeWarnsWhenExposedWithoutAuth(t *testing.T) {
	cmd := exec.Command(tfmirrorBin, "serve", t.TempDir(), "--addr", "0.0.0.0:0", "--cert-out", filepath.Join(t.TempDir(), "c.pem"))
	cmd.Env = cleanEnv(t)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "Serving ") {
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go io.Copy(io.Discard, stdout)
	cmd.Wait()
	if !strings.Contains(stderr.String(), "anyone who reaches it may use it") {
		t.Errorf("no warning:\n%s", stderr.String())
	}
}

// config suggest prints, for a network mirror, the credentials block the
// clients need when it asks for a token, commented out (the token is the
// operator's to give), and the TF_TOKEN_ variable where the host has no port.
func TestConfigSuggestPrintsTheCredentialsBlock(t *testing.T) {
	for url, want := range map[string][]string{
		"https://mirror.corp:8443/": {`# credentials "mirror.corp:8443" {`, `#   token = "TOKEN"`},
		"https://Mirror.Corp/tf/":   {`# credentials "mirror.corp" {`, "TF_TOKEN_mirror_corp"},
	} {
		r := run(t, nil, "config", "suggest", url, "-p", "registry.terraform.io/hashicorp/aws")
		for _, w := range want {
			if r.code != 0 || !strings.Contains(r.stdout, w) {
				t.Errorf("config suggest %s: exit %d, no %q in\n%s", url, r.code, w, r.stdout)
			}
		}
	}
}

// A pull-through whose upstream is a mirror asking for a token reads it
// with the CLI configuration's credentials block for the upstream's host,
// and serves terraform init and tofu init.
func TestPullThroughUsesTheCLIConfigurationsCredentials(t *testing.T) {
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host}))
	tokens := filepath.Join(t.TempDir(), "tokens.hcl")
	os.WriteFile(tokens, []byte(fmt.Sprintf("token \"bridge\" {\n  sha256 = %q\n  providers = [\"*/*/*\"]\n}\n", serveauth.HashToken("tok-BRIDGE"))), 0o644)
	upURL, upCert, stopUp := startServeWith(t, cleanEnv(t), src, "--auth", tokens)
	upHost := strings.TrimSuffix(strings.TrimPrefix(upURL, "https://"), "/")
	cfg := filepath.Join(t.TempDir(), "cli.tfrc")
	os.WriteFile(cfg, []byte(fmt.Sprintf("credentials %q {\n  token = \"tok-BRIDGE\"\n}\n", upHost)), 0o644)
	env := append(cleanEnv(t), "TF_CLI_CONFIG_FILE="+cfg)
	url, pemFile, stop := startServeWith(t, env, filepath.Join(t.TempDir(), "cache"), "--upstream", upURL, "--ca-cert", upCert)
	caPEM, _ := os.ReadFile(pemFile)
	for name, bin := range pullClients(t) {
		out, _, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") {
			t.Errorf("%s init through a pull-through of a mirror asking for a token: %v\n%s", name, err, out)
		}
	}
	stop()
	if log := stopUp(); !strings.Contains(log, "client=bridge") || strings.Contains(log, " 401 ") {
		t.Errorf("the upstream's log:\n%s", log)
	}
}
