package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCLIUIUsageErrors(t *testing.T) {
	dir, _ := fsMirror(t)
	empty := t.TempDir()
	// No CLI configuration: HOME and the config variables point nowhere.
	noConfig := []string{"HOME=" + empty, "TF_CLI_CONFIG_FILE=", "TERRAFORM_CONFIG=", "TOFU_CLI_CONFIG_FILE="}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing directory", []string{"ui", filepath.Join(empty, "nope")}, []string{"no such directory"}},
		{"missing directory, default command", []string{filepath.Join(empty, "nope")}, []string{"no such directory"}},
		{"a typo of a command", []string{"lss"}, []string{`typo of the command "ls"`}},
		{"bad scheme", []string{"ui", "ftp://x/"}, []string{"unknown scheme"}},
		{"a registry without --version", []string{"ui", "registry://registry.example.com", "-p", "acme/x"}, []string{"needs --version"}},
		{"bad provider flag", []string{"ui", dir, "-p", "not a provider"}, []string{"--provider"}},
		{"bad version flag", []string{"ui", dir, "-v", "~> banana"}, []string{"--version"}},
		{"no terminal", []string{"ui", dir}, []string{"needs a terminal"}},
		{"nothing to open", nil, []string{"no mirror given", "provider_installation", "tfmirror demo"}},
		{"demo without a terminal", []string{"demo"}, []string{"needs a terminal", "--no-ui"}},
		{"demo --no-ui without --keep", []string{"demo", "--no-ui"}, []string{"--keep DIR"}},
		{"demo --keep into a full directory", []string{"demo", "--keep", dir, "--no-ui"}, []string{"not empty"}},
		{"demo with arguments", []string{"demo", "x"}, []string{"demo takes no arguments"}},
		{"--spec with a place", []string{"ui", "--spec", filepath.Join(empty, "m.hcl"), dir}, []string{"--spec takes no places"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, noConfig, tc.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr %q", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestCLIDemoBuildsAWorld(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	r := run(t, nil, "demo", "--keep", keep, "--no-ui")
	if r.code != 0 {
		t.Fatalf("demo --no-ui: exit %d: %s", r.code, r.stderr)
	}
	dirs := strings.Fields(r.stdout)
	if len(dirs) != 2 {
		t.Fatalf("demo --no-ui printed %q, want the two mirror directories", r.stdout)
	}
	// The world is a pair of mirrors the other commands read: they differ.
	d := run(t, nil, "diff", dirs[0], dirs[1])
	if d.code != 1 || !strings.Contains(d.stdout, "conflict") || !strings.Contains(d.stdout, "missing") {
		t.Errorf("diff of the demo mirrors: exit %d\n%s", d.code, d.stdout)
	}
	v := run(t, nil, "verify", dirs[0])
	if v.code != 0 {
		t.Errorf("verify of the demo's primary: exit %d\n%s", v.code, v.stdout)
	}
}

// tmuxSession runs the real binary in a real terminal: a private tmux
// server (its own socket), so keys arrive as a user's would.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, w, h int, env []string, args ...string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal test needs it (apt-get install tmux)")
	}
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	shell := strings.Join(append([]string{"exec", tfmirrorBin}, args...), " ")
	cmd := []string{"new-session", "-d", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)}
	for _, e := range env {
		cmd = append(cmd, "-e", e)
	}
	s.tmux(append(cmd, shell)...)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) keys(keys ...string) { s.tmux(append([]string{"send-keys"}, keys...)...) }

// screen is the terminal's content; with escapes, the SGR sequences too.
func (s *tmuxSession) screen(escapes bool) string {
	args := []string{"capture-pane", "-p"}
	if escapes {
		args = append(args, "-e")
	}
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		return "" // the program (and the session) ended
	}
	return string(out)
}

