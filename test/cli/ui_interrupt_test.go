package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// newTmuxShell runs a shell command line in a private tmux server, as
// newTmux runs the binary, for tests that need what the program leaves
// behind: its exit code and its stderr, written to files by the shell once
// the terminal is the shell's again.
func newTmuxShell(t *testing.T, w, h int, env []string, line string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal test needs it (apt-get install tmux)")
	}
	s := &tmuxSession{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := []string{"new-session", "-d", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)}
	for _, e := range env {
		cmd = append(cmd, "-e", e)
	}
	s.tmux(append(cmd, line)...)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	return s
}

// click sends a left click at (x, y), 0-based, as a terminal in SGR mouse
// mode reports it: the press, then the release.
func (s *tmuxSession) click(x, y int) {
	s.mouse(fmt.Sprintf("\x1b[<0;%d;%dM", x+1, y+1), fmt.Sprintf("\x1b[<0;%d;%dm", x+1, y+1))
}

// hover moves the pointer to (x, y) with no button down, as an SGR motion
// report.
func (s *tmuxSession) hover(x, y int) { s.mouse(fmt.Sprintf("\x1b[<35;%d;%dM", x+1, y+1)) }

func (s *tmuxSession) mouse(seqs ...string) {
	for _, seq := range seqs {
		var hex []string
		for _, b := range []byte(seq) {
			hex = append(hex, fmt.Sprintf("%02x", b))
		}
		s.tmux(append([]string{"send-keys", "-H"}, hex...)...)
	}
}

// TestCLIUICtrlCInterruptsJobs presses Ctrl-C while a job is copying (the
// demo's network mirror slowed to a crawl): the UI does not ask, cancels
// the job, and once the terminal is back says on stderr what it cancelled
// and exits 130, as the other commands do on Ctrl-C. Ctrl-C with nothing
// under way quits as q does: exit 0, nothing said.
func TestCLIUICtrlCInterruptsJobs(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	out := t.TempDir()
	code, stderr := filepath.Join(out, "code"), filepath.Join(out, "stderr")
	line := fmt.Sprintf("%s demo --keep %s --rate 20000 2>%s; echo $? >%s", tfmirrorBin, keep, stderr, code)
	s := newTmuxShell(t, 120, 36, []string{"NO_COLOR=1"}, line)
	s.waitLoaded("acme/cloud", "2.1.0", "◇◇○")
	s.keys("Enter", "Enter") // matrix; queue 2.1.0 darwin_amd64 (768 kB)
	s.waitFor("to which mirror?")
	s.keys("Enter")
	s.waitFor("1 to copy: 1 from [1] https://127.0.0.1:")
	s.keys("Enter")
	s.waitFor("1 running")
	s.keys("C-c")
	s.waitGone()
	got, err := os.ReadFile(code)
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.TrimSpace(string(got)); c != "130" {
		t.Errorf("exit %s after Ctrl-C cancelled a job; want 130", c)
	}
	msg, _ := os.ReadFile(stderr)
	for _, want := range []string{"tfmirror: ui: interrupted: 1 job(s) cancelled, 0 done, 0 failed",
		"cancelled: registry.terraform.io/acme/cloud 2.1.0 darwin_amd64 -> " + filepath.Join(keep, "secondary")} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(keep, "secondary", "registry.terraform.io", "acme", "cloud", "terraform-provider-cloud_2.1.0_darwin_amd64.zip")); !os.IsNotExist(err) {
		t.Errorf("the cancelled archive is in the destination: %v", err)
	}

	// Nothing under way: a plain quit.
	os.Remove(code)
	s = newTmuxShell(t, 120, 36, []string{"NO_COLOR=1"}, fmt.Sprintf("%s %s %s 2>%s; echo $? >%s", tfmirrorBin,
		filepath.Join(keep, "primary"), filepath.Join(keep, "secondary"), stderr, code))
	s.waitLoaded("acme/cloud", "2.1.0")
	s.keys("C-c")
	s.waitGone()
	got, _ = os.ReadFile(code)
	msg, _ = os.ReadFile(stderr)
	if c := strings.TrimSpace(string(got)); c != "0" || len(msg) > 0 {
		t.Errorf("Ctrl-C with nothing under way: exit %s, stderr %q; want 0 and nothing", c, msg)
	}
}

