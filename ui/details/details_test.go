package details

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/internal/keypress"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func pane(w, h int) Model {
	s := theme.New()
	m := New(&s)
	m.SetSize(w, h)
	return m
}

func pkg() backends.Package {
	p, _ := backends.ParseProvider("registry.terraform.io/acme/cloud")
	v, _ := backends.ParseVersion("2.0.0")
	return backends.Package{Provider: p, Version: v, Platform: backends.Platform{OS: "linux", Arch: "amd64"}}
}

func TestCell(t *testing.T) {
	index := hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: "registry.terraform.io/acme/cloud/2.0.0.json"}
	h1 := hashing.Hash("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	packed := &backends.Archive{Package: pkg(), Size: 1234, Evidence: []hashing.Evidence{{Source: index, Hashes: []hashing.Hash{h1}}}}
	unpacked := &backends.Archive{Package: pkg(), Size: -1, Layout: backends.Unpacked}
	mismatch := &sync.Finding{Package: pkg(), Status: sync.StatusMismatch,
		Detail: "./a: " + pkg().String() + ": h1 mismatch against mirror index: want h1:AAA, got h1:BBB"}
	ok := &sync.Finding{Package: pkg(), Status: sync.StatusOK, Result: &hashing.Result{
		Sums:   hashing.Sums{H1: h1},
		Checks: []hashing.Check{{Source: index, Scheme: hashing.SchemeH1, Status: hashing.Match}},
	}}
	cell := &Cell{Package: pkg(), Ref: 1, Mirrors: []Mirror{
		{Number: 1, Name: "./a", Compared: true, Mark: theme.MarkFailed, Archive: packed, Verify: mismatch, Origin: "verify"},
		{Number: 2, Name: "/srv/mirrors/b", Compared: true, Mark: theme.MarkUnverified, Archive: unpacked, Verifying: true},
		{Number: 3, Name: "https://m.example/", Mark: theme.MarkError, Err: errors.New("GET https://m.example/acme/cloud/index.json: HTTP 503")},
		{Number: 4, Name: "./d", Mark: theme.MarkMissing},
		{Number: 5, Name: "./e", Mark: theme.MarkVerified, Archive: packed, Verify: ok, Origin: "transfer"},
	}}
	m := pane(60, 40)
	m.ShowCell(cell)
	view := ansi.Strip(m.View())
	for _, want := range []string{
		"2.0.0 linux_amd64",
		"[1] ✗ ./a 1.2 kB", "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n      mirror index …/acme/cloud/2.0.0.json", // the hash whole
		"✗ verified: mismatch", "\n    h1 mismatch against mirror index: want h1:AAA, got", // the prefix naming mirror and package is dropped
		"[2] ◐ /srv/mirrors/b unpacked", "◐ no hashes stated", "verifying…",
		"[3] ! https://m.example/", "cannot list: GET https://m.example/acme/cloud/\n    index.json: HTTP 503",
		"[4] ○ ./d missing",
		"[5] ● ./e 1.2 kB", "checked on arrival", "✓ h1 mirror index",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("Details lack %q:\n%s", want, view)
		}
	}
	// A short, narrow pane wraps rather than cuts, and scrolls to the rest.
	m.SetSize(28, 8)
	all := map[string]bool{}
	for range 40 {
		lines := strings.Split(ansi.Strip(m.View()), "\n")
		if len(lines) != 8 {
			t.Fatalf("%d lines in an 8-line pane", len(lines))
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > 28 {
				t.Errorf("line %d is %d wide: %q", i, w, l)
			}
			all[strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "↑"))] = true
		}
		m, _ = m.Update(keypress.Msg("down"))
	}
	if !strings.Contains(ansi.Strip(pane28x8(cell).View()), "more (tab to scroll)") {
		t.Errorf("a pane taller than its room says so:\n%s", ansi.Strip(pane28x8(cell).View()))
	}
	for _, want := range []string{"[1] ✗ ./a 1.2 kB", "h1:AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAA=", "mirror index …0.0.json", "[4] ○ ./d missing", "checked on arrival", "✓ h1 mirror index"} {
		if !all[want] {
			t.Errorf("scrolling through the pane never shows the line %q; saw %v", want, all)
		}
	}
	if strings.Contains(ansi.Strip(m.View()), "more") {
		t.Errorf("scrolled to the end, nothing is below:\n%s", ansi.Strip(m.View()))
	}
	// Another cell starts at the top again.
	other := *cell
	other.Package.Platform = backends.Platform{OS: "darwin", Arch: "arm64"}
	m.ShowCell(&other)
	if v := ansi.Strip(m.View()); !strings.HasPrefix(v, "2.0.0 darwin_arm64") {
		t.Errorf("a new cell should show from the top:\n%s", v)
	}
}

