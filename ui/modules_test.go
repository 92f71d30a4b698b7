package ui

import (
	"archive/zip"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/sync/engine"
)

func TestModulesViewListsAndCompares(t *testing.T) {
	w := newWorld(t)
	mw := newModWorld(t)
	a, b := mw.ociPair(t)
	cfg := w.config()
	cfg.Modules = mw.config()
	cfg.Modules.Places = append(cfg.Modules.Places, ModulePlace{Lister: a, Kind: "oci"}, ModulePlace{Lister: b, Kind: "oci"})
	// Numbered after the two provider mirrors, as main numbers arguments.
	for i := range cfg.Modules.Places {
		cfg.Modules.Places[i].Number = 3 + i
	}
	h := newHarness(t, cfg, 160, 48)
	h.until("providers and the module to load", func(m Model) bool { return idle(m) && modulesLoaded(m) })
	if h.m.active != viewProviders {
		t.Fatalf("the UI should open on providers unless told otherwise")
	}
	h.press("m")
	if h.m.active != viewModules {
		t.Fatalf("m should switch to the Modules view")
	}
	d := h.m.mods().grid.Data()
	if want := []string{"2.0.0", "1.1.0", "1.0.0", "0.9.0"}; !slices.Equal(d.Rows, want) {
		t.Errorf("versions %v, want %v", d.Rows, want)
	}
	var cols []string
	for _, c := range d.Cols {
		cols = append(cols, c.Head)
	}
	if want := []string{"[3] registry", "[4] fs", "[5] oci", "[6] oci"}; !slices.Equal(cols, want) {
		t.Errorf("columns %v, want %v", cols, want)
	}
	for _, tc := range []struct {
		version string
		want    string // one glyph per place: registry, directory, OCI A, OCI B
	}{
		{"2.0.0", "◇○○○"}, // only the registry offers it
		{"1.1.0", "◇○◇≠"}, // both OCI places hold it, with different manifests
		{"1.0.0", "◇◇○○"}, // the directory holds it
		{"0.9.0", "!○○○"}, // listed, but the registry gives no location
	} {
		if got := strings.Join(moduleMarksAt(t, h.m, tc.version), ""); got != tc.want {
			t.Errorf("%s: marks %s, want %s", tc.version, got, tc.want)
		}
	}
	screen := h.screen()
	for _, want := range []string{"module places: [3] registry://example.com", "Modules 1", "2.0.0 acme/network/aws",
		"example.com/acme/network/aws ─ compare 3 ↔ 4 ↔ 5 ↔ 6 ─ 4 versions", "digest differs", "m providers"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}

	// Details says where each place keeps 1.1.0: the registry's location,
	// each OCI place's address by digest, and why B is marked.
	h.press("tab") // the version table
	h.gotoVersion("1.1.0")
	dt := detailsText(h.m)
	for _, want := range []string{"https://example.com/archives/network-1.1.0.zip", "/a/acme/network-aws?digest=sha256:",
		"/b/acme/network-aws?digest=sha256:", "≠ digest differs from [5]'s", "./modules missing"} {
		if !strings.Contains(dt, want) {
			t.Errorf("Details of 1.1.0 lack %q:\n%s", want, dt)
		}
	}
	h.gotoVersion("0.9.0")
	if dt := detailsText(h.m); !strings.Contains(dt, "no location") || !strings.Contains(dt, "404") {
		t.Errorf("Details of 0.9.0 should say why there is no location:\n%s", dt)
	}

	// Taking OCI A out of the comparison leaves B's 1.1.0 with no digest to
	// differ from; the provider view's comparison is untouched.
	h.press("5")
	if got := strings.Join(moduleMarksAt(t, h.m, "1.1.0"), ""); got != "◇○◇" {
		t.Errorf("without [5], 1.1.0 marks %s, want ◇○◇", got)
	}
	if ps := h.m.prov().places; !ps[0].compared || !ps[1].compared {
		t.Errorf("a module place's number toggled a mirror: %+v", ps)
	}
	h.press("m")
	if h.m.active != viewProviders || !strings.Contains(h.screen(), "acme/cloud") {
		t.Errorf("m should switch back to providers:\n%s", h.screen())
	}
}

