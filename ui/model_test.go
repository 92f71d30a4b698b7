package ui

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/demo"
	"github.com/tfmirror/tfmirror/ui/theme"
)

const (
	ok   = theme.MarkStated // present, its stated hashes agreeing
	vf   = theme.MarkVerified
	miss = theme.MarkMissing
	diff = theme.MarkDiffers
	fail = theme.MarkFailed
	unv  = theme.MarkUnverified
)

func marksAt(t *testing.T, m Model, version, platform string) []theme.Mark {
	t.Helper()
	versions, platforms, marks := matrixData(m)
	r, c := indexOf(versions, version), indexOf(platforms, platform)
	if r < 0 || c < 0 {
		t.Fatalf("no cell %s %s in the matrix (versions %v, platforms %v)", version, platform, versions, platforms)
	}
	return marks[r][c]
}

func TestModelListsAndCompares(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("the first provider to load", loaded)

	if got := h.m.prov().current.String(); got != demo.Host+"/acme/cloud" {
		t.Fatalf("current provider = %s, want the first one, acme/cloud", got)
	}
	if h.m.prov().list.Len() != 4 {
		t.Errorf("providers = %d, want the union of both mirrors, 4", h.m.prov().list.Len())
	}
	versions, platforms, _ := matrixData(h.m)
	if want := []string{"2.1.0", "2.0.0", "1.2.0", "1.1.0", "1.0.0"}; !slices.Equal(versions, want) {
		t.Errorf("versions = %v, want newest first %v", versions, want)
	}
	if want := []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms = %v, want %v", platforms, want)
	}
	for _, tc := range []struct {
		version, platform string
		want              []theme.Mark
	}{
		{"2.1.0", "linux_amd64", []theme.Mark{ok, miss}},   // a version the second lacks
		{"2.0.0", "darwin_arm64", []theme.Mark{ok, miss}},  // a platform it lacks
		{"2.0.0", "linux_amd64", []theme.Mark{ok, diff}},   // rebuilt with other content
		{"2.0.0", "linux_arm64", []theme.Mark{ok, ok}},     // the same in both
		{"1.0.0", "windows_amd64", []theme.Mark{ok, miss}}, // never in the second
	} {
		if got := marksAt(t, h.m, tc.version, tc.platform); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: marks %v, want %v", tc.version, tc.platform, got, tc.want)
		}
	}
	if !strings.Contains(h.screen(), "acme/cloud") || !strings.Contains(h.screen(), "2.1.0") {
		t.Errorf("screen lacks the provider or its newest version:\n%s", h.screen())
	}

	// Another provider, chosen with the keyboard, loads after the cursor
	// rests; the second mirror lacks acme/queue altogether.
	h.press("down", "down", "down")
	h.until("acme/queue to load", func(m Model) bool { return loaded(m) && m.prov().current.Type == "queue" })
	if got := marksAt(t, h.m, "0.9.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, miss}) {
		t.Errorf("acme/queue 0.9.0: marks %v, want present in the first only", got)
	}

	// Taking the second mirror out of the comparison leaves one mark per cell.
	h.press("2")
	if got := h.m.prov().grid.Data().PerCell; got != 1 {
		t.Errorf("marks per cell after toggling mirror 2 = %d, want 1", got)
	}
	h.press("1") // the last compared mirror stays
	if got := h.m.prov().grid.Data().PerCell; got != 1 || h.m.status().kind != statusWarn {
		t.Errorf("toggling the last compared mirror: %d marks per cell, status %q", got, h.m.status().text)
	}
}

func TestModelQueueMissingCell(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("enter") // providers -> matrix
	if h.m.focus != paneMatrix {
		t.Fatalf("enter on a provider should focus the matrix")
	}
	h.gotoCell("2.1.0", "darwin_arm64")
	h.press("enter")
	if h.m.dialog == nil || h.m.dialog.Confirming() {
		t.Fatalf("enter should ask for a destination first (two writable mirrors)")
	}
	if got := h.m.dialog.Dest().Num; got != 2 {
		t.Errorf("proposed destination = mirror %d, want the one lacking the package (2)", got)
	}
	h.press("enter")
	if !h.m.dialog.Confirming() || len(dialogPlan(h.m).copy) != 1 {
		t.Fatalf("confirm step: plan %+v", dialogPlan(h.m))
	}
	h.press("enter")
	h.until("the job to end", jobsEnded(1))
	if st := stateOf(h.m, 0); st != engine.Done {
		t.Fatalf("job state %s; status %q", st, h.m.status().text)
	}
	j := h.m.jobs.Tracker().Jobs[h.m.jobs.Tracker().Order[0]]
	var checks []string
	for _, c := range j.Checks {
		checks = append(checks, string(c.Scheme)+string(c.Status))
	}
	// The source's index states h1: and zh:; the zh: pins the bytes, so
	// nothing is inflated for h1:.
	if !slices.Equal(checks, []string{"zh:ok"}) {
		t.Errorf("hash checks %v, want zh: matched against the source's index", checks)
	}
	// The archive is on disk, byte for byte the source's.
	want, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "2.1.0", "darwin_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(archivePath(w.Secondary, "acme/cloud", "2.1.0", "darwin_arm64"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("destination archive: err %v, equal %v", err, bytes.Equal(got, want))
	}
	// The cell turns present once the destination is listed again, and the
	// screen says the hashes were verified.
	h.until("the cell to update", func(m Model) bool {
		return idle(m) && slices.Equal(marksAt(t, m, "2.1.0", "darwin_arm64"), []theme.Mark{ok, vf})
	})
	if s := h.screen(); !strings.Contains(s, "zh ✓ mirror index") {
		t.Errorf("jobs pane lacks the verification:\n%s", s)
	}
	// The destination's index now states the new archive's hashes.
	l := h.m.prov().cache[h.m.prov().current][1]
	a, okA := l.data.archive("2.1.0", "darwin_arm64")
	if !okA || len(a.Hashes()) == 0 {
		t.Errorf("destination re-listed without stated hashes: %+v", a)
	}
}

