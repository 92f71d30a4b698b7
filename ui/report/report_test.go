package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/report"
)

func pkg(t *testing.T) backends.Package {
	t.Helper()
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	v, _ := backends.ParseVersion("1.2.3")
	plat, _ := backends.ParsePlatform("linux_amd64")
	return backends.Package{Provider: p, Version: v, Platform: plat}
}

func events(t *testing.T) []engine.Event {
	info := engine.JobInfo{ID: 1, Package: pkg(t), Src: "registry://example.com", Dst: "./m", Size: 100}
	check := hashing.Check{Source: hashing.Source{Kind: hashing.SourceRegistrySigned, Detail: "key ABC"}, Scheme: hashing.SchemeZip, Status: hashing.Match}
	return []engine.Event{
		engine.JobQueued{Job: info},
		engine.JobStarted{ID: 1, Attempt: 1},
		engine.JobProgress{ID: 1, Bytes: 50, Total: 100, Rate: 1000},
		engine.JobRetrying{ID: 1, Attempt: 1, Err: errors.New("reset"), Delay: time.Second},
		engine.HashChecked{ID: 1, Check: check},
		engine.JobDone{ID: 1, Bytes: 100, Verified: true, Result: hashing.Result{Checks: []hashing.Check{check}}},
		engine.IndexWritten{Dst: "./m", Provider: pkg(t).Provider},
		engine.Idle{},
	}
}

// Every event is one JSON object on its own line with a "type". The lines
// are held until the run has no event ready (Idle), and written together.
func TestJSONLines(t *testing.T) {
	var out bytes.Buffer
	r := report.NewSyncReporter(&out, report.SyncOptions{Mode: report.JSONLines, Width: 80})
	for _, ev := range events(t) {
		r.Show(ev)
	}
	if out.Len() != 0 {
		t.Fatalf("lines written before Idle: %s", out.String())
	}
	r.Idle()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"queued", "started", "progress", "retrying", "hash_checked", "done", "index_written", "idle"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, l)
		}
		if m["type"] != want[i] {
			t.Errorf("line %d: type %v, want %s", i, m["type"], want[i])
		}
		if want[i] != "idle" && want[i] != "index_written" && m["provider"] != "example.com/acme/alpha" {
			t.Errorf("line %d lacks the provider: %s", i, l)
		}
	}
}

