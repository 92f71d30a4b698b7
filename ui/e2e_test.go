package ui

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// TestEndToEnd runs the UI as a program in a fixed-size virtual terminal:
// open on two real filesystem mirrors, move to a platform the second lacks,
// queue it, and watch the job land with its hashes verified.
func TestEndToEnd(t *testing.T) {
	w := newWorld(t)
	tm, waitFor, press := newProgram(t, w.config())

	waitFor("acme/cloud", "2.1.0", "windows_amd64", listed)
	press("enter", "right") // into the matrix, to 2.1.0 darwin_arm64
	press("enter")          // queue: which destination?
	waitFor("to which mirror?")
	press("enter") // the proposed one lacks it: ./secondary
	waitFor("1 to copy")
	press("enter")
	waitFor("1 done", "zh ✓ mirror index")

	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(Model)
	if final.jobs.Tracker().Counts()[engine.Done] != 1 {
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

// TestEndToEndFilterByConstraintAndGaps narrows the matrix as a user
// would: "/" with a version constraint, then o for the versions some mirror
// lacks.
func TestEndToEndFilterByConstraintAndGaps(t *testing.T) {
	w := newWorld(t)
	tm, waitFor, press := newProgram(t, w.config())

	waitFor("acme/dns", "2.1.0", listed)
	press("down", "enter") // acme/dns, into its matrix: 3.2.0, 3.1.0, 3.0.1
	waitFor("acme/dns ─ compare 1 ↔ 2 ─ 3 versions", listed)
	press("/")
	tm.Type(">= 3.1")
	waitFor("2 of 3 versions")
	press("enter", "o") // 3.1.0 is in both mirrors: only 3.2.0 has a gap
	waitFor("1 of 3 versions, gaps only")
	press("esc") // nothing selected: esc clears the filter, the gaps stay
	waitFor("1 of 3 versions, gaps only")

	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(Model)
	g := final.prov().grid
	if c, ok := g.Cursor(); !ok || c.Row != "3.2.0" || g.Shown() != 1 || !g.GapsOnly() || g.Filter() != "" {
		t.Errorf("final grid: cursor %v, %d rows shown, gaps %v, filter %q; want 3.2.0 alone, gaps only", c, g.Shown(), g.GapsOnly(), g.Filter())
	}
}

// e2eWait bounds every wait of the end-to-end tests: generous, so that a
// loaded machine (other suites running at once) does not fail them; the
// waits end as soon as the screen shows what they look for.
const e2eWait = time.Minute

// listed, given to waitFor, waits for a frame drawn with every listing of
// the item shown in: one whose grid ends in its legend, which the grid
// prefixes with "listing…" while a compared place is still listing. A key
// pressed before that acts on half the picture (a queue dialog proposes
// another source or destination).
const listed = "\x00every listing in"

// legendDrawn matches a grid's last line starting with its legend (a mark
// right after the box's border): no "listing…" before it.
var legendDrawn = regexp.MustCompile(`[│┃][●◇◐○≠✗!·-] [a-z]`)

// newProgram runs the UI over cfg as a program in a fixed-size virtual
// terminal, without animation or colour, and returns it with a waitFor
// that waits until the output shows every string, and a press that sends
// keys. The renderer writes only what changed (a version going from 2.0.0
// to 2.1.0 is written as "1"), so each miss asks for a whole frame; the
// text is looked for, styling removed, in the output since the wait began.
func newProgram(t *testing.T, cfg Config) (tm *teatest.TestModel, waitFor func(what ...string), press func(keys ...string)) {
	t.Helper()
	cfg.NoAnimation = true
	cfg.Engine = engine.NewEngine(t.Context(), engine.Options{})
	m := New(t.Context(), cfg)
	t.Cleanup(m.Shutdown)
	tm = teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor = func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			s := ansi.Strip(string(b))
			for _, w := range what {
				if w == listed && !legendDrawn.MatchString(s) || w != listed && !strings.Contains(s, w) {
					tm.Send(tea.ClearScreen())
					return false
				}
			}
			return true
		}, teatest.WithDuration(e2eWait), teatest.WithCheckInterval(50*time.Millisecond))
	}
	press = func(keys ...string) {
		for _, k := range keys {
			tm.Send(keyPress(k))
		}
	}
	return tm, waitFor, press
}