func TestModelConflictNeedsForce(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.0.0", "linux_amd64")
	h.press("enter")
	// Both mirrors hold it, each differing from the other; the work is
	// where the cell is marked: the second, which differs from [1]'s.
	if got := h.m.dialog.Dest().Num; got != 2 {
		t.Errorf("proposed destination = mirror %d, want the one that differs from the reference (2)", got)
	}
	h.press("enter")
	p := dialogPlan(h.m)
	if len(p.differ) != 1 || len(p.copy) != 0 {
		t.Fatalf("plan for the differing cell: %d differ, %d copy; want 1, 0", len(p.differ), len(p.copy))
	}
	h.press("enter") // without force: nothing to do, and the dialog says what would
	if h.m.dialog == nil || len(h.m.jobs.Tracker().Order) != 0 || !strings.Contains(h.screen(), "1 differs: press f to replace it") ||
		strings.Contains(h.screen(), "already has everything") {
		t.Fatalf("confirming a differing cell without force should stay and explain:\n%s", h.screen())
	}
	h.press("f")
	if !h.m.dialog.Forced() || !strings.Contains(h.screen(), "REPLACED") {
		t.Fatalf("f should arm force and say what it replaces:\n%s", h.screen())
	}
	h.press("enter")
	h.until("the forced job", jobsEnded(1))
	if st := stateOf(h.m, 0); st != engine.Done {
		t.Fatalf("forced job: %s (%q)", st, h.m.status().text)
	}
	want, _ := os.ReadFile(archivePath(w.Primary, "acme/cloud", "2.0.0", "linux_amd64"))
	got, _ := os.ReadFile(archivePath(w.Secondary, "acme/cloud", "2.0.0", "linux_amd64"))
	if !bytes.Equal(got, want) {
		t.Errorf("the differing archive was not replaced by the source's")
	}
	h.until("the cell to agree", func(m Model) bool {
		return idle(m) && slices.Equal(marksAt(t, m, "2.0.0", "linux_amd64"), []theme.Mark{ok, vf})
	})
}

func TestModelSelection(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.press("r") // the newest version, every platform
	h.gotoCell("1.0.0", "windows_amd64")
	h.press("c") // windows_amd64, every version
	h.press("space")
	sel := h.m.prov().grid.Selection()
	if len(sel) != 5+5-1-1 { // row + column - the shared cell - the toggled-off cursor cell
		t.Fatalf("selection = %d cells: %v", len(sel), sel)
	}
	h.press("enter", "down", "enter")
	p := dialogPlan(h.m)
	// The row 2.1.0 (5, all missing) and windows_amd64 for 2.0.0..1.1.0 (3 more).
	if len(p.copy) != 8 || p.present != 0 || len(p.differ) != 0 {
		t.Errorf("plan: %d to copy, %d present, %d differ; want 8, 0, 0", len(p.copy), p.present, len(p.differ))
	}
	h.press("esc")
	if h.m.dialog != nil || len(h.m.prov().grid.Selection()) != 8 {
		t.Errorf("esc should close the dialog and keep the selection")
	}
	h.press("esc")
	if len(h.m.prov().grid.Selection()) != 0 {
		t.Errorf("esc in the matrix should clear the selection")
	}
}