func pane28x8(c *Cell) Model {
	m := pane(28, 8)
	m.ShowCell(c)
	return m
}

func TestJob(t *testing.T) {
	conflict := &backends.OpError{Op: "commit", Side: "destination", Place: "./b", Pkg: ptr(pkg()),
		Err: fmt.Errorf("mirror ./b: %s: %w (has zh:1, incoming zh:2)", pkg(), backends.ErrConflict)}
	m := pane(50, 30)
	m.ShowJob(&engine.TrackedJob{Info: engine.JobInfo{Package: pkg(), Size: 2000}, State: engine.Failed, Attempt: 2, Err: conflict}, "[1] ./a", "[2] ./b")
	view := ansi.Strip(m.View())
	for _, want := range []string{"from [1] ./a", "to [2] ./b", "failed, attempt 2", "✗ conflict: destination holds a different archive", "incoming zh:2"} {
		if !strings.Contains(strings.ReplaceAll(view, "\n", " "), want) {
			t.Errorf("job Details lack %q:\n%s", want, view)
		}
	}
	m.ShowJob(&engine.TrackedJob{Info: engine.JobInfo{Package: pkg(), Size: 2000}, State: engine.Done, Bytes: 2000, Elapsed: 1500 * time.Millisecond,
		Checks: []hashing.Check{{Source: hashing.Source{Kind: hashing.SourceRegistrySigned}, Scheme: hashing.SchemeZip, Status: hashing.Match}}}, "[1] a", "[2] b")
	if view := ansi.Strip(m.View()); !strings.Contains(view, "done · 2.0 kB in 1.5s") || !strings.Contains(view, "✓ zh signed SHA256SUMS") {
		t.Errorf("done job:\n%s", view)
	}
	m.ShowCell(nil)
	if m.View() != "" {
		t.Errorf("nothing to show, yet %q", m.View())
	}
}

func ptr[T any](v T) *T { return &v }

// TestSigner: where provenance names who signed the package, Details says
// so, for a verified cell and for a job.
func TestSigner(t *testing.T) {
	signer := &provenance.Signer{KeyID: "34365D9472D7468F", Fingerprint: "C874011F0AB405110D02105534365D9472D7468F", Source: "https://registry.terraform.io/v1/providers/acme/cloud/2.0.0/download/linux/amd64"}
	index := hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: "2.0.0.json"}
	h1 := hashing.Hash("h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	ok := &sync.Finding{Package: pkg(), Status: sync.StatusOK, Signer: signer, Result: &hashing.Result{
		Sums: hashing.Sums{H1: h1}, Checks: []hashing.Check{{Source: index, Scheme: hashing.SchemeH1, Status: hashing.Match}},
	}}
	packed := &backends.Archive{Package: pkg(), Size: 1234, Evidence: []hashing.Evidence{{Source: index, Hashes: []hashing.Hash{h1}}}}
	m := pane(60, 40)
	m.ShowCell(&Cell{Package: pkg(), Mirrors: []Mirror{{Number: 1, Name: "./a", Mark: theme.MarkVerified, Archive: packed, Verify: ok, Origin: "verify"}}})
	view := ansi.Strip(m.View())
	for _, want := range []string{"    ✓ signed by key 34365D9472D7468F", "      fingerprint C874011F0AB405110D02105534365D9472D7468F"} {
		if !strings.Contains(view, want) {
			t.Errorf("cell Details lack %q:\n%s", want, view)
		}
	}
	job := &engine.TrackedJob{Info: engine.JobInfo{Package: pkg(), Signer: signer}, State: engine.Queued}
	m.ShowJob(job, "[1] registry://registry.terraform.io", "[2] ./a")
	if view := ansi.Strip(m.View()); !strings.Contains(view, "✓ signed by key 34365D9472D7468F") {
		t.Errorf("job Details do not name the signer:\n%s", view)
	}
}

// A place's error text with terminal escapes is shown written out: the pane
// never sends a place's control characters to the terminal.
func TestNoTerminalEscapesFromAPlace(t *testing.T) {
	cell := &Cell{Package: pkg(), Mirrors: []Mirror{
		{Number: 1, Name: "https://m.example/", Mark: theme.MarkError, Err: errors.New("HTTP 503: \x1b]0;pwned\x07\x1b[2J gone")},
	}}
	m := pane(60, 20)
	m.ShowCell(cell)
	raw := m.View()
	if strings.Contains(raw, "\x1b]0;pwned") || strings.Contains(raw, "\x1b[2J") || strings.Contains(raw, "\x07") {
		t.Fatalf("the pane passes a place's control characters to the terminal:\n%q", raw)
	}
	view := ansi.Strip(raw)
	if !strings.Contains(view, `\x1b[2J gone`) {
		t.Fatalf("the error is not shown written out:\n%s", view)
	}
}
