package ui

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/tfmirror/tfmirror/backends/fs"
)

// longNames are places named as long as real ones get: two directories
// that end alike, an OCI template on a long registry host, an S3 bucket.
// They are the demo's mirrors opened under those names (a name is all the
// header, dialogs and Details show of a place), so the screens are the
// same on every run.
var longNames = []struct{ name, kind string }{
	{"/srv/terraform/mirrors/production-eu-west-1/providers", "fs"},
	{"/srv/terraform/mirrors/staging-eu-west-1/providers", "fs"},
	{"oci://registry.platform.example.internal:5000/terraform/providers/${namespace}/${type}", "oci"},
	{"s3://acme-terraform-provider-mirror-production/mirrors/terraform/providers", "s3"},
}

// TestViewLongNames: at 60x16, 80x24 and 120x40, the header, the queue
// dialogs and Details shorten long names by one rule that keeps each place
// told apart from the others: the header names four different places, none
// with a stray "}", and the help lists every name in full. Golden screens;
// regenerate with go test ./ui -run TestViewLongNames -update.
func TestViewLongNames(t *testing.T) {
	for _, size := range []struct{ w, h int }{{60, 16}, {80, 24}, {120, 40}} {
		w := newWorld(t)
		var mirrors []Mirror
		for i, n := range longNames {
			dir := w.Primary
			if i%2 == 1 {
				dir = w.Secondary
			}
			r, err := fs.Open(n.name, dir, fs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mirrors = append(mirrors, Mirror{Reader: r, Kind: n.kind})
		}
		h := newHarness(t, Config{Mirrors: mirrors}, size.w, size.h)
		sz := "_" + itoa(size.w) + "x" + itoa(size.h)
		snap := func(name string) string {
			t.Helper()
			scr := h.screen()
			t.Run(name+sz, func(t *testing.T) { golden.RequireEqual(t, []byte(scr)) })
			return scr
		}
		h.until("load", idle)
		scr := snap("start")
		header := strings.Split(scr, "\n")[0]
		names := headerNames(header)
		if len(names) != len(longNames) {
			t.Errorf("%s: the header names %d places, want %d: %q", sz, len(names), len(longNames), header)
		}
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				t.Errorf("%s: two places read %q in the header: %q", sz, n, header)
			}
			seen[n] = true
			// A name of "…/…/…" or "oci:…" tells nothing: where the room
			// is short, the header gives the names the room of the
			// program's name and of the second space between them.
			if len(strings.Map(func(r rune) rune {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					return r
				}
				return -1
			}, n)) < 4 {
				t.Errorf("%s: a name cut to nothing that tells it apart: %q in %q", sz, n, header)
			}
			if strings.Count(n, "{") != strings.Count(n, "}") {
				t.Errorf("%s: a name with half a ${...}: %q", sz, n)
			}
		}
		// A click on a name in the header shows it in full.
		if x := strings.Index(header, "[3] "); x >= 0 {
			h.send(click(len([]rune(header[:x]))+4, 0))
			if st := h.m.sh.status.text; !strings.Contains(st, longNames[2].name) {
				t.Errorf("%s: a click on [3] in the header shows %q, want its full name", sz, st)
			}
		}
		h.press("enter", "right", "space", "enter")
		snap("queue_pick")
		h.press("enter")
		snap("queue_confirm")
		h.press("esc", "?")
		help := h.screen()
		for _, n := range longNames[:2] {
			if !strings.Contains(strings.ReplaceAll(help, "\n", ""), n.name[:20]) {
				t.Errorf("%s: the help does not list %s in full:\n%s", sz, n.name, help)
			}
		}
		h.press("esc")
	}
}

// headerNames are the names the header gives places, each after its [N].
func headerNames(header string) []string {
	parts := regexp.MustCompile(`\[\d\] `).Split(header, -1)
	var out []string
	for _, p := range parts[1:] {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}