func TestModelVerify(t *testing.T) {
	w := newWorld(t)
	// Swap the zip behind the primary's index, as a tampered mirror would.
	bad := archivePath(w.Primary, "acme/cloud", "1.0.0", "linux_amd64")
	other, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "1.1.0", "linux_amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, other, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, w.config(), 160, 48)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("1.0.0", "linux_amd64")
	if got := marksAt(t, h.m, "1.0.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, ok}) {
		t.Fatalf("before verifying, the stated hashes agree: %v", got)
	}
	h.press("v")
	if len(h.m.prov().verifying) != 2 {
		t.Fatalf("v should verify the cell in both mirrors, verifying %d", len(h.m.prov().verifying))
	}
	h.until("verification", func(m Model) bool { return len(m.prov().verifying) == 0 })
	if got := marksAt(t, h.m, "1.0.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{fail, vf}) {
		t.Errorf("after verifying, marks %v, want the tampered one failed, the other verified", got)
	}
	if h.m.status().kind != statusBad || !strings.Contains(h.m.status().text, "1 failed") {
		t.Errorf("status %q, want the failure", h.m.status().text)
	}
	s := h.screen()
	for _, want := range []string{"✗ verified: mismatch", "h1 mismatch"} {
		if !strings.Contains(s, want) {
			t.Errorf("Details lack %q:\n%s", want, s)
		}
	}
	// A good cell verifies, and Details say against what.
	h.gotoCell("1.1.0", "linux_amd64")
	h.press("v")
	h.until("verification", func(m Model) bool { return len(m.prov().verifying) == 0 })
	if s := h.screen(); !strings.Contains(s, "✓ h1 mirror index") || !strings.Contains(s, "✓ zh mirror index") {
		t.Errorf("Details lack the matched checks:\n%s", s)
	}
}

func TestModelCancelRetryAndQuit(t *testing.T) {
	w := newWorld(t)
	// A source slow enough that the job is still running when cancelled.
	release := make(chan struct{})
	net := serveNet(t, w.Primary, func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".zip") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	defer close(release)
	cfg := Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}, {Reader: w.secondary, Kind: "fs"}}}
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "linux_amd64")
	h.press("enter", "enter") // one writable mirror: straight to confirm
	h.until("the job to run", func(m Model) bool {
		return len(m.jobs.Tracker().Order) == 1 && stateOf(m, 0) == engine.Running
	})
	h.press("tab") // matrix -> jobs
	if h.m.focus != paneJobs {
		t.Fatalf("tab should focus the jobs pane")
	}
	h.press("x")
	h.until("the cancel", func(m Model) bool { return stateOf(m, 0) == engine.Canceled })
	if _, err := os.Stat(archivePath(w.Secondary, "acme/cloud", "2.1.0", "linux_amd64")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled job left the archive: %v", err)
	}
	h.press("R")
	h.until("the retry", func(m Model) bool { return stateOf(m, 0) == engine.Running })

	h.press("q")
	if !h.m.confirmQuit || !strings.Contains(h.m.status().text, "quit and cancel") {
		t.Fatalf("q with a job running should ask first, status %q", h.m.status().text)
	}
	// The key bar answers the question, not the pane's keys (it said
	// "space select • enter queue to…", and enter quits here).
	if lines := strings.Split(h.screen(), "\n"); !strings.Contains(lines[len(lines)-1], "y/enter quit") {
		t.Errorf("the key bar under the quit question: %q", lines[len(lines)-1])
	}
	h.press("n")
	if h.quit || h.m.confirmQuit {
		t.Fatalf("n should keep the UI open")
	}
	h.press("q", "y")
	h.until("the quit", func(Model) bool { return h.quit })
	if stateOf(h.m, 0) != engine.Canceled {
		t.Errorf("quitting should cancel the running job, state %s", stateOf(h.m, 0))
	}
	assertNoStaging(t, w.Secondary)
}

func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tfmirror-tmp-") {
			t.Errorf("staging file left behind: %s", p)
		}
		return nil
	})
}

// slowIndex is a filesystem mirror whose index documents are written only
// once the test says so.
type slowIndex struct {
	*fs.Mirror
	release chan struct{}
}

func (s slowIndex) Flush(ctx context.Context, p backends.Provider) error {
	<-s.release
	return s.Mirror.Flush(ctx, p)
}

// TestModelQuitWaitsForIndexDocuments quits after the last job has landed
// but before the destination's index documents are written: the UI waits
// for them, so no staging file is left and the mirror lists what landed.
func TestModelQuitWaitsForIndexDocuments(t *testing.T) {
	w := newWorld(t)
	dst := slowIndex{Mirror: w.secondary, release: make(chan struct{})}
	release := gosync.OnceFunc(func() { close(dst.release) })
	cfg := Config{Mirrors: []Mirror{{Reader: w.primary, Kind: "fs"}, {Reader: dst, Kind: "fs"}}}
	h := newHarness(t, cfg, 120, 40)
	t.Cleanup(release) // before the engine is stopped, should the test end early
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "darwin_arm64")
	h.press("enter", "enter", "enter")
	h.until("the job to land", jobsEnded(1))
	if st := stateOf(h.m, 0); st != engine.Done {
		j := h.m.jobs.Tracker().Jobs[h.m.jobs.Tracker().Order[0]]
		t.Fatalf("the job ended %v, not done: %v", st, j.Err)
	}
	h.press("q")
	if !h.m.quitting || h.m.confirmQuit {
		t.Fatalf("q while the index documents are still to be written should wait for them, not quit at once (quitting %v)", h.m.quitting)
	}
	release()
	h.until("the quit", func(Model) bool { return h.quit })
	assertNoStaging(t, w.Secondary)
	v, _ := backends.ParseVersion("2.1.0")
	as, err := w.secondary.Archives(t.Context(), h.m.prov().current, v)
	if err != nil || len(as) != 1 || len(as[0].Hashes()) == 0 {
		t.Errorf("the destination's index does not state the archive that landed: %v %+v", err, as)
	}
}

