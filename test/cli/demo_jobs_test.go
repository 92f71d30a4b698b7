package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// TestCLIDemoThreeJobs drives `tfmirror demo` through the three jobs with
// the keys README's "Try it" gives, and nothing else: curate (a missing
// package copied into the secondary mirror), push the demo's signed release
// to its OCI registry over HTTPS, and the lock-file gaps (demo --lock).
// Then `demo --serve` serves the kept world again, as the printed recipes
// say, and OpenTofu installs what the UI pushed from that OCI registry; an
// interrupt ends the serving with exit 130.
func TestCLIDemoThreeJobs(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	s := newTmux(t, 120, 40, []string{"NO_COLOR=1"}, "demo", "--keep", keep, "--rate", "0")
	s.waitLoaded("acme/cloud", "acme/widget", "compare 1 ↔ 3 ↔ 4 ↔ 5")
	// The cursor stays on the first row, cloud, also when the release's
	// listing (widget) comes in first.
	s.waitFor("registry.terraform.io/acme/cloud", "◇◇○○")

	// 1. Curate.
	s.keys("Enter", "Right", "Space", "Enter")
	s.waitFor("to which mirror?", "▸ [3] "+filepath.Join(keep, "secondary"))
	s.keys("Enter")
	s.waitFor("Confirm", "1 to copy: 1 from [1] https://127.0.0.1:")
	s.keys("Enter")
	s.waitFor("1 done", "zh ✓ mirror index")

	// 2. Push the release to the OCI registry.
	s.keys("BTab", "G", "Enter")
	s.waitLoaded("registry.terraform.io/acme/widget", "linux_amd64")
	s.keys("r", "Enter")
	s.waitFor("to which mirror?", "[5] oci://127.0.0.1:")
	s.keys("Down", "Down", "Enter")
	s.waitFor("Confirm", "3 to copy: 3 from [4] "+filepath.Join(keep, "release"))
	s.keys("Enter")
	scr := s.waitFor("4 done")
	if strings.Count(scr, "zh ✓ signed SHA256SUMS") != 3 {
		t.Errorf("the pushed zips are not all checked against the signed SHA256SUMS:\n%s", scr)
	}
	// The jobs pane's Details name the signer and say how OpenTofu
	// installs it, as push does: tab, G to the last job; tab, G scrolls
	// Details to their end.
	s.keys("Tab", "G")
	s.waitFor("signed by key", "Add to the OpenTofu CLI") // once the index is written
	s.keys("Tab", "G")
	s.waitFor("provider_installation {", "oci_mirror {", "include")
	s.keys("q")
	s.waitGone()

	// 3. The lock-file gaps.
	l := newTmux(t, 120, 40, []string{"NO_COLOR=1"}, "demo", "--lock", "--rate", "0")
	l.waitLoaded("acme/cloud", "acme/queue", "missing")
	l.keys("L")
	l.waitFor("from which source?", "▸ [1] https://127.0.0.1:")
	l.keys("Enter")
	l.waitFor("Confirm")
	l.keys("f", "Enter")
	l.waitFor("6 done", "acme/dns              3.2.0 ok")
	// C: the demo's lock holds the h1: and zh: of both its platforms.
	l.keys("C")
	l.waitFor("nothing to add: every lock file holds the h1: and zh:")
	l.keys("q")
	l.waitGone()

	// What the UI pushed, installed by OpenTofu from the kept world's
	// registry, served again as the recipes say.
	srv := startDemoServe(t, keep)
	tofu := backendtest.Tofu(t, "tofu init from the OCI registry the demo pushed into")
	dir := t.TempDir()
	cfg := writeFile(t, dir, "cli.tfrc", fmt.Sprintf("provider_installation {\n  oci_mirror {\n    repository_template = %q\n    include = [\"registry.terraform.io/acme/widget\"]\n  }\n}\n"+
		"oci_default_credentials {\n  discover_ambient_credentials = false\n}\n", strings.TrimPrefix(srv.oci, "oci://")))
	work := t.TempDir()
	writeFile(t, work, "main.tf", "terraform {\n  required_providers {\n    widget = { source = \"registry.terraform.io/acme/widget\", version = \"1.0.0\" }\n  }\n}\n")
	cmd := exec.Command(tofu, "-chdir="+work, "init", "-input=false", "-no-color")
	cmd.Env = append(cleanEnv(t), "TF_CLI_CONFIG_FILE="+cfg, "SSL_CERT_FILE="+filepath.Join(keep, "server.pem"), "SSL_CERT_DIR="+dir, "TF_PLUGIN_CACHE_DIR=", "TF_IN_AUTOMATION=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Installed registry.terraform.io/acme/widget v1.0.0") {
		t.Errorf("tofu init from the demo's OCI registry: %v\n%s", err, out)
	}
	if code := srv.interrupt(t); code != 130 {
		t.Errorf("demo --serve interrupted: exit %d, want 130", code)
	}
}

// demoServe is a running `tfmirror demo --serve DIR`.
type demoServe struct {
	cmd *exec.Cmd
	oci string // its OCI registry, as a place
}

// startDemoServe serves a kept demo world and reads the registry's place
// from what it prints.
func startDemoServe(t *testing.T, keep string) *demoServe {
	t.Helper()
	cmd := exec.Command(tfmirrorBin, "demo", "--serve", keep)
	cmd.Env = cleanEnv(t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`OCI registry\s+(oci://\S+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case oci, ok := <-found:
		if !ok {
			t.Fatal("demo --serve ended without naming its OCI registry")
		}
		return &demoServe{cmd: cmd, oci: oci}
	case <-time.After(time.Minute):
		t.Fatal("demo --serve named no OCI registry within a minute")
	}
	return nil
}

// interrupt sends SIGINT and returns the exit code.
func (d *demoServe) interrupt(t *testing.T) int {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-ctx.Done():
		t.Fatal("demo --serve did not stop within a minute of SIGINT")
	}
	return -1
}