func TestModulesQueueMissingVersion(t *testing.T) {
	mw := newModWorld(t)
	cfg := Config{Modules: mw.config()}
	cfg.Modules.ShowFirst = true
	h := newHarness(t, cfg, 120, 40)
	h.until("the module to load", modulesLoaded)
	if h.m.active != viewModules {
		t.Fatalf("ShowFirst should open the Modules view")
	}
	h.press("m")
	if s := h.screen(); !strings.Contains(s, "None of the places given holds providers") {
		t.Errorf("providers with no provider mirror:\n%s", s)
	}
	h.press("m")
	h.press("enter") // module list -> versions
	h.gotoVersion("2.0.0")
	h.press("space", "down", "r") // 2.0.0 and 1.1.0
	var sel []string
	for _, c := range h.m.mods().grid.Selection() {
		sel = append(sel, c.Row)
	}
	if !slices.Equal(sel, []string{"2.0.0", "1.1.0"}) {
		t.Fatalf("selection %v", sel)
	}
	h.press("enter")
	if h.m.dialog == nil || !h.m.dialog.Confirming() {
		t.Fatalf("one writable place: the dialog should go straight to confirming, got %+v", h.m.dialog)
	}
	if p := moduleDialogPlan(h.m); len(p.copy) != 2 || p.from[0] != 2 {
		t.Fatalf("plan %+v, want two versions fetched from the registry", p)
	}
	if s := h.screen(); !strings.Contains(s, "2 to fetch and pack: 2 from [1] registry://example.com") {
		t.Errorf("confirm step:\n%s", s)
	}
	h.press("enter")
	h.until("the first job to land", func(m Model) bool { return m.jobs.Tracker().Counts()[engine.Done] > 0 })
	for _, id := range h.m.jobs.Tracker().Order {
		if j := h.m.jobs.Tracker().Jobs[id]; j.State == engine.Done {
			version := j.Info.Name[strings.LastIndexByte(j.Info.Name, ' ')+1:]
			if got := moduleMarksAt(t, h.m, version); got[1] != "◇" {
				t.Errorf("the frame that shows %s done shows its cell %v", j.Info.Name, got)
			}
		}
	}
	h.until("the jobs to land and the directory to be listed again", func(m Model) bool {
		return jobsEnded(2)(m) && modulesLoaded(m) && !m.busy() &&
			slices.Equal(moduleMarksAt(t, m, "2.0.0"), []string{"◇", "◇"})
	})
	for i := range 2 {
		if st := stateOf(h.m, i); st != engine.Done {
			t.Fatalf("job %d: %s; status %q", i, st, h.m.status().text)
		}
	}
	for _, v := range []string{"2.0.0", "1.1.0"} {
		zr, err := zip.OpenReader(mw.zipPath(v))
		if err != nil {
			t.Fatalf("%s is not in the directory: %v", v, err)
		}
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		zr.Close()
		if !slices.Contains(names, "main.tf") {
			t.Errorf("%s: zip holds %v", v, names)
		}
	}
	// The jobs pane names module jobs by their address; the engine says
	// which module each is of.
	tr := h.m.jobs.Tracker()
	for _, id := range tr.Order {
		if tr.Jobs[id].Info.Module != mw.module || !strings.HasPrefix(tr.Jobs[id].Info.Label(), modHost+"/acme/network/aws ") {
			t.Errorf("job %d: %+v", id, tr.Jobs[id].Info)
		}
	}
	if s := h.screen(); !strings.Contains(s, "example.com/acme/network/aws 2.0.0") || !strings.Contains(s, "queue idle: 2 done") {
		t.Errorf("screen after the jobs:\n%s", s)
	}
	// Queueing what is there is a no-op unless forced.
	h.press("enter")
	if h.m.dialog == nil || len(moduleDialogPlan(h.m).copy) != 0 || len(moduleDialogPlan(h.m).present) != 1 {
		t.Fatalf("plan for a version already there: %+v", h.m.dialog)
	}
	h.press("enter") // the dialog stays and says what f would do
	if h.m.dialog == nil || !strings.Contains(h.screen(), "1 already there: press f to fetch again") {
		t.Errorf("confirming what is there without force should explain:\n%s", h.screen())
	}
	h.press("esc")
	if h.m.dialog != nil || len(h.m.jobs.Tracker().Order) != 2 {
		t.Errorf("esc closes the dialog, queueing nothing")
	}
}