func TestModelQuitWithoutJobs(t *testing.T) {
	w := newWorld(t)
	for _, k := range []string{"q", "ctrl+c"} {
		h := newHarness(t, w.config(), 100, 30)
		h.until("load", loaded)
		h.press(k)
		h.until("quit", func(Model) bool { return h.quit })
	}
}

func TestModelSlowNetworkMirrorKeepsInputLive(t *testing.T) {
	w := newWorld(t)
	release := make(chan struct{})
	var listed atomic.Int32 // times the network mirror was asked for acme/cloud
	asked := make(chan struct{}, 1)
	net := serveNet(t, w.Primary, func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "index.json") {
			if strings.HasSuffix(r.URL.Path, "/acme/cloud/index.json") {
				listed.Add(1)
				select {
				case asked <- struct{}{}:
				default:
				}
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	cfg := Config{Mirrors: []Mirror{{Reader: w.secondary, Kind: "fs"}, {Reader: net, Kind: "net"}}}
	h := newHarness(t, cfg, 120, 40)
	h.until("the fs mirror's listing", func(m Model) bool {
		l := m.prov().cache[m.prov().current]
		return l != nil && l[0] != nil && l[0].state == stateLoaded
	})
	if !h.m.busy() || !strings.Contains(h.screen(), "listing") {
		t.Errorf("while the network mirror is listed, the screen should say so:\n%s", h.screen())
	}
	select {
	case <-asked: // the network mirror's listing is under way
	case <-time.After(time.Minute):
		t.Fatal("the network mirror was never asked for acme/cloud")
	}
	// Input is handled while the listing hangs.
	before, _ := h.m.prov().list.Selected()
	h.press("down")
	after, _ := h.m.prov().list.Selected()
	if before == after {
		t.Errorf("the provider cursor did not move while a listing was pending")
	}
	tick := loadTickMsg{to(viewProviders), h.m.prov().loadToken} // the one "down" set off
	h.press("up")
	// Back on the first provider before the tick for the second fired: the
	// tick, when it comes, must not cancel the listing still pending.
	h.send(tick)
	close(release)
	h.until("both listings", func(m Model) bool { return loaded(m) && m.prov().current == before })
	if got := marksAt(t, h.m, "2.1.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{miss, ok}) {
		t.Errorf("marks %v: the network mirror serves 2.1.0, the fs mirror lacks it", got)
	}
	if n := listed.Load(); n != 1 {
		t.Errorf("acme/cloud was listed %d times: a tick for a provider the cursor had left cancelled its listing", n)
	}
}

func TestModelNamedProvidersForNetworkMirror(t *testing.T) {
	w := newWorld(t)
	net := serveNet(t, w.Primary, nil)
	dns, _ := backends.ParseProviderFilter(demo.Host + "/acme/dns")
	cfg := Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}}}
	cfg.Selection.Providers = []backends.ProviderFilter{dns}

	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	if got := h.m.prov().current.String(); got != demo.Host+"/acme/dns" {
		t.Fatalf("current = %s, want the named provider", got)
	}
	if got := marksAt(t, h.m, "3.2.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok}) {
		t.Errorf("marks %v: the network mirror's index states the hashes", got)
	}
	if h.m.prov().mirrors[0].noCatalogue != true {
		t.Errorf("the network mirror should be known to have no catalogue")
	}

	// Without a named provider the UI says how to name one.
	h2 := newHarness(t, Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}}}, 120, 40)
	h2.until("the catalogue answer", func(m Model) bool { return m.prov().mirrors[0].listed })
	if s := h2.screen(); !strings.Contains(s, "cannot list its providers") || !strings.Contains(s, "--provider") {
		t.Errorf("screen should explain how to name providers:\n%s", s)
	}
}

func TestModelBackendErrorsShowAndDoNotCrash(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	// The directory vanishes after it was opened.
	if err := os.RemoveAll(w.Secondary); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	if h.m.status().kind != statusBad || !strings.Contains(h.m.status().text, "[2]") {
		t.Errorf("status %q, want the failing mirror named", h.m.status().text)
	}
	if h.m.prov().mirrors[1].err == nil {
		t.Errorf("the mirror's error should be kept")
	}
	// The first mirror still works.
	if got := marksAt(t, h.m, "2.1.0", "linux_amd64"); got[0] != ok {
		t.Errorf("marks %v", got)
	}
	if lines := strings.Split(h.screen(), "\n"); !strings.HasPrefix(lines[len(lines)-2], " ✗ [2] ") {
		t.Errorf("the status line should show the failure, marked as one without colour:\n%s", h.screen())
	}
}