// TestCLIUICtrlCFromEveryDialog: Ctrl-C leaves the UI at once from the
// queue dialog, the help screen, a filter being typed and the quit
// question, and the terminal is the shell's again.
func TestCLIUICtrlCFromEveryDialog(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	if r := run(t, nil, "demo", "--keep", keep, "--no-ui"); r.code != 0 {
		t.Fatalf("demo --no-ui: exit %d: %s", r.code, r.stderr)
	}
	open := []string{filepath.Join(keep, "primary"), filepath.Join(keep, "secondary")}
	for _, tc := range []struct {
		name  string
		keys  []string
		shown string
	}{
		{"queue dialog", []string{"Enter", "Enter"}, "to which mirror?"},
		{"help", []string{"?"}, "Everywhere"},
		{"provider filter", []string{"/", "c"}, "/c"},
		{"version filter", []string{"Enter", "/", "2"}, "/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTmux(t, 120, 36, []string{"NO_COLOR=1"}, append([]string{"ui"}, open...)...)
			s.waitLoaded("acme/cloud", "2.1.0")
			s.keys(tc.keys...)
			s.waitFor(tc.shown)
			s.keys("C-c")
			s.waitGone()
		})
	}
}

// TestCLIUIMouse clicks in a real terminal (SGR mouse reports, which the UI
// asks tmux for): a provider in the list, then a cell of its matrix (the
// matrix takes the focus), then the same cell again, which selects it;
// the pointer resting on a provider shows its full address.
func TestCLIUIMouse(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	if r := run(t, nil, "demo", "--keep", keep, "--no-ui"); r.code != 0 {
		t.Fatalf("demo --no-ui: exit %d: %s", r.code, r.stderr)
	}
	s := newTmux(t, 120, 36, []string{"NO_COLOR=1"}, "ui", filepath.Join(keep, "primary"), filepath.Join(keep, "secondary"))
	s.waitLoaded("acme/dns", "acme/cloud ─ compare 1 ↔ 2")
	s.click(3, 3) // the list's second line: acme/dns
	scr := s.waitLoaded("acme/dns ─ compare 1 ↔ 2")
	// The first cell of the first row (3.2.0), under the first platform's
	// heading.
	lines := strings.Split(scr, "\n")
	x, y := -1, -1
	for i, l := range lines {
		r := []rune(l)
		if k := strings.Index(l, " version "); k >= 0 && i+1 < len(lines) && strings.Contains(lines[i+1], "3.2.0") {
			k = len([]rune(l[:k])) + len(" version ")
			for k < len(r) && r[k] == ' ' {
				k++
			}
			x, y = k, i+1
			break
		}
	}
	if y < 0 {
		t.Fatalf("no row 3.2.0 under the headings:\n%s", scr)
	}
	s.click(x+1, y)
	s.waitUntil("the matrix focused", func(scr string) bool { return strings.Contains(scr, "┏━ registry.terraform.io/acme/dns") })
	s.click(x+1, y)
	s.waitFor("1 selected")
	// The pointer resting on acme/cloud in the list names it in full.
	s.hover(3, 2)
	s.waitFor("registry.terraform.io/acme/cloud")
	s.keys("q")
	s.waitGone()
}

// TestCLIUISIGTERMInterruptsJobs sends SIGTERM to the UI while a job is
// copying: the same message as Ctrl-C's on stderr, exit 143 (128 + 15).
func TestCLIUISIGTERMInterruptsJobs(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "world")
	out := t.TempDir()
	code, stderr := filepath.Join(out, "code"), filepath.Join(out, "stderr")
	line := fmt.Sprintf("%s demo --keep %s --rate 20000 2>%s; echo $? >%s", tfmirrorBin, keep, stderr, code)
	s := newTmuxShell(t, 120, 36, []string{"NO_COLOR=1"}, line)
	s.waitLoaded("acme/cloud", "2.1.0", "◇◇○")
	s.keys("Enter", "Enter")
	s.waitFor("to which mirror?")
	s.keys("Enter")
	s.waitFor("1 to copy")
	s.keys("Enter")
	s.waitFor("1 running")
	shell, err := strconv.Atoi(strings.TrimSpace(s.tmux("list-panes", "-F", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", shell, shell))
	if err != nil {
		t.Skipf("cannot find the shell's child: %v", err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(children))[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitGone()
	got, _ := os.ReadFile(code)
	if c := strings.TrimSpace(string(got)); c != "143" {
		t.Errorf("exit %s after SIGTERM; want 143", c)
	}
	msg, _ := os.ReadFile(stderr)
	if !strings.Contains(string(msg), "interrupted: 1 job(s) cancelled") || !strings.Contains(string(msg), "cancelled: registry.terraform.io/acme/cloud 2.1.0") {
		t.Errorf("stderr does not say what SIGTERM cancelled:\n%s", msg)
	}
}
