package ui

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/sync/engine"
)

// slowWorld is the demo world with its primary served as a network mirror
// whose archives wait for release: jobs from it run until then.
func slowWorld(t *testing.T) (Config, chan struct{}) {
	t.Helper()
	w := newWorld(t)
	release := make(chan struct{})
	net := serveNet(t, w.Primary, func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".zip") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	return Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}, {Reader: w.secondary, Kind: "fs"}}}, release
}

// TestModelCtrlCSaysWhatItCancelled: Ctrl-C with jobs running (and the
// quit question asked) cancels them, and what Run returns (printed by the command, which exits 130)
// names each job cancelled; Ctrl-C with nothing under way is a plain quit.
func TestModelCtrlCSaysWhatItCancelled(t *testing.T) {
	cfg, release := slowWorld(t)
	defer close(release)
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("space", "right", "space", "enter", "enter")
	h.until("two jobs to run", func(m Model) bool {
		return len(m.jobs.Tracker().Order) == 2 && m.jobs.Tracker().Counts()[engine.Running] > 0
	})
	h.press("q") // the quit question: Ctrl-C does not wait for its answer
	if !h.m.confirmQuit {
		t.Fatalf("q with jobs running should ask; status %q", h.m.status().text)
	}
	h.press("ctrl+c")
	h.until("the quit", func(Model) bool { return h.quit })
	if h.m.interrupted == nil {
		t.Fatal("ctrl+c with jobs running did not note what it interrupted")
	}
	h.m.Shutdown()
	err := interruptedBy(h.m.interrupted, h.m.jobs.Tracker())
	if len(err.Canceled) != 2 {
		t.Fatalf("cancelled %v; want the two jobs", err.Canceled)
	}
	msg := err.Error()
	for _, want := range []string{"interrupted: 2 job(s) cancelled, 0 done, 0 failed",
		"cancelled: registry.terraform.io/acme/cloud 2.1.0 linux_amd64 -> ./secondary"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	w := newWorld(t)
	h = newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("ctrl+c")
	h.until("the quit", func(Model) bool { return h.quit })
	if h.m.interrupted != nil {
		t.Errorf("ctrl+c with nothing under way noted an interruption: %+v", h.m.interrupted)
	}
}

// TestModelQuitQuestionMoot: q with a job running asks; once the job has
// ended the question is moot, and the next q quits rather than being taken
// for its answer.
func TestModelQuitQuestionMoot(t *testing.T) {
	cfg, release := slowWorld(t)
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("enter", "enter")
	h.until("the job to run", func(m Model) bool { return len(m.jobs.Tracker().Order) == 1 && stateOf(m, 0) == engine.Running })
	h.press("q")
	if !h.m.confirmQuit {
		t.Fatalf("q with a job running should ask; status %q", h.m.status().text)
	}
	close(release)
	h.until("the job to end", func(m Model) bool { return !m.jobs.Tracker().Unfinished() })
	if h.m.confirmQuit {
		t.Errorf("the question stays asked once the job has ended")
	}
	h.press("q")
	h.until("the quit", func(Model) bool { return h.quit })
	if stateOf(h.m, 0) != engine.Done {
		t.Errorf("job %s; want done", stateOf(h.m, 0))
	}
}

// TestModelQuitConfirmedSaysWhatItCancelled: q with a job running, then
// y, cancels the job and notes it as Ctrl-C does: Run returns an
// *Interrupted naming it (the command prints it and exits 130).
func TestModelQuitConfirmedSaysWhatItCancelled(t *testing.T) {
	cfg, release := slowWorld(t)
	defer close(release)
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("enter", "enter")
	h.until("the job to run", func(m Model) bool { return len(m.jobs.Tracker().Order) == 1 && stateOf(m, 0) == engine.Running })
	h.press("q", "y")
	h.until("the quit", func(Model) bool { return h.quit })
	if h.m.interrupted == nil {
		t.Fatal("q, y with a job running did not note what it cancelled")
	}
	h.m.Shutdown()
	err := interruptedBy(h.m.interrupted, h.m.jobs.Tracker())
	if !strings.Contains(err.Error(), "cancelled: registry.terraform.io/acme/cloud 2.1.0 linux_amd64 -> ./secondary") {
		t.Errorf("what q, y cancelled is not said:\n%s", err)
	}
}