func TestModelDropsLateResults(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	v := h.m.prov()
	before := v.grid.Data()
	stale := loadedMsg[backends.Provider, provHolding]{to: to(viewProviders), gen: 0, place: 1, item: v.current, err: errors.New("stale")}
	h.send(stale)
	after := v.grid.Data()
	if len(before.Rows) != len(after.Rows) || v.cache[v.current][1].state != stateLoaded || h.m.status().kind == statusBad {
		t.Errorf("a result of an overtaken load changed the state")
	}
	// And a load tick for a cursor that has moved on does nothing.
	if _, cmd := h.m.Update(loadTickMsg{to(viewProviders), v.loadToken + 7}); cmd != nil {
		t.Errorf("a stale load tick started a load")
	}
}

func TestModelFilterAndHelp(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("/")
	h.typeText("dns")
	if p, _ := h.m.prov().list.Selected(); p.Type != "dns" {
		t.Errorf("filtering for dns selected %s", p)
	}
	h.press("q") // typed into the filter, not quitting
	if h.quit {
		t.Fatal("q while filtering quit the UI")
	}
	h.press("backspace", "enter")
	h.until("dns to load", func(m Model) bool { return loaded(m) && m.prov().current.Type == "dns" })

	h.press("?")
	s := h.screen()
	for _, want := range []string{"Help", "filter", "next pane", "stated, not recomputed", "verification failed", "excluded by CLI config", "cannot list"} {
		if !strings.Contains(s, want) {
			t.Errorf("help lacks %q:\n%s", want, s)
		}
	}
	h.press("esc")
	if h.m.showHelp {
		t.Errorf("esc should close help")
	}
	// Matrix filter on versions.
	h.press("/", "esc")      // clear the provider filter
	h.press("down", "enter") // acme/legacy, then focus the matrix
	h.until("legacy", func(m Model) bool { return loaded(m) && m.prov().current.Type == "legacy" })
	h.press("/")
	h.typeText("0.2")
	if n := len(h.m.prov().grid.Data().Rows); n != 30 {
		t.Fatalf("the filter must not change the data: %d versions", n)
	}
	if c, _ := h.m.prov().grid.Cursor(); !strings.Contains(c.Row, "0.2") {
		t.Errorf("cursor on %s after filtering for 0.2", c.Row)
	}
	if s := h.screen(); !strings.Contains(s, "11 of 30 versions") {
		t.Errorf("filter status missing:\n%s", s)
	}
}

func TestModelLayout(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 80, 24)
	h.until("load", loaded)
	if h.m.lay.details {
		t.Errorf("at 80x24 Details fold away")
	}
	h.press("d")
	if !h.m.lay.details || !strings.Contains(h.screen(), "Details") {
		t.Errorf("d shows Details")
	}
	h.send(resize(160, 48))
	if !h.m.lay.details {
		t.Errorf("at 160x48 Details stay shown")
	}
	h.press("d")
	if h.m.lay.details {
		t.Errorf("d folds Details")
	}
	h.send(resize(40, 10))
	if s := h.screen(); !strings.Contains(s, "needs at least") {
		t.Errorf("a tiny terminal gets a message, not a broken layout: %q", s)
	}
	// Every line of every size fits the terminal.
	for _, sz := range [][2]int{{80, 24}, {100, 30}, {160, 48}, {61, 17}} {
		h.send(resize(sz[0], sz[1]))
		lines := strings.Split(h.screen(), "\n")
		if len(lines) != sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for i, l := range lines {
			if n := theme.Width(l); n > sz[0] {
				t.Errorf("%dx%d: line %d is %d wide: %q", sz[0], sz[1], i, n, l)
			}
		}
	}
}

func TestVerifyCmdHonoursCancellation(t *testing.T) {
	slots := make(chan struct{}, 1)
	slots <- struct{}{} // every slot taken
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg := verifyCmd(ctx, slots, verifyKey{}, nil, backends.Archive{}, hashing.Options{})().(verifiedMsg)
	if msg.finding.Status != sync.StatusError {
		t.Errorf("a cancelled wait for a slot should report an error, got %s", msg.finding.Status)
	}
}

// TestModelTransferFailsVerification queues an archive whose bytes the
// source's own index contradicts: the job fails with the reason in red, and
// the destination is left alone.
func TestModelTransferFailsVerification(t *testing.T) {
	w := newWorld(t)
	src := archivePath(w.Primary, "acme/cloud", "2.1.0", "darwin_arm64")
	swapped, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "2.1.0", "linux_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, w.config(), 160, 48)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "darwin_arm64")
	h.press("enter", "enter", "enter")
	h.until("the job to fail", jobsEnded(1))
	if st := stateOf(h.m, 0); st != engine.Failed {
		t.Fatalf("job state %s, want failed", st)
	}
	if h.m.status().kind != statusBad || !strings.Contains(h.m.status().text, "h1 mismatch against mirror index") {
		t.Errorf("status %q, want the mismatch", h.m.status().text)
	}
	if s := h.screen(); !strings.Contains(s, "✗ cloud 2.1.0 darwin_arm64") || !strings.Contains(s, "h1 mismatch against") {
		t.Errorf("the jobs pane should show the failure and why:\n%s", s)
	}
	h.press("tab") // the jobs pane: Details show the whole error
	if s := h.screen(); !strings.Contains(s, "✗ zh mismatch against") {
		t.Errorf("Details should show the failed checks:\n%s", s)
	}
	if _, err := os.Stat(archivePath(w.Secondary, "acme/cloud", "2.1.0", "darwin_arm64")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed job changed the destination: %v", err)
	}
	assertNoStaging(t, w.Secondary)
}