// waitFor waits until the screen shows every string of what, and returns
// it.
func (s *tmuxSession) waitFor(what ...string) string {
	s.t.Helper()
	return s.waitUntil(fmt.Sprintf("%q", what), func(scr string) bool {
		for _, w := range what {
			if !strings.Contains(scr, w) {
				return false
			}
		}
		return true
	})
}

// waitLoaded waits until the screen shows every string of what and every
// listing is in: no pane says "listing" (the UI says so while a place is
// still being listed, and a key pressed then acts on half the picture: a
// queue dialog would propose a source other than the one still listing).
func (s *tmuxSession) waitLoaded(what ...string) string {
	s.t.Helper()
	return s.waitUntil(fmt.Sprintf("%q, every listing in", what), func(scr string) bool {
		for _, w := range what {
			if !strings.Contains(scr, w) {
				return false
			}
		}
		return !strings.Contains(scr, "listing")
	})
}

// waitUntil polls the screen until ok holds; the minute is a bound for a
// loaded machine, not a speed.
func (s *tmuxSession) waitUntil(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		scr := s.screen(false)
		if ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("waiting for %s; screen:\n%s", what, scr)
		}
		time.Sleep(50 * time.Millisecond) // a poll interval: the wait ends on the condition
	}
}

func (s *tmuxSession) waitGone() {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for exec.Command("tmux", "-S", s.socket, "has-session").Run() == nil {
		if time.Now().After(deadline) {
			s.t.Fatalf("the program did not exit; screen:\n%s", s.screen(false))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCLIDemoInATerminal drives `tfmirror demo` as a user would: the world
// with its network mirror, a job copied from it over HTTPS, verified, and a
// clean exit that removes the temp world.
func TestCLIDemoInATerminal(t *testing.T) {
	tmp := t.TempDir()
	s := newTmux(t, 120, 36, []string{"TMPDIR=" + tmp, "NO_COLOR=1"}, "demo", "--rate", "0")
	s.waitLoaded("acme/cloud", "compare 1 ↔ 3 ↔ 4 ↔ 5", "◇◇○○") // the network mirror [1] listed: it is the proposed source
	// NO_COLOR: no colour escapes, yet focus and marks still show.
	if colored := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;)`); colored.MatchString(s.screen(true)) {
		t.Errorf("NO_COLOR=1, yet the screen has colour escapes")
	}
	s.keys("Enter", "Right", "Enter") // matrix; 2.1.0 darwin_arm64; queue…
	s.waitFor("to which mirror?")
	s.keys("Enter") // proposed: the secondary, which lacks it
	s.waitFor("1 to copy: 1 from [1] https://127.0.0.1:")
	s.keys("Enter")
	s.waitFor("1 done", "zh ✓ mirror index")
	s.keys("q")
	s.waitGone()
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "tfmirror-demo-") {
			t.Errorf("the demo world %s was left behind", e.Name())
		}
	}
}

// TestCLIUIQuitCancelsJobs quits while a job is still copying (the demo's
// network mirror slowed to a crawl): the UI asks first, then cancels the
// job, says on stderr what it cancelled and exits 130, as Ctrl-C does, and
// leaves neither the archive nor a staging file behind.
func TestCLIUIQuitCancelsJobs(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	out := t.TempDir()
	code, stderr := filepath.Join(out, "code"), filepath.Join(out, "stderr")
	s := newTmuxShell(t, 120, 36, nil, fmt.Sprintf("%s demo --keep %s --rate 20000 2>%s; echo $? >%s", tfmirrorBin, keep, stderr, code))
	s.waitLoaded("acme/cloud", "2.1.0", "◇◇○")
	s.keys("Enter", "Enter") // matrix; queue 2.1.0 darwin_amd64 (768 kB)
	s.waitFor("to which mirror?")
	s.keys("Enter") // proposed: the secondary
	s.waitFor("1 to copy: 1 from [1] https://127.0.0.1:")
	s.keys("Enter")
	s.waitFor("1 running")
	s.keys("q")
	s.waitFor("quit and cancel them? y/n")
	s.keys("y")
	s.waitGone()
	if got, _ := os.ReadFile(code); strings.TrimSpace(string(got)) != "130" {
		t.Errorf("exit %q after q, y cancelled a job; want 130", got)
	}
	msg, _ := os.ReadFile(stderr)
	if !strings.Contains(string(msg), "cancelled: registry.terraform.io/acme/cloud 2.1.0 darwin_amd64 -> "+filepath.Join(keep, "secondary")) {
		t.Errorf("stderr does not say what q, y cancelled:\n%s", msg)
	}
	secondary := filepath.Join(keep, "secondary")
	if _, err := os.Stat(filepath.Join(secondary, "registry.terraform.io", "acme", "cloud", "terraform-provider-cloud_2.1.0_darwin_amd64.zip")); !os.IsNotExist(err) {
		t.Errorf("the cancelled archive is in the destination: %v", err)
	}
	filepath.WalkDir(secondary, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tfmirror-tmp-") {
			t.Errorf("staging file left behind: %s", p)
		}
		return nil
	})
}

// TestCLIUIConfigExcludes opens the UI with no place, on the mirrors of a
// CLI configuration whose second mirror excludes a provider: its cells
// there read "not applicable", not missing.
func TestCLIUIConfigExcludes(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	r := run(t, nil, "demo", "--keep", keep, "--no-ui")
	dirs := strings.Fields(r.stdout)
	if r.code != 0 || len(dirs) != 2 {
		t.Fatalf("demo --no-ui: exit %d, %q: %s", r.code, r.stdout, r.stderr)
	}
	home := t.TempDir()
	cfg := filepath.Join(home, "mirrors.tfrc")
	body := `provider_installation {
  filesystem_mirror {
    path = "` + dirs[0] + `"
  }
  filesystem_mirror {
    path    = "` + dirs[1] + `"
    exclude = ["registry.terraform.io/acme/queue"]
  }
  direct {}
}
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 120, 36, []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + cfg, "NO_COLOR=1"})
	s.waitLoaded("acme/queue", "compare 1 ↔ 2", "◇○")
	s.keys("Down", "Down", "Down") // acme/queue, which only the first mirror holds
	scr := s.waitLoaded("queue ─ compare 1 ↔ 2", "- excluded by CLI config")
	if !strings.Contains(scr, "◇-") || strings.Contains(scr, "○ missing") {
		t.Errorf("acme/queue's cells in the second mirror should read not applicable:\n%s", scr)
	}
	s.keys("q")
	s.waitGone()
}

