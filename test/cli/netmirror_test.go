package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// startServe runs `tfmirror serve` on a free loopback port and returns the
// mirror URL, the generated certificate's file, and stop, which sends
// SIGTERM, checks that serve exits 143 saying what it drained, and returns
// its stderr. Stop runs at the end of the test if the test did not call it.
func startServe(t *testing.T, dir string) (url, cert string, stop func() string) {
	t.Helper()
	return startServeWith(t, nil, dir)
}

// startServeWith is startServe with env added to the environment and args
// (the place, flags) after `serve`.
func startServeWith(t *testing.T, env []string, args ...string) (url, cert string, stop func() string) {
	t.Helper()
	url, cert, stop, _ = startServeCmd(t, env, args...)
	return url, cert, stop
}

// startServeCmd is startServeWith, also returning the process.
func startServeCmd(t *testing.T, env []string, args ...string) (url, cert string, stop func() string, cmd *exec.Cmd) {
	t.Helper()
	cert = filepath.Join(t.TempDir(), "serve-ca.pem")
	cmd = exec.Command(tfmirrorBin, append(append([]string{"serve"}, args...), "--addr", "127.0.0.1:0", "--cert-out", cert)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "Serving "); ok {
				if i := strings.Index(rest, " at https://"); i >= 0 {
					found <- rest[i+len(" at "):]
				}
			}
		}
	}()
	select {
	case url = <-found:
	case <-time.After(time.Minute): // a bound for a loaded machine, not a speed
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve printed no URL; stderr:\n%s", stderr.String())
	}
	stopped := false
	stop = func() string {
		if !stopped && cmd.ProcessState == nil { // the test may have stopped it
			stopped = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 143 || !strings.Contains(stderr.String(), "serve: interrupted: stopped serving; ") {
				t.Errorf("serve after SIGTERM: exit %d, want 143 and a line saying what it drained\nstderr:\n%s", code, stderr.String())
			}
		}
		return stderr.String()
	}
	t.Cleanup(func() { stop() })
	return url, cert, stop, cmd
}