func TestModulesRetryFailedJob(t *testing.T) {
	mw := newModWorld(t)
	var fixed atomic.Bool
	body := modulestest.Zip(t, moduleFiles("3.0.0"))
	mw.srv.Handle("/archives/network-3.0.0.zip", func(w http.ResponseWriter, r *http.Request) {
		if !fixed.Load() {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	})
	mw.srv.Add("acme/network/aws", "3.0.0", modulestest.Download{Location: "/archives/network-3.0.0.zip"})
	cfg := Config{Modules: mw.config()}
	cfg.Modules.ShowFirst = true
	h := newHarness(t, cfg, 120, 40)
	h.until("the module to load", modulesLoaded)
	h.press("enter", "enter", "enter") // versions; queue 3.0.0 (the newest); confirm
	h.until("the job to fail", jobsEnded(1))
	if st := stateOf(h.m, 0); st != engine.Failed || !strings.Contains(h.m.status().text, "3.0.0") {
		t.Fatalf("job %s, status %q", st, h.m.status().text)
	}
	fixed.Store(true)
	h.press("tab", "R") // jobs pane; retry
	// The job runs again in place, as a provider job does.
	h.until("the retry to land", func(m Model) bool {
		return stateOf(m, 0) == engine.Done && jobsEnded(1)(m) && modulesLoaded(m) && !m.busy()
	})
	if _, err := os.Stat(mw.zipPath("3.0.0")); err != nil {
		t.Errorf("after the retry: %v", err)
	}
	if got := moduleMarksAt(t, h.m, "3.0.0"); !slices.Equal(got, []string{"◇", "◇"}) {
		t.Errorf("3.0.0 marks %v after the retry", got)
	}
}

func TestModulesLateAndForeignResults(t *testing.T) {
	mw := newModWorld(t)
	other, err := modules.ParseModule("acme/storage/aws", "registry.opentofu.org")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Modules: mw.config()}
	cfg.Modules.Modules = append(cfg.Modules.Modules, other)
	cfg.Modules.ShowFirst = true
	h := newHarness(t, cfg, 120, 40)
	h.until("the module to load", modulesLoaded)
	if h.m.mods().current != mw.module {
		t.Fatalf("current %s, want the first in order, %s", h.m.mods().current, mw.module)
	}
	before := moduleMarksAt(t, h.m, "1.0.0")

	// A listing overtaken by a newer one is dropped.
	l := h.m.mods().cache[mw.module][1]
	h.send(loadedMsg[modules.Module, modHolding]{to: to(viewModules), gen: l.gen - 1, place: 1, item: mw.module})
	if got := moduleMarksAt(t, h.m, "1.0.0"); !slices.Equal(got, before) {
		t.Errorf("a stale listing changed 1.0.0 from %v to %v", before, got)
	}
	// So is a listing of a module nobody asked for.
	h.send(loadedMsg[modules.Module, modHolding]{to: to(viewModules), gen: l.gen, place: 1, item: modules.Module{Host: "x.test", Namespace: "a", Name: "b", System: "c"}})
	if got := moduleMarksAt(t, h.m, "1.0.0"); !slices.Equal(got, before) {
		t.Errorf("a foreign listing changed 1.0.0 to %v", got)
	}

	// A module of another host: the registry is not asked, and Details
	// says why its column is empty.
	h.press("down")
	h.until("the other module to load", func(m Model) bool { return m.mods().current == other && modulesLoaded(m) })
	if n := mw.srv.Count("/storage/"); n != 0 {
		t.Errorf("the registry was asked for another host's module %d time(s)", n)
	}
	if s := h.screen(); !strings.Contains(s, "[1] registry://example.com serves example.com's modules, not registry.opentofu.org's") ||
		!strings.Contains(s, "hold no version of this module") {
		t.Errorf("screen for another host's module:\n%s", s)
	}
}

// TestModulesQuitCancelsJobs quits while a module job is still fetching
// (the archive never comes): the UI asks, cancels, and the directory is
// left as it was.
func TestModulesQuitCancelsJobs(t *testing.T) {
	mw := newModWorld(t)
	started := make(chan struct{}, 1)
	mw.srv.Handle("/archives/network-3.0.0.zip", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done() // hangs until the client gives up
	})
	mw.srv.Add("acme/network/aws", "3.0.0", modulestest.Download{Location: "/archives/network-3.0.0.zip"})
	cfg := Config{Modules: mw.config()}
	cfg.Modules.ShowFirst = true
	h := newHarness(t, cfg, 120, 40)
	h.until("the module to load", modulesLoaded)
	h.press("enter", "enter", "enter") // versions; queue 3.0.0; confirm
	h.until("the job to run", func(m Model) bool { return len(m.jobs.Tracker().Order) == 1 && stateOf(m, 0) == engine.Running })
	<-started
	h.press("q")
	if !h.m.confirmQuit || !strings.Contains(h.m.status().text, "1 job(s) running") {
		t.Fatalf("q with a module job running should ask; status %q", h.m.status().text)
	}
	h.press("y")
	h.until("quit", func(Model) bool { return h.quit })
	h.m.Shutdown() // waits for the engine to end the job
	if _, err := os.Stat(mw.zipPath("3.0.0")); !os.IsNotExist(err) {
		t.Errorf("the cancelled package is in the directory: %v", err)
	}
}

func TestModulesKeyWithoutModules(t *testing.T) {
	w := newWorld(t)
	h := newHarness(t, w.config(), 120, 40)
	h.until("load", idle)
	h.press("m")
	if h.m.active != viewProviders || !strings.Contains(h.m.status().text, "--module") {
		t.Errorf("m with no modules: view %d, status %q", h.m.active, h.m.status().text)
	}
	if strings.Contains(h.screen(), "m modules") {
		t.Errorf("help offers m though there is no Modules view:\n%s", h.screen())
	}
}

// moduleDialogPlan is the plan the queue dialog confirms, with the counts
// the Modules view keeps.
func moduleDialogPlan(m Model) modulePlan {
	v := m.mods()
	var versions []string
	for _, c := range v.grid.Targets() {
		versions = append(versions, c.Row)
	}
	return v.plan(versions, v.placeIndex(m.dialog.Dest().Name))
}