// TestModelCtrlCCancelsRunningJobs: ctrl+c does not ask; it cancels what
// runs and quits once the engine has stopped.
func TestModelCtrlCCancelsRunningJobs(t *testing.T) {
	w := newWorld(t)
	release := make(chan struct{})
	defer close(release)
	net := serveNet(t, w.Primary, func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".zip") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	cfg := Config{Mirrors: []Mirror{{Reader: net, Kind: "net"}, {Reader: w.secondary, Kind: "fs"}}}
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	h.press("enter", "r", "enter", "enter")
	h.until("jobs to run", func(m Model) bool { return m.jobs.Tracker().Counts()[engine.Running] > 0 })
	h.press("ctrl+c")
	if h.m.confirmQuit {
		t.Fatal("ctrl+c should not ask")
	}
	h.until("the quit", func(Model) bool { return h.quit })
	if c := h.m.jobs.Tracker().Counts(); c[engine.Running]+c[engine.Queued] > 0 {
		t.Errorf("jobs still unfinished at exit: %v", c)
	}
	assertNoStaging(t, w.Secondary)
}

// dialogPlan is the plan the queue dialog confirms, with the counts the
// Providers view keeps.
func dialogPlan(m Model) transferPlan {
	v := m.prov()
	return v.plan(v.grid.Targets(), v.placeIndex(m.dialog.Dest().Name))
}

// TestModelVerifyQuotesTheFailedCheck: whatever order the results of one
// `v` arrive in, the status line quotes the check that failed, not the
// detail of the last archive that passed.
func TestModelVerifyQuotesTheFailedCheck(t *testing.T) {
	w := newWorld(t)
	bad := archivePath(w.Primary, "acme/cloud", "1.0.0", "linux_amd64")
	other, err := os.ReadFile(archivePath(w.Primary, "acme/cloud", "1.1.0", "linux_amd64"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, other, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("1.0.0", "linux_amd64")
	v := h.m.prov()
	var msgs []verifiedMsg
	for i, mr := range v.mirrors {
		hold, _ := v.shown(i)
		a, _ := hold.archive("1.0.0", "linux_amd64")
		k := verifyKey{i, a.Key()}
		v.verifying[k] = true
		msgs = append(msgs, verifiedMsg{to: to(viewProviders), key: k, finding: sync.VerifyArchive(t.Context(), mr.reader, a, hashing.Options{})})
	}
	v.batch = verifyBatch{total: 2}
	if msgs[0].finding.Status != sync.StatusMismatch || msgs[1].finding.Status != sync.StatusOK {
		t.Fatalf("findings %s, %s; want the tampered primary's to fail", msgs[0].finding.Status, msgs[1].finding.Status)
	}
	h.send(msgs[0]) // the failure first, then one that passed
	h.send(msgs[1])
	st := h.m.status()
	if st.kind != statusBad || !strings.Contains(st.text, "1 failed") || !strings.Contains(st.text, "[1]") ||
		!strings.Contains(st.text, "mismatch against mirror index") || strings.Contains(st.text, "matches") {
		t.Errorf("status %q, want the failed check of [1] quoted", st.text)
	}
}

// TestModelEventsPane: an error longer than the status line can be read
// whole in the events pane (e), which scrolls, and e brings the jobs back.
func TestModelEventsPane(t *testing.T) {
	w := newWorld(t)
	cfg := w.config()
	if err := os.RemoveAll(w.Secondary); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg, 80, 24)
	h.until("load", loaded)
	full := h.m.prov().mirrors[1].err.Error()
	if strings.Contains(h.screen(), full) {
		t.Fatalf("the test needs an error longer than the status line: %q", full)
	}
	if !strings.Contains(h.screen(), "e events") || !strings.Contains(h.screen(), "e: 1 error") {
		t.Errorf("the key bar and the jobs pane should point to the events:\n%s", h.screen())
	}
	h.press("e")
	s := h.screen()
	// The pane's lines, borders and continuation indents taken away.
	var text []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.LastIndex(l, "│"); i > 0 && strings.Count(l, "│") >= 2 {
			inner := l[strings.Index(l, "│")+len("│") : i]
			if j := strings.LastIndex(inner, "│"); j >= 0 {
				inner = inner[j+len("│"):]
			}
			text = append(text, strings.TrimSpace(inner))
		}
	}
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") } // wrapping adds breaks, not text
	if joined := strings.Join(text, ""); !strings.Contains(s, "Events 1 error") || !strings.Contains(squeeze(joined), squeeze(full)) {
		t.Errorf("the events pane should show %q whole:\n%s", full, s)
	}
	h.press("tab", "tab", "up")
	if h.m.focus != paneJobs || !strings.Contains(h.screen(), "Events 1 error") {
		t.Errorf("tab should reach the events pane, keys scroll it")
	}
	h.press("e")
	if strings.Contains(h.screen(), "Events 1 error") || !strings.Contains(h.screen(), "Jobs") {
		t.Errorf("e should bring the jobs pane back:\n%s", h.screen())
	}
}

