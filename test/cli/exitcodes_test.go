package cli

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// Exit codes as users and scripts see them: 0 success, 1 a problem found,
// 2 usage; never success when nothing happened.
func TestCLIExitCodes(t *testing.T) {
	srv := testRegistry(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, srv.CertPEM(), 0o644)
	reg := "registry://" + srv.Host()
	mirror, _ := fsMirror(t)
	zips := t.TempDir()
	emptyLock := filepath.Join(t.TempDir(), ".terraform.lock.hcl")
	os.WriteFile(emptyLock, []byte("# This file is maintained automatically by \"terraform init\".\n"), 0o644)
	os.WriteFile(filepath.Join(zips, "terraform-provider-alpha_1.0.0_linux_amd64.zip"), registrytest.ProviderZip("alpha", "1.0.0", "linux"), 0o644)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // fragments of stdout+stderr
	}{
		{"no version matches", []string{"sync", reg, t.TempDir(), "-p", "acme/alpha", "-v", "9.9.9", "--ca-cert", ca}, 1,
			[]string{"no version of " + srv.Host() + "/acme/alpha", `matches "9.9.9"`, "available: 1.1.0, 1.0.0"}},
		{"diff: no version matches", []string{"diff", reg, t.TempDir(), "-p", "acme/alpha", "-v", ">= 3.0", "--ca-cert", ca}, 1,
			[]string{"available: 1.1.0, 1.0.0"}},
		{"no provider matches", []string{"ls", mirror, "-p", "acme/nothing"}, 1, []string{"no provider in", "it holds", "example.com/acme/alpha"}},
		{"verify: not a mirror", []string{"verify", zips}, 1, []string{"holds no providers", "terraform-provider-alpha_1.0.0_linux_amd64.zip: a release zip outside HOST/NAMESPACE/TYPE/", "tfmirror push"}},
		// A listing with no selection that finds nothing is an answer (the
		// clients read an empty mirror or lock file as nothing, without
		// error); a selection that matches nothing is a problem.
		{"ls: not a mirror", []string{"ls", zips}, 0, []string{"holds no providers: nothing to list", "a release zip outside HOST/NAMESPACE/TYPE/"}},
		{"ls: empty mirror", []string{"ls", t.TempDir()}, 0, []string{"note:", "holds no providers: nothing to list"}},
		{"ls --json: empty mirror", []string{"ls", t.TempDir(), "--json"}, 0, []string{"[]", "nothing to list"}},
		{"ls --lock: empty lock file", []string{"ls", mirror, "--lock", emptyLock}, 0, []string{"the lock file locks no provider: nothing to list"}},
		{"ls -v: empty mirror", []string{"ls", t.TempDir(), "-v", "1.0.0"}, 1, []string{"holds no providers"}},
		{"sync: not a mirror", []string{"sync", zips, t.TempDir()}, 1, []string{"holds no providers"}},
		{"NAMESPACE/TYPE on a network mirror", []string{"ls", "https://127.0.0.1:1/m/", "-p", "acme/alpha"}, 2, []string{"write the full address, HOSTNAME/acme/alpha"}},
		{"one slash", []string{"ls", "registry:/" + srv.Host(), "-p", "acme/alpha"}, 2, []string{"did you mean registry://" + srv.Host()}},
		{"https one slash", []string{"ls", "https:/mirror.example/", "-p", "example.com/acme/alpha"}, 2, []string{"did you mean https://mirror.example/"}},
		{"--jobs beyond reason", []string{"sync", mirror, t.TempDir(), "--jobs", "100000000"}, 2, []string{`invalid argument "100000000" for "--jobs"`, "from 1 to 1024"}},
		{"--jobs 0", []string{"export", mirror, filepath.Join(t.TempDir(), "b.tar"), "--jobs", "0"}, 2, []string{`"--jobs"`, "from 1 to 1024"}},
		{"--jobs negative", []string{"push", zips, "oci://127.0.0.1:1/${namespace}/${type}", "--jobs", "-1"}, 2, []string{`"--jobs"`, "from 1 to 1024"}},
		{"version", []string{"version"}, 0, []string{"tfmirror ", "go1."}},
		{"--version", []string{"--version"}, 0, []string{"tfmirror ", "go1."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, nil, tc.args...)
			out := r.stdout + r.stderr
			if r.code != tc.code {
				t.Fatalf("%v: exit %d, want %d\n%s", tc.args, r.code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
				}
			}
		})
	}
}

// ls over several places: one that fails does not hide the others, and
// makes the exit status 1 (it was 0 even when all failed).
func TestCLILsSeveralPlaces(t *testing.T) {
	mirror, _ := fsMirror(t)
	missing := filepath.Join(t.TempDir(), "gone")
	cfg := filepath.Join(t.TempDir(), "cli.tfrc")
	os.WriteFile(cfg, []byte(`provider_installation {
  filesystem_mirror {
    path = "`+missing+`"
  }
  filesystem_mirror {
    path = "`+mirror+`"
  }
}
`), 0o644)
	r := run(t, []string{"TF_CLI_CONFIG_FILE=" + cfg}, "ls")
	if r.code != 1 || !strings.Contains(r.stderr, missing) || !strings.Contains(r.stdout, "example.com/acme/alpha") {
		t.Fatalf("ls of a missing and a good mirror: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A signal ends a sync cleanly: the exit code says which signal (130, 143),
// the last line says what was done, and nothing half-written is left.
func TestCLISignalsEndRunsCleanly(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			// Archives stall until the test ends: the signal lands mid-download.
			srv, ca, started := stallingRegistry(t, ".zip")
			dst := t.TempDir()
			cmd := exec.Command(tfmirrorBin, "sync", "registry://"+srv.Host(), dst, "-p", "acme/alpha", "-v", "1.1.0", "--ca-cert", ca, "--jobs", "1")
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			signalWhenStarted(t, cmd, started, tc.sig, func() string { return out.String() })
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Errorf("exit %d after %s, want %d:\n%s", code, tc.sig, tc.code, out.String())
			}
			if !strings.Contains(out.String(), "interrupted: 0 synced") || strings.Contains(out.String(), "context canceled") {
				t.Errorf("the run does not say it was interrupted, or blames a context:\n%s", out.String())
			}
			if holdsZip(t, dst) {
				t.Errorf("an archive landed in %s", dst)
			}
			filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
				if err == nil && p != dst && strings.HasPrefix(d.Name(), ".") {
					t.Errorf("left behind: %s", p)
				}
				return nil
			})
		})
	}
}

// stallingRegistry is the test registry, whose requests for paths ending
// in suffix stall until the test ends; started receives one value per
// such request.
func stallingRegistry(t *testing.T, suffix string) (srv *registrytest.Server, ca string, started <-chan struct{}) {
	t.Helper()
	srv = testRegistry(t)
	ca = filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, srv.CertPEM(), 0o644)
	begun := make(chan struct{}, 16)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, suffix) {
				begun <- struct{}{}
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	return srv, ca, begun
}

// signalWhenStarted sends sig to the started cmd once a stalled request
// has begun, and waits for it to end (a minute at most for each: a bound
// for a loaded machine); output says what it printed, for the failures.
func signalWhenStarted(t *testing.T, cmd *exec.Cmd, started <-chan struct{}, sig syscall.Signal, output func() string) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the stalled request was never made:\n%s", output())
	}
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%s did not end after %s:\n%s", cmd.Args[1], sig, output())
	}
}
