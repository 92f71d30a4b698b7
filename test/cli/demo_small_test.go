package cli

import (
	"strings"
	"testing"
)

// TestCLIDemoPushAt80x24 follows README's push step on an 80x24 terminal,
// where Details are folded: tab, G went to the last job, and tab, G back
// to the providers list, the signer and the provider_installation block
// nowhere on screen. README names d for it.
func TestCLIDemoPushAt80x24(t *testing.T) {
	s := newTmux(t, 80, 24, []string{"NO_COLOR=1"}, "demo", "--rate", "0")
	s.waitLoaded("acme/cloud", "acme/widget")
	s.keys("Enter") // step 1 opens the matrix; step 2 starts there
	s.waitFor("┏━ registry.terraform.io/acme/cloud")
	s.keys("BTab", "G", "Enter")
	s.waitLoaded("registry.terraform.io/acme/widget", "linux")
	s.keys("r", "Enter")
	s.waitFor("to which mirror?", "[5] oci://")
	s.keys("Down", "Down", "Enter")
	s.waitFor("Confirm", "3 to copy")
	s.keys("Enter")
	s.waitFor("3 done")
	s.keys("Tab", "G", "d")
	s.waitFor("Details", "signed by key")
	// The block comes with the index, after "3 done" and the signer: G
	// again until Details show its end (a G before it arrived scrolled
	// to an end that was not the last).
	s.keys("Tab")
	s.waitUntil("the provider_installation block's end in Details", func(scr string) bool {
		if strings.Contains(scr, "┏━ Details") && strings.Contains(scr, "include") && strings.Contains(scr, "direct {") {
			return true
		}
		s.keys("G")
		return false
	})
	s.keys("q")
	s.waitGone()
}
