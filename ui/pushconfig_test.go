package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/details"
)

// squeeze drops every blank, so text wrapped in a narrow pane compares
// with the text as written.
func squeeze(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), "") }

// A push from the UI to an OCI registry ends as `tfmirror push` ends: the
// jobs pane's Details show its notes (a plain-HTTP registry: OpenTofu
// reaches OCI registries over HTTPS only) and the provider_installation
// block to paste, the one push prints; y copies the block.
func TestUIPushEndsWithPushsNotesAndBlock(t *testing.T) {
	for _, plain := range []bool{true, false} {
		name := map[bool]string{true: "plain HTTP", false: "HTTPS"}[plain]
		t.Run(name, func(t *testing.T) {
			src, _, _, sel := releaseWorld(t)
			reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: plain})
			r, err := placeopen.Open(t.Context(), "oci://"+reg.Host()+"/tf/${namespace}/${type}", placeopen.Options{CACertFile: reg.CAFile(), PlainHTTP: plain, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			dst := r.(backends.Writer)
			h := newHarness(t, Config{Mirrors: []Mirror{{Reader: src, Kind: "release"}, {Reader: dst, Kind: "oci"}}, Selection: sel}, 120, 80)
			h.until("load", idle)
			h.press("enter", "r", "enter", "enter") // the matrix; the row; queue to [2]; confirm
			h.until("the pushes to land and the index to be written", func(m Model) bool {
				return jobsEnded(3)(m) && idle(m) && m.jobs.Tracker().Jobs[m.jobs.Tracker().Order[0]].Client != nil
			})
			p, _ := backends.ParseProvider(releaseAddr)
			block, notes := r.(backends.ClientConfigurer).ClientConfig([]backends.Provider{p})
			if got := strings.Contains(strings.Join(notes, "\n"), "OpenTofu reaches OCI registries over HTTPS only"); got != plain {
				t.Fatalf("push's notes %q: the HTTPS note is there: %v, want %v", notes, got, plain)
			}
			tr := h.m.jobs.Tracker()
			for _, id := range tr.Order {
				if j := tr.Jobs[id]; j.State != engine.Done || j.Client == nil || j.Client.Block != block {
					t.Errorf("job %s: %s, client configuration %+v; want done, with push's block", j.Info.Package, j.State, j.Client)
				}
			}
			h.press("tab") // the jobs pane: Details show the job under its cursor
			shown := squeeze(h.m.details.View())
			for _, want := range append(notes, "Add to the OpenTofu CLI configuration", block) {
				if !strings.Contains(shown, squeeze(want)) {
					t.Errorf("the job's Details lack %q:\n%s", want, h.m.details.View())
				}
			}
			h.press("y")
			if st := h.m.status(); !strings.Contains(st.text, "copied "+details.ClientBlock) {
				t.Errorf("y in the jobs pane: status %q, want it to copy the block", st.text)
			}
		})
	}
}