// TestCLIUISpec opens the UI on a spec written beside a demo world (source
// the primary mirror, destination the secondary): the matrix shows the
// destination's gaps, and S queues them all, from the source.
func TestCLIUISpec(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	r := run(t, nil, "demo", "--keep", keep, "--no-ui")
	if r.code != 0 {
		t.Fatalf("demo --no-ui: exit %d: %s", r.code, r.stderr)
	}
	file := filepath.Join(keep, "mirror.hcl")
	body := `destinations = ["./secondary"]
source       = "./primary"
platforms    = ["darwin_arm64", "linux_amd64"]
provider "registry.terraform.io/acme/dns" {
  versions = ">= 3.1"
}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 120, 36, []string{"NO_COLOR=1"}, "ui", "--spec", file)
	s.waitLoaded("acme/dns", "3.2.0", "3.1.0", "S queue the spec's gaps")
	s.keys("S")
	s.waitFor("2 to copy: 2 from [2] ")
	s.keys("Enter")
	s.waitFor("2 done")
	s.keys("q")
	s.waitGone()
	for _, plat := range []string{"darwin_arm64", "linux_amd64"} {
		if _, err := os.Stat(filepath.Join(keep, "secondary", "registry.terraform.io", "acme", "dns", "terraform-provider-dns_3.2.0_"+plat+".zip")); err != nil {
			t.Errorf("acme/dns 3.2.0 %s did not land: %v", plat, err)
		}
	}
}