func TestCLIServeLsVerify(t *testing.T) {
	dir := t.TempDir()
	for _, plat := range []string{"linux_amd64", "darwin_arm64"} {
		p := filepath.Join(dir, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_"+plat+".zip")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, registrytest.ProviderZip("alpha", "1.0.0", plat), 0o644)
	}
	url, cert, stop := startServe(t, dir)

	r := run(t, nil, "ls", url, "-p", "example.com/acme/alpha", "--ca-cert", cert, "--json")
	if r.code != 0 {
		t.Fatalf("ls: %d %s", r.code, r.stderr)
	}
	var rows []struct {
		Provider, Version, Platform string
		Hashes                      []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(rows) != 2 || len(rows[0].Hashes) != 2 || !strings.HasPrefix(rows[0].Hashes[0], "h1:") || !strings.HasPrefix(rows[0].Hashes[1], "zh:") {
		t.Fatalf("ls rows: %+v", rows)
	}

	r = run(t, nil, "verify", url, "-p", "example.com/acme/alpha", "--ca-cert", cert, "--json")
	var findings []struct{ Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &findings); err != nil {
		t.Fatalf("decoding r.stdout: %v\n%s", err, r.stdout)
	}
	if r.code != 0 || len(findings) != 2 || findings[0].Status != "ok" || findings[1].Status != "ok" || !strings.Contains(findings[0].Detail, "h1 matches mirror index ("+url) {
		t.Fatalf("verify: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Without a provider: a usage error that says to name them.
	r = run(t, nil, "ls", url, "--ca-cert", cert)
	if r.code != 2 || !strings.Contains(r.stderr, "cannot list its providers") {
		t.Errorf("ls without -p: %d %s", r.code, r.stderr)
	}
	// Without trusting the certificate: a failure naming the mirror.
	r = run(t, []string{"SSL_CERT_FILE=/dev/null", "SSL_CERT_DIR=/nonexistent"}, "ls", url, "-p", "example.com/acme/alpha")
	if r.code != 1 || !strings.Contains(r.stderr, "mirror "+url) || !strings.Contains(r.stderr, "certificate") {
		t.Errorf("ls without --ca-cert: %d %s", r.code, r.stderr)
	}
	if log := stop(); !strings.Contains(log, "GET /example.com/acme/alpha/index.json 200") {
		t.Errorf("serve logged no request line:\n%s", log)
	}
}

func TestCLIServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "serve takes PLACE"},
		{[]string{"serve", dir, "--tls-cert", "c.pem"}, "give both --tls-cert and --tls-key"},
		{[]string{"serve", dir, "--tls-cert", "c.pem", "--tls-key", "k.pem", "--cert-out", "x.pem"}, "--cert-out is where a generated certificate goes"},
		{[]string{"serve", filepath.Join(dir, "missing")}, "no such directory"},
		{[]string{"serve", "ftp://registry.example/x"}, "unknown scheme"},
		{[]string{"serve", dir, "--addr", "nope"}, `--addr "nope": want HOST:PORT with a port`},
		{[]string{"serve", dir, "--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999": want HOST:PORT`},
		{[]string{"serve", dir, "--addr", "127.0.0.1:http"}, `--addr "127.0.0.1:http": want HOST:PORT`},
		{[]string{"serve", dir, "--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "k.pem")}, "--tls-cert " + filepath.Join(dir, "c.pem")},
	} {
		r := run(t, nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := run(t, nil, "serve", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "network_mirror") || !strings.Contains(r.stdout, "SSL_CERT_FILE") {
		t.Errorf("serve --help: %d %s", r.code, r.stdout)
	}
}

func TestCLIRegistry(t *testing.T) {
	srv := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{
		{Version: "1.0.0", Archives: map[string][]byte{
			"linux_amd64":  registrytest.ProviderZip("alpha", "1.0.0", "linux"),
			"darwin_arm64": registrytest.ProviderZip("alpha", "1.0.0", "darwin"),
		}},
		{Version: "1.1.0", Archives: map[string][]byte{"linux_amd64": registrytest.ProviderZip("alpha", "1.1.0", "linux")}},
	}})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, srv.CertPEM(), 0o644)
	reg := "registry://" + srv.Host()

	// Without --version, ls lists the versions (one request), newest first.
	r := run(t, nil, "ls", reg, "-p", "acme/alpha", "--ca-cert", ca)
	if r.code != 0 || !strings.Contains(r.stdout, srv.Host()+"/acme/alpha  1.1.0") || strings.Index(r.stdout, "1.1.0") > strings.Index(r.stdout, "1.0.0") {
		t.Fatalf("ls registry without -v: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if n := srv.Count(registrytest.KindDownload); n != 0 {
		t.Errorf("ls registry without -v fetched %d download documents", n)
	}
	r = run(t, nil, "ls", reg, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca, "--json")
	if r.code != 0 {
		t.Fatalf("ls registry: %d %s", r.code, r.stderr)
	}
	var rows []struct {
		Provider, Platform string
		Hashes             []string
		Size               *int64
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("decoding r.stdout: %v\n%s", err, r.stdout)
	}
	// The registry's packages field states each package's h1: beside the
	// signed zh:.
	want := "zh:" + srv.SHA256("acme", "alpha", "1.0.0", "linux_amd64")
	if len(rows) != 2 || rows[1].Provider != srv.Host()+"/acme/alpha" || rows[1].Size == nil || len(rows[1].Hashes) != 2 || !strings.HasPrefix(rows[1].Hashes[0], "h1:") || rows[1].Hashes[1] != want {
		t.Fatalf("ls registry rows: %s", r.stdout)
	}

	r = run(t, nil, "verify", reg, "-p", "acme/alpha", "-v", "latest", "--ca-cert", ca)
	if r.code != 0 || !strings.Contains(r.stdout, "signed SHA256SUMS (key "+srv.KeyID()+", fingerprint "+srv.Fingerprint()+")") {
		t.Fatalf("verify registry: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	srv.SetFaults(registrytest.Faults{TamperArchive: true})
	r = run(t, nil, "verify", reg, "-p", "acme/alpha", "-v", "latest", "--ca-cert", ca, "--json")
	if r.code != 1 || !strings.Contains(r.stdout, "the archive's sha256 is") {
		t.Fatalf("verify of a tampered archive: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	srv.SetFaults(registrytest.Faults{UnknownKey: true})
	r = run(t, nil, "ls", reg, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca)
	if r.code != 1 || !strings.Contains(r.stderr, "no key offered signed it (keys: "+srv.KeyID()+")") {
		t.Fatalf("ls with an unknown signer: %d %s", r.code, r.stderr)
	}
}

// TestSyncJSONEndsWithSummaryWhenPlanningFails: a sync streams its plan,
// so a listing that fails part of the way comes after packages already
// reported; --json output still ends with the summary, which says the run
// did not happen and why (ok false, error), and the exit code is 1.
func TestSyncJSONEndsWithSummaryWhenPlanningFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, registrytest.ProviderZip("alpha", "1.0.0", "linux_amd64"), 0o644)
	url, cert, _ := startServe(t, dir)
	dst := t.TempDir()
	args := []string{"sync", url, dst, "--ca-cert", cert, "-p", "example.com/acme/alpha"}
	if r := run(t, nil, args...); r.code != 0 {
		t.Fatalf("first sync: %d %s", r.code, r.stderr)
	}
	r := run(t, nil, append(args, "-p", "example.com/acme/zeta", "--json")...)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var first, last map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("decoding lines[0]: %v\n%s", err, lines[0])
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || r.code != 1 {
		t.Fatalf("sync --json: %d %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if first["type"] != "present" || last["type"] != "summary" || last["ok"] != false || last["present"] != float64(1) ||
		!strings.Contains(fmt.Sprint(last["error"]), "example.com/acme/zeta") {
		t.Fatalf("sync --json output:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "example.com/acme/zeta") {
		t.Errorf("stderr does not name the provider: %s", r.stderr)
	}
}

// Interrupted while a download is in flight, serve (plain and pull-through)
// lets it run for --drain, cuts it, says so in a log line, and exits 130
// for SIGINT.
func TestServeInterruptedSaysWhatItCut(t *testing.T) {
	for _, mode := range []struct {
		name string
		args func(place string) []string
	}{
		{"plain", func(place string) []string { return []string{place} }},
		{"pull-through", func(place string) []string { return []string{filepath.Join(t.TempDir(), "cache"), "--upstream", place} }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			srv, ca, started := stallingRegistry(t, ".zip")
			url, cert, _, cmd := startServeCmd(t, nil, append(mode.args("registry://"+srv.Host()), "--ca-cert", ca, "--drain", "100ms")...)
			caPEM, _ := os.ReadFile(cert)
			c := pullClient(caPEM)
			resp, err := c.Get(url + srv.Host() + "/acme/alpha/1.1.0.json")
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Archives map[string]struct{ URL string } `json:"archives"`
			}
			err = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			if err != nil || doc.Archives["linux_amd64"].URL == "" {
				t.Fatalf("the version document: %d %v %+v", resp.StatusCode, err, doc)
			}
			zip := url + srv.Host() + "/acme/alpha/" + doc.Archives["linux_amd64"].URL
			go func() {
				if resp, err := c.Get(zip); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			signalWhenStarted(t, cmd, started, syscall.SIGINT, func() string { return "" })
			stderr := cmd.Stderr.(*strings.Builder).String()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d after SIGINT, want 130:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, "serve: interrupted: stopped serving; 1 of 1 request in flight cut short after a drain of 100ms") {
				t.Errorf("serve does not say what it cut short:\n%s", stderr)
			}
		})
	}
}