// TestModelKeyBarKeepsHelpAndQuit: however narrow the terminal and
// whichever pane has focus, the key bar ends with ? help and q quit; the
// pane's least keys give way first.
func TestModelKeyBarKeepsHelpAndQuit(t *testing.T) {
	w := newWorld(t)
	for _, size := range [][2]int{{80, 24}, {60, 16}, {120, 40}} {
		h := newHarness(t, w.config(), size[0], size[1])
		h.until("load", loaded)
		for _, p := range []string{"Providers", "Matrix", "Jobs"} {
			lines := strings.Split(h.screen(), "\n")
			bar := lines[len(lines)-1]
			if !strings.HasSuffix(strings.TrimRight(bar, " "), "? help • q quit") || theme.Width(bar) > size[0] {
				t.Errorf("%dx%d, %s: key bar %q", size[0], size[1], p, bar)
			}
			h.press("tab")
		}
	}
}

// TestModelDetailsScrollAt80x24: Details shown on a small terminal wrap
// rather than cut, say when there is more, and take the focus to scroll.
func TestModelDetailsScrollAt80x24(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 80, 24)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.0.0", "linux_amd64")
	h.press("d")
	if s := h.screen(); !strings.Contains(s, "[1] ◇ ./primary 786.8 kB") || !strings.Contains(s, "more (tab to scroll)") {
		t.Fatalf("Details should show the place whole and say there is more:\n%s", s)
	}
	if strings.Contains(h.screen(), "zh:34f29cedfb4c") {
		t.Fatalf("the test needs Details taller than their pane:\n%s", h.screen())
	}
	h.press("tab", "tab") // matrix -> jobs -> Details
	if !strings.Contains(h.screen(), "┏━ Details") {
		t.Fatalf("tab should reach Details when they scroll:\n%s", h.screen())
	}
	h.press("G")
	if s := h.screen(); !strings.Contains(s, "zh:34f29cedfb4c") || strings.Contains(s, "more (tab") {
		t.Errorf("scrolled to the end, Details should show their last line:\n%s", s)
	}
	h.press("tab") // back round to the providers
	if !strings.Contains(h.screen(), "┏━ Providers") {
		t.Errorf("tab from Details should go back to the providers:\n%s", h.screen())
	}
	h.press("d") // folded: tab skips Details
	h.press("tab", "tab", "tab")
	if !strings.Contains(h.screen(), "┏━ Providers") {
		t.Errorf("folded Details must not take the focus:\n%s", h.screen())
	}
}

// TestModelListShowsLatestVersions: every provider in the list shows its
// newest version, from every mirror that lists it, before it is opened;
// once idle, every provider has been listed in every mirror in the
// background (for what the list says each lacks).
func TestModelListShowsLatestVersions(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", idle)
	s := h.screen()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`▸acme/cloud +2\.1\.0`), regexp.MustCompile(`acme/dns +3\.2\.0`),
		regexp.MustCompile(`acme/legacy +0\.30\.0`), regexp.MustCompile(`acme/queue +0\.9\.0`),
	} {
		if !want.MatchString(s) {
			t.Errorf("the list lacks %s:\n%s", want, s)
		}
	}
	if got := h.m.prov().list.Len(); len(h.m.prov().cache) != 4 || got != 4 {
		t.Errorf("%d of %d providers listed in full once idle; want every one", len(h.m.prov().cache), got)
	}
}

