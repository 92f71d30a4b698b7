package ui

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestView renders the UI at the sizes it must work at, through a user's
// session, and compares each screen (ANSI stripped) with its golden file;
// regenerate with go test ./ui -run TestView -update.
func TestView(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		w := newWorld(t)
		h := newHarness(t, w.config(), size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
				golden.RequireEqual(t, []byte(h.screen()))
			})
		}
		h.until("load", idle)
		snap("start")

		h.press("enter")
		h.gotoCell("2.0.0", "linux_amd64")
		snap("matrix_conflict")

		h.press("d")
		snap("details_toggled")
		h.press("d")

		h.gotoCell("2.1.0", "linux_amd64")
		h.press("r", "down", "down", "c")
		snap("selection")

		h.press("enter")
		snap("queue_pick")
		h.press("down", "enter")
		snap("queue_confirm")

		h.press("enter")
		h.until("the jobs to land and the cells to update", func(m Model) bool {
			return jobsEnded(5)(m) && idle(m)
		})
		snap("jobs_done")

		h.press("?")
		snap("help")
		h.press("esc", "tab", "tab") // matrix -> jobs -> providers
		h.press("/")
		h.typeText("le")
		snap("provider_filter")
	}
}

// TestViewErrors shows a mirror that cannot be listed: named in the status
// line and marked in the matrix, the rest of the UI working.
func TestViewErrors(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	if err := os.RemoveAll(w.Secondary); err != nil {
		t.Fatal(err)
	}
	// Wide enough that the status line is not cut, and Details folded (the
	// error there would wrap the temp path).
	h := newHarness(t, cfg, 150, 29)
	h.until("load", idle)
	// The temp dir's name varies in length, and so does the padding after it.
	lines := strings.Split(strings.ReplaceAll(h.screen(), w.Dir, "$TMP"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	screen := strings.Join(lines, "\n")
	golden.RequireEqual(t, []byte(screen))
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
