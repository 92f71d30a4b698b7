package ui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestModulesView renders the Modules view through a session at the sizes
// the UI must work at (a real registry and directory; the registry's host
// is fixed so nothing depends on a port or a temp dir); regenerate with
// go test ./ui -run TestModulesView -update.
func TestModulesView(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		mw := newModWorld(t)
		cfg := Config{Modules: mw.config()}
		cfg.Modules.ShowFirst = true
		h := newHarness(t, cfg, size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
				golden.RequireEqual(t, []byte(h.screen()))
			})
		}
		h.until("the module to load", func(m Model) bool { return modulesLoaded(m) && !m.busy() })
		snap("start")

		h.press("enter", "space", "down", "space")
		snap("selection")

		h.press("enter")
		snap("queue_confirm")

		h.press("enter")
		h.until("the jobs to land and the directory to be listed again", func(m Model) bool {
			return jobsEnded(2)(m) && modulesLoaded(m) && !m.busy()
		})
		// Details of a version the directory lacks: a present one would show
		// the temp dir.
		h.gotoVersion("0.9.0")
		snap("jobs_done")

		h.press("?")
		snap("help")
	}
}
