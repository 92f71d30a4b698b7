package ui

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/sync"
)

// TestEndToEnd runs the UI as a program in a fixed-size virtual terminal:
// open on two real filesystem mirrors, move to a platform the second lacks,
// queue it, and watch the job land with its hashes verified.
func TestEndToEnd(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	cfg.NoAnimation = true
	m := New(t.Context(), cfg)
	t.Cleanup(m.Shutdown)
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))

	// The renderer writes only what changed, so look for each thing in the
	// text of the output since the last wait, styling removed.
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			s := ansi.Strip(string(b))
			for _, w := range what {
				if !strings.Contains(s, w) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	}
	press := func(keys ...string) {
		for _, k := range keys {
			tm.Send(keyPress(k))
		}
	}

	waitFor("acme/cloud", "2.1.0", "windows_amd64")
	press("enter", "right") // into the matrix, to 2.1.0 darwin_arm64
	press("enter")          // queue: which destination?
	waitFor("to which mirror?")
	press("enter") // the proposed one lacks it: ./secondary
	waitFor("1 to copy")
	press("enter")
	waitFor("1 done", "h1 ✓ zh ✓ mirror index")

	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if final.jobs.Tracker().Counts()[sync.Done] != 1 {
		t.Errorf("final model: jobs %v", final.jobs.Tracker().Counts())
	}
	want, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "2.1.0", "darwin_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(archivePath(w.Secondary, "acme/cloud", "2.1.0", "darwin_arm64"))
	if err != nil {
		t.Fatalf("the archive is not in the destination: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the destination's archive differs from the source's")
	}
	assertNoStaging(t, w.Secondary)
}
