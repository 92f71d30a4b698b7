package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func pkg(t *testing.T, version, platform string) backends.Package {
	t.Helper()
	p, _ := backends.ParseProvider("registry.terraform.io/acme/cloud")
	v, err := backends.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	plat, err := backends.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	return backends.Package{Provider: p, Version: v, Platform: plat}
}

func newPane(w, h int) Model {
	s := theme.New()
	m := New(&s, map[string]int{"./dst": 2})
	m.SetSize(w, h)
	return m
}

var index = hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: "x/1.0.0.json"}

// TestLifecycle feeds the events of four jobs, as the engine sends them, and
// reads the pane.
func TestLifecycle(t *testing.T) {
	m := newPane(100, 8)
	for i, plat := range []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"} {
		m.Apply(engine.JobQueued{Job: engine.JobInfo{ID: engine.JobID(i + 1), Package: pkg(t, "1.0.0", plat), Src: "./src", Dst: "./dst", Size: 1000}})
	}
	m.Apply(engine.JobStarted{ID: 1, Attempt: 1})
	m.Apply(engine.JobProgress{ID: 1, Bytes: 500, Total: 1000, Rate: 2e6})
	m.Apply(engine.JobStarted{ID: 2, Attempt: 1})
	m.Apply(engine.HashChecked{ID: 2, Check: hashing.Check{Source: index, Scheme: hashing.SchemeH1, Status: hashing.Match}})
	m.Apply(engine.HashChecked{ID: 2, Check: hashing.Check{Source: index, Scheme: hashing.SchemeZip, Status: hashing.Match}})
	m.Apply(engine.JobDone{ID: 2, Bytes: 1000, Verified: true})
	m.Apply(engine.JobStarted{ID: 3, Attempt: 1})
	conflict := &backends.OpError{Op: "commit", Side: "destination", Place: "./dst", Err: fmt.Errorf("mirror ./dst: %w", backends.ErrConflict)}
	m.Apply(engine.JobFailed{ID: 3, Err: conflict})

	if got, want := m.Title(), "Jobs 1 running · 1 queued · 1 done · 1 failed"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	view := ansi.Strip(m.View())
	for _, want := range []string{
		"cloud 1.0.0 linux_amd64", "→ 2", "50%", "2.0 MB/s", // running
		"✓ cloud 1.0.0 linux_arm64", "h1 ✓ zh ✓ mirror index", // done, verified
		"✗ cloud 1.0.0 darwin_arm64", "conflict: destination holds a different archive (queue again with f to force)",
		"· cloud 1.0.0 windows_amd64", "queued",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("pane lacks %q:\n%s", want, view)
		}
	}
	// Unfocused, the pane follows the work: the cursor is on the running job.
	if j, _ := m.Selected(); j.Info.ID != 1 {
		t.Errorf("unfocused cursor on job %d, want the first unfinished", j.Info.ID)
	}
	m.Focus(true)
	m, _ = m.Update(keyDown())
	m, _ = m.Update(keyDown())
	if j, _ := m.Selected(); j.Info.ID != 3 {
		t.Errorf("focused cursor on job %d after two downs", j.Info.ID)
	}
}

