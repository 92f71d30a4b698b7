package ui

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// badgeOf is what the providers list says of p: in full and short.
func badgeOf(m Model, p backends.Provider) [2]string {
	l := m.prov().list
	for _, it := range l.Items() {
		if it.Key == p {
			return it.Badge
		}
	}
	return [2]string{}
}

// missingIn counts the ○ marks of the matrix shown.
func missingIn(m Model) int {
	_, _, marks := matrixData(m)
	n := 0
	for _, row := range marks {
		for _, cell := range row {
			for _, mk := range cell {
				if mk == theme.MarkMissing {
					n++
				}
			}
		}
	}
	return n
}

// TestModelListSaysWhatEachLacks: once every provider has been listed in
// the background, the list says beside each how many packages the
// compared mirrors lack of it, the ○ marks its matrix shows, before it is
// opened; a job that lands takes one off; with one mirror compared, none
// is missing anywhere.
func TestModelListSaysWhatEachLacks(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 80, 24)
	h.until("every provider listed", func(m Model) bool { return idle(m) && len(m.prov().cache) == 4 })
	badges := map[string][2]string{}
	for _, p := range h.m.prov().items {
		badges[p.Type] = badgeOf(h.m, p)
	}
	// At 80x24 the list is 20 columns wide: the short form, and only it.
	_, listLines := h.m.prov().listBox()
	list := strings.Join(listLines, "\n")
	if !strings.Contains(list, "○") || strings.Contains(list, " missing") {
		t.Errorf("at 80x24 the list should say ○N:\n%s", list)
	}
	for k, p := range h.m.prov().items {
		if k > 0 {
			h.press("down")
		}
		h.until(p.String(), func(m Model) bool { return idle(m) && m.prov().current == p })
		n := missingIn(h.m)
		want := [2]string{strconv.Itoa(n) + " missing", "○" + strconv.Itoa(n)}
		if n == 0 {
			want = [2]string{"ok", "✓"}
		}
		if badges[p.Type] != want {
			t.Errorf("%s: the list said %q before it was opened; its matrix shows %d missing", p, badges[p.Type], n)
		}
		if !strings.Contains(h.screen(), want[1]) {
			t.Errorf("%s: %q is not on the screen:\n%s", p, want[1], h.screen())
		}
	}

	// acme/queue (shown) lacks 0.9.0 linux_amd64 in the second mirror: a
	// job lands it, and the count drops by one.
	q := h.m.prov().current
	before := badgeOf(h.m, q)
	h.press("enter")
	h.gotoCell("0.9.0", "linux_amd64")
	h.press("enter")
	if h.m.dialog != nil && !h.m.dialog.Confirming() {
		h.press("enter")
	}
	h.press("enter")
	h.until("the job to land", func(m Model) bool { return jobsEnded(1)(m) && idle(m) })
	n, _ := strconv.Atoi(strings.TrimPrefix(before[1], "○"))
	if got, want := badgeOf(h.m, q)[1], "○"+strconv.Itoa(n-1); got != want {
		t.Errorf("acme/queue after the job: %q; want %q (was %q)", got, want, before[1])
	}

	// Mirror 2 out of the comparison: nothing is missing anywhere.
	h.press("2")
	for _, p := range h.m.prov().items {
		if got := badgeOf(h.m, p); got != [2]string{"ok", "✓"} {
			t.Errorf("%s with mirror 1 alone: %q; want ok", p, got)
		}
	}
}

// TestEndToEndListSaysWhatEachLacks: in a program at 120x36 the list says,
// in words, what the compared mirrors lack of each provider; taking mirror
// 2 out of the comparison turns every one "ok".
func TestEndToEndListSaysWhatEachLacks(t *testing.T) {
	w := newWorld(t)
	tm, waitFor, press := newProgram(t, w.config())
	waitFor("acme/cloud", "11 missing", "4 missing", "40 missing", "12 missing", listed)
	press("2")
	waitFor("3.2.0 ok", "0.9.0 ok")
	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(Model)
	for _, p := range final.prov().items {
		if b := badgeOf(final, p); !slices.Contains([]string{"ok"}, b[0]) {
			t.Errorf("%s: %q with mirror 1 alone", p, b)
		}
	}
}