// TestModelExcludedByCLIConfig: a mirror whose CLI configuration excludes
// a provider shows that provider's cells as not applicable, not missing:
// they are no gap, nothing to queue there, and Details say why.
func TestModelExcludedByCLIConfig(t *testing.T) {
	w := newWorld(t)
	queue, err := cliconfig.ParsePattern("acme/queue") // written without a host, read by Terraform
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.config()
	cfg.Mirrors[1].Scope = &Scope{Exclude: []cliconfig.Pattern{queue}, DefaultHosts: []string{demo.Host}}
	h := newHarness(t, cfg, 120, 40)
	h.until("load", loaded)
	// acme/cloud is not excluded: the second mirror lacks some of it.
	if got := marksAt(t, h.m, "2.1.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, miss}) {
		t.Errorf("acme/cloud 2.1.0: marks %v, want missing where it is not excluded", got)
	}
	h.press("down", "down", "down")
	h.until("acme/queue", func(m Model) bool { return loaded(m) && m.prov().current.Type == "queue" })
	if got := marksAt(t, h.m, "0.9.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, theme.MarkNotApplicable}) {
		t.Errorf("acme/queue 0.9.0: marks %v, want not applicable in the mirror that excludes it", got)
	}
	h.press("enter")
	s := h.screen()
	for _, want := range []string{"- excluded by CLI config", "[2] - ./secondary", "    excluded by CLI config"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	h.press("o") // no version of it lacks anything the clients would use
	if n := h.m.prov().grid.Shown(); n != 0 {
		t.Errorf("gaps only shows %d versions of a provider excluded where it is absent", n)
	}
}

// TestModelLongNamesCutApart: places whose names share their start and end
// are cut in the middle, keeping what tells them apart, in the header and
// in the queue dialog.
func TestModelLongNamesCutApart(t *testing.T) {
	w := newWorld(t)
	west, err := fs.Open("/srv/terraform/mirrors/eu-west-1/providers", w.Primary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	east, err := fs.Open("/srv/terraform/mirrors/us-east-1/providers", w.Secondary, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Mirrors: []Mirror{{Reader: west, Kind: "fs"}, {Reader: east, Kind: "fs"}}}, 80, 24)
	h.until("load", loaded)
	header := strings.Split(h.screen(), "\n")[0]
	if !strings.Contains(header, "eu-west-1") || !strings.Contains(header, "us-east-1") {
		t.Errorf("the header should keep what tells the places apart: %q", header)
	}
	h.press("enter", "enter") // the queue dialog
	s := h.screen()
	if !strings.Contains(s, "eu-west-1") || !strings.Contains(s, "us-east-1") {
		t.Errorf("the dialog should keep what tells the places apart:\n%s", s)
	}
}

// TestModelJobCellSameFrame: the frame that shows a job done shows its
// cell changed too, before the destination is listed again.
func TestModelJobCellSameFrame(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", loaded)
	h.press("enter")
	h.gotoCell("2.1.0", "darwin_arm64")
	h.press("enter", "enter", "enter") // to the second mirror, which lacks it
	deadline := time.After(time.Minute)
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			t.Fatalf("the job did not end; screen:\n%s", h.screen())
		}
		tr := h.m.jobs.Tracker()
		if len(tr.Order) == 0 || stateOf(h.m, 0) != engine.Done {
			continue
		}
		if got := marksAt(t, h.m, "2.1.0", "darwin_arm64"); !slices.Equal(got, []theme.Mark{ok, vf}) {
			t.Errorf("the job is done, yet its cell reads %v", got)
		}
		if s := h.screen(); !strings.Contains(s, "✓ cloud 2.1.0 darwin_arm64") || !regexp.MustCompile(`▸2\.1\.0 +◇○ +◇●`).MatchString(s) {
			t.Errorf("one frame should show the job done and its cell verified:\n%s", s)
		}
		return
	}
}

// TestModelListingWarningsReachEvents: what a mirror ignored while listing
// the provider shown (a version document it cannot read) is said, and kept
// whole in the events pane.
func TestModelListingWarningsReachEvents(t *testing.T) {
	w := newWorld(t)
	doc := filepath.Join(w.Secondary, demo.Host, "acme", "cloud", "1.1.0.json")
	if err := os.WriteFile(doc, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", idle)
	var found bool
	for _, e := range h.m.sh.log.Entries() {
		found = found || strings.Contains(e.Text, "[2] mirror ./secondary: registry.terraform.io/acme/cloud/1.1.0.json: ignored: not a valid version document")
	}
	if !found || h.m.status().kind != statusWarn || !strings.Contains(h.m.status().text, "1.1.0.json") {
		t.Errorf("the ignored document should be in the status line and the events; status %q, events %+v", h.m.status().text, h.m.sh.log.Entries())
	}
	if got := marksAt(t, h.m, "1.1.0", "linux_amd64"); !slices.Equal(got, []theme.Mark{ok, unv}) {
		t.Errorf("1.1.0 in the mirror whose document was ignored: %v, want nothing stated", got)
	}
}

// The mirrors' newest-version scans are held back while the first
// provider shown is being listed (on two cores they competed with it and
// with the first screen), then run: every provider's newest version shows.
func TestNewestVersionsWaitForTheFirstListing(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	// Whether a mirror's catalogue comes in before or after the first
	// provider's listing has ended depends on the machine: only those
	// before have their scan held.
	held, listed := false, false
	deadline := time.After(time.Minute) // a bound for a loaded machine, not a speed
	for !loaded(h.m) || h.m.prov().busyListingNewest() {
		select {
		case msg := <-h.msgs:
			_, catalogue := msg.(catalogueMsg)
			_, listing := msg.(loadedMsg[backends.Provider, provHolding])
			h.send(msg)
			listed = listed || listing
			if v := h.m.prov(); catalogue && v.hasCurrent && !listed {
				if len(v.newestLater) == 0 {
					t.Fatal("a newest-version scan started while the first provider shown was being listed")
				}
				held = true
			}
		case <-deadline:
			t.Fatalf("timed out; screen:\n%s", h.screen())
		}
	}
	if !held {
		t.Fatal("no mirror's catalogue came in before the first provider was listed")
	}
	v := h.m.prov()
	if len(v.newestLater) != 0 {
		t.Fatalf("%d newest-version scans never ran", len(v.newestLater))
	}
	for _, p := range v.providerUnion() {
		if v.newest[p] == nil {
			t.Errorf("%s: no newest version shown", p)
		}
	}
}
