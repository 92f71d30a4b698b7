package cli

import (
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
	s.keys("Tab", "G")
	s.waitFor("┏━ Details", "include", "direct {") // the block's end: G scrolls to it
	s.keys("q")
	s.waitGone()
}