// Plain mode prints one line per ending, naming the package and the checks.
func TestPlainLines(t *testing.T) {
	var out bytes.Buffer
	r := report.NewSyncReporter(&out, report.SyncOptions{Mode: report.Plain, Width: 80})
	for _, ev := range events(t) {
		r.Show(ev)
	}
	r.Show(engine.JobFailed{ID: 1, Err: errors.New("h1 mismatch against mirror index")})
	got := out.String()
	for _, want := range []string{
		"↻ example.com/acme/alpha 1.2.3 linux_amd64: attempt 1 failed, retrying in 1s: reset",
		"✓ example.com/acme/alpha 1.2.3 linux_amd64  100 B  zh ✓ signed SHA256SUMS (key key ABC)",
		"✗ example.com/acme/alpha 1.2.3 linux_amd64: h1 mismatch against mirror index",
	} {
		if !strings.Contains(got, strings.Replace(want, "key key", "key", 1)) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b[") {
		t.Error("plain output has escape sequences")
	}
}

// Live mode keeps success lines within the terminal's width.
func TestLiveFitsWidth(t *testing.T) {
	var out bytes.Buffer
	r := report.NewSyncReporter(&out, report.SyncOptions{Mode: report.Live, Width: 40})
	for _, ev := range events(t) {
		r.Show(ev)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		clean := l // the part after the last clear-screen sequence
		if i := strings.LastIndex(l, "\x1b[J"); i >= 0 {
			clean = l[i+3:]
		}
		if w := lipgloss.Width(clean); w > 40 {
			t.Errorf("line of width %d > 40: %q", w, clean)
		}
	}
}

func TestHumanBytesAndSummary(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 18_900_000: "18.9 MB", 3_000_000_000: "3.0 GB"} {
		if got := report.HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	fs := []sync.Finding{{Status: sync.StatusOK}, {Status: sync.StatusOK}, {Status: sync.StatusMismatch}}
	if got := report.Summary(fs); got != "2 ok, 1 mismatch" {
		t.Errorf("Summary = %q", got)
	}
}

// The live line of a running job shows the percentage of the size its
// stream stated where the source listed none (it used to stay at 0.0%),
// with the rate and the time left; once every byte is in and the archive is
// still being hashed, it says so instead.
func TestLiveLineProgress(t *testing.T) {
	live := func(evs ...engine.Event) string {
		var out bytes.Buffer
		r := report.NewSyncReporter(&out, report.SyncOptions{Mode: report.Live, Width: 120, Redraw: time.Nanosecond})
		for _, ev := range evs {
			r.Show(ev)
		}
		return out.String()
	}
	info := engine.JobInfo{ID: 1, Package: pkg(t), Src: "registry://example.com", Dst: "./m", Size: -1}
	out := live(engine.JobQueued{Job: info}, engine.JobStarted{ID: 1, Attempt: 1},
		engine.JobProgress{ID: 1, Bytes: 50 << 20, Total: 200 << 20, Rate: 10 << 20})
	for _, want := range []string{"25.0%", "10.5 MB/s", "15s left"} {
		if !strings.Contains(out, want) {
			t.Errorf("live line lacks %q:\n%s", want, out)
		}
	}
	out = live(engine.JobQueued{Job: info}, engine.JobStarted{ID: 1, Attempt: 1},
		engine.JobProgress{ID: 1, Bytes: 200 << 20, Total: 200 << 20, Rate: 10 << 20, Phase: engine.PhaseHashing})
	if !strings.Contains(out, "hashing") || strings.Contains(out, "left") {
		t.Errorf("live line of a job being hashed:\n%s", out)
	}
}

// ls --json written a provider at a time (PackageRows) is the array
// SignedPackages writes of the whole listing, byte for byte.
func TestPackageRowsStreamedIsWhole(t *testing.T) {
	var as []backends.Archive
	for _, name := range []string{"example.com/acme/alpha", "example.com/acme/beta"} {
		p, _ := backends.ParseProvider(name)
		for _, ver := range []string{"2.0.0", "1.0.0"} {
			v, _ := backends.ParseVersion(ver)
			for i, plat := range []string{"linux_amd64", "windows_arm64"} {
				pl, _ := backends.ParsePlatform(plat)
				a := backends.Archive{Package: backends.Package{Provider: p, Version: v, Platform: pl}, Size: int64(100 * i)}
				a.Evidence = []hashing.Evidence{{Hashes: []hashing.Hash{hashing.Hash("zh:" + strings.Repeat(string(rune('a'+i)), 64))}}}
				as = append(as, a)
			}
		}
	}
	var whole, streamed bytes.Buffer
	if err := report.SignedPackages(&whole, as, nil, true); err != nil {
		t.Fatal(err)
	}
	rows := report.NewPackageRows(&streamed)
	for _, part := range [][]backends.Archive{as[:4], nil, as[4:]} {
		if err := rows.Add(part, nil); err != nil {
			t.Fatal(err)
		}
	}
	if rows.Len() != len(as) {
		t.Errorf("Len = %d, want %d", rows.Len(), len(as))
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if whole.String() != streamed.String() {
		t.Errorf("streamed:\n%s\nwhole:\n%s", streamed.String(), whole.String())
	}
	var parsed []report.PackageJSON
	if err := json.Unmarshal(streamed.Bytes(), &parsed); err != nil || len(parsed) != len(as) {
		t.Errorf("not an array of %d packages: %v", len(as), err)
	}
	var none bytes.Buffer
	empty := report.NewPackageRows(&none)
	if empty.Close(); none.String() != "[]\n" {
		t.Errorf("no packages: %q, want []", none.String())
	}
}

// verify's findings written a batch at a time (FindingWriter) are the
// table and the array Findings writes of all of them, byte for byte, and
// the counts Summary makes.
func TestFindingWriterBatchesAreWhole(t *testing.T) {
	p := pkg(t)
	other := p
	other.Platform, _ = backends.ParsePlatform("windows_arm64")
	fs := []sync.Finding{
		{Package: p, Status: sync.StatusOK, Detail: "zh ✓ mirror index"},
		{Package: other, Status: sync.StatusMismatch, Detail: "zh: differs"},
		{Status: sync.StatusError, Detail: "audit: a stray file"},
		{Package: p, Status: sync.StatusOK, Detail: "a\ttab makes it tabulated"},
	}
	for _, asJSON := range []bool{false, true} {
		for _, n := range []int{3, 4} { // without and with the tabbed cell
			var whole, batched bytes.Buffer
			if err := report.Findings(&whole, fs[:n], asJSON); err != nil {
				t.Fatal(err)
			}
			fw := report.NewFindingWriter(&batched, asJSON)
			for _, b := range [][]sync.Finding{fs[:1], nil, fs[1:n]} {
				if err := fw.Add(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			if whole.String() != batched.String() {
				t.Errorf("json %v, %d findings: batched\n%s\nwhole\n%s", asJSON, n, batched.String(), whole.String())
			}
			if fw.Summary() != report.Summary(fs[:n]) || fw.Len() != n || fw.Count(sync.StatusOK) != n-2 {
				t.Errorf("counts: %s (%d, %d ok), want %s", fw.Summary(), fw.Len(), fw.Count(sync.StatusOK), report.Summary(fs[:n]))
			}
		}
	}
}