func TestChecks(t *testing.T) {
	m := newPane(100, 5)
	signed := hashing.Source{Kind: hashing.SourceRegistrySigned}
	for _, tc := range []struct {
		name     string
		checks   []hashing.Check
		verified bool
		want     string
	}{
		{"index", []hashing.Check{{Source: index, Scheme: "h1:", Status: hashing.Match}, {Source: index, Scheme: "zh:", Status: hashing.Match}}, true, "h1 ✓ zh ✓ mirror index"},
		{"two sources", []hashing.Check{{Source: signed, Scheme: "zh:", Status: hashing.Match}, {Source: index, Scheme: "h1:", Status: hashing.Match}}, true, "zh ✓ signed SHA256SUMS, h1 ✓ mirror index"},
		{"a mismatch", []hashing.Check{{Source: index, Scheme: "h1:", Status: hashing.Mismatch}}, false, "h1 ✗ mirror index"},
		{"nothing stated", []hashing.Check{{Source: index, Status: hashing.Unchecked}}, false, "◐ copied; nothing stated to verify it against"},
		{"no checks", nil, false, "◐ copied; nothing stated to verify it against"},
	} {
		if got := ansi.Strip(m.Checks(tc.checks, tc.verified)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReason(t *testing.T) {
	mismatch := fmt.Errorf("%w: h1 mismatch against mirror index", hashing.ErrHashMismatch)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.Canceled, "canceled"},
		{&backends.OpError{Op: "commit", Place: "./d", Err: backends.ErrConflict}, "conflict: destination holds a different archive (queue again with f to force)"},
		{&backends.OpError{Op: "verify", Side: "source", Place: "./s", Err: mismatch}, "hash mismatch: h1 mismatch against mirror index"},
		{&backends.OpError{Op: "open", Side: "source", Place: "https://m/", Err: errors.New("HTTP 503")}, "open (source https://m/): HTTP 503"},
		{errors.New("plain"), "plain"},
	} {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestUnknownSizeAndNarrow(t *testing.T) {
	m := newPane(50, 4)
	m.Apply(engine.JobQueued{Job: engine.JobInfo{ID: 1, Package: pkg(t, "1.0.0", "linux_amd64"), Dst: "./elsewhere", Size: -1}})
	m.Apply(engine.JobStarted{ID: 1, Attempt: 2})
	m.Apply(engine.JobProgress{ID: 1, Bytes: 4096, Total: -1, Rate: 1000})
	view := ansi.Strip(m.View())
	for _, want := range []string{"4.1 kB", "→ ?", "attempt 2"} {
		if !strings.Contains(view, want) {
			t.Errorf("pane lacks %q:\n%s", want, view)
		}
	}
	empty := newPane(0, 0)
	_ = empty.View()
	if _, ok := empty.Selected(); ok {
		t.Errorf("no jobs, yet a selection")
	}
}

func keyDown() tea.KeyPressMsg { return tea.KeyPressMsg{Code: tea.KeyDown} }

// TestModuleJobRow: a module job has no provider package; its row names it
// by its address, cut from the left so the version stays.
func TestModuleJobRow(t *testing.T) {
	m := newPane(60, 4)
	for i, v := range []string{"1.0.0", "2.0.0"} {
		m.Apply(engine.JobQueued{Job: engine.JobInfo{ID: engine.JobID(1 + i), Name: "registry.example.com/acme/network/aws " + v, Src: "registry://registry.example.com", Dst: "./dst", Size: -1}})
	}
	m.Apply(engine.JobStarted{ID: 1, Attempt: 1})
	m.Apply(engine.JobDone{ID: 1, Bytes: 300})
	v := ansi.Strip(m.View())
	for _, want := range []string{"network/aws 1.0.0 → 2", "network/aws 2.0.0 → 2", "queued"} {
		if !strings.Contains(v, want) {
			t.Errorf("pane lacks %q:\n%s", want, v)
		}
	}
	empty := newPane(60, 4)
	if v := ansi.Strip(empty.View()); !strings.Contains(v, "select cells") {
		t.Errorf("default empty text: %q", v)
	}
	empty.Empty = " No jobs: select versions"
	if v := ansi.Strip(empty.View()); v != " No jobs: select versions" {
		t.Errorf("empty text %q", v)
	}
}

// TestPaging: a long queue pages like the lists do, and the cursor stays
// on screen.
func TestPaging(t *testing.T) {
	m := newPane(100, 5)
	for i := range 40 {
		m.Apply(engine.JobQueued{Job: engine.JobInfo{ID: engine.JobID(i + 1), Package: pkg(t, fmt.Sprintf("1.%d.0", i), "linux_amd64"), Dst: "./dst", Size: 1}})
	}
	m.Focus(true)
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	j, _ := m.Selected()
	if j.Info.ID != 11 {
		t.Errorf("two pages down from the first job: job %d, want 11", j.Info.ID)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "cloud 1.10.0 linux_amd64") {
		t.Errorf("the cursor's job is off screen:\n%s", v)
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	if j, _ := m.Selected(); j.Info.ID != 40 {
		t.Errorf("G: job %d, want the last", j.Info.ID)
	}
}

// A running job's row shows the percentage of the size its stream stated
// where the source listed none, with the time left; once every byte is in
// and the archive is being hashed, "hashing".
func TestRowProgressAndHashing(t *testing.T) {
	m := newPane(120, 4)
	m.Apply(engine.JobQueued{Job: engine.JobInfo{ID: 1, Package: pkg(t, "1.0.0", "linux_amd64"), Src: "registry://x", Dst: "./dst", Size: -1}})
	m.Apply(engine.JobQueued{Job: engine.JobInfo{ID: 2, Package: pkg(t, "1.0.0", "linux_arm64"), Src: "registry://x", Dst: "./dst", Size: -1}})
	m.Apply(engine.JobStarted{ID: 1, Attempt: 1})
	m.Apply(engine.JobProgress{ID: 1, Bytes: 250, Total: 1000, Rate: 50})
	m.Apply(engine.JobStarted{ID: 2, Attempt: 1})
	m.Apply(engine.JobProgress{ID: 2, Bytes: 1000, Total: 1000, Rate: 50, Phase: engine.PhaseHashing})
	view := strings.Split(ansi.Strip(m.View()), "\n")
	if len(view) < 2 || !strings.Contains(view[0], "25%") || !strings.Contains(view[0], "15s left") {
		t.Errorf("row of a download with a stated size:\n%s", strings.Join(view, "\n"))
	}
	if len(view) < 2 || !strings.Contains(view[1], "100%") || !strings.Contains(view[1], "hashing") || strings.Contains(view[1], "/s") {
		t.Errorf("row of a job being hashed:\n%s", strings.Join(view, "\n"))
	}
}
