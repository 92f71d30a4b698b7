package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/demo"
	"github.com/tfmirror/tfmirror/ui/details"
	"github.com/tfmirror/tfmirror/ui/grid"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// verdicts is, per locked provider, "ok" or "fails": the lock view's (its
// list's word is ok) and check's (every row ok, for every compared place,
// tied with the other places as the view ties with all of them).
func verdicts(t *testing.T, h *harness, places []backends.Reader, locked map[backends.Provider]sync.Locked, platforms []backends.Platform) (ui, cli map[backends.Provider]string) {
	t.Helper()
	ui, cli = map[backends.Provider]string{}, map[backends.Provider]string{}
	v := h.m.lockv()
	for _, p := range v.lockedProviders() {
		ui[p] = "fails"
		if _, long, _, _ := v.lockStatus(p); long == "ok" {
			ui[p] = "ok"
		}
		cli[p] = "ok"
	}
	for _, i := range v.compared() {
		var others []backends.Reader
		for j, r := range places {
			if j != i {
				others = append(others, r)
			}
		}
		found, err := lockcheck.CheckLock(t.Context(), places[i], locked, lockcheck.CheckOptions{Kind: placeopen.FS, Platforms: platforms, TieWith: others})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			if f.Status != sync.StatusOK {
				cli[f.Package.Provider] = "fails"
			}
		}
	}
	return ui, cli
}

// The lock view and check give one verdict per provider for the same
// inputs (issue 34): the demo's world, secondary and primary compared
// with its infra lock, with no --platform and with --platform narrowing
// to one the lock covers and to one it does not.
func TestLockViewAgreesWithCheck(t *testing.T) {
	w, err := demo.Build(t.Context(), filepath.Join(t.TempDir(), "W"))
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(w.Infra, lockfile.DefaultName)
	f, err := lockfile.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	locked := lockcheck.LockedFromFile(f, lockPath)
	open := func(dirs ...string) []backends.Reader {
		var out []backends.Reader
		for _, dir := range dirs {
			r, err := fs.Open(dir, dir, fs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	for _, tc := range []struct {
		places []backends.Reader
		plats  []string
		want   string // every provider's verdict, where all agree
	}{
		{open(w.Secondary, w.Primary), nil, "fails"},
		{open(w.Secondary, w.Primary), []string{"darwin_arm64"}, "fails"},
		{open(w.Primary), nil, "ok"},
		{open(w.Primary), []string{"linux_amd64", "darwin_arm64"}, "ok"},
		{open(w.Primary), []string{"windows_amd64"}, ""},
	} {
		places, plats := tc.places, tc.plats
		t.Run(fmt.Sprint(len(places), plats), func(t *testing.T) {
			locks := &Locks{Files: []string{lockPath}}
			for p, l := range locked {
				locks.Entries = append(locks.Entries, LockEntry{Provider: p, Locked: l})
			}
			cfg := Config{Locks: locks}
			for _, r := range places {
				cfg.Mirrors = append(cfg.Mirrors, Mirror{Reader: r, Kind: "fs"})
			}
			for _, s := range plats {
				pl, _ := backends.ParsePlatform(s)
				cfg.Selection.Platforms = append(cfg.Selection.Platforms, pl)
			}
			h := newHarness(t, cfg, 120, 40)
			h.until("the lock's hashes tied", tied)
			ui, cli := verdicts(t, h, places, locked, cfg.Selection.Platforms)
			if len(ui) != len(locked) {
				t.Fatalf("the view lists %d providers, the lock locks %d", len(ui), len(locked))
			}
			for p := range locked {
				if ui[p] != cli[p] || tc.want != "" && ui[p] != tc.want {
					t.Errorf("%s: the lock view says %s, check says %s; want %q", p, ui[p], cli[p], tc.want)
				}
			}
			t.Logf("verdicts: %v", ui)
		})
	}
}

// demoLockView is `ui W/secondary W/primary --lock W/infra/...` on a
// fresh demo world, at w x h.
func demoLockView(t *testing.T, w, h int) *harness {
	t.Helper()
	world, err := demo.Build(t.Context(), filepath.Join(t.TempDir(), "W"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := lockfile.Load(filepath.Join(world.Infra, lockfile.DefaultName))
	if err != nil {
		t.Fatal(err)
	}
	locks := &Locks{Files: []string{"W/infra/.terraform.lock.hcl"}}
	for p, l := range lockcheck.LockedFromFile(f, "W/infra/.terraform.lock.hcl") {
		locks.Entries = append(locks.Entries, LockEntry{Provider: p, Locked: l})
	}
	cfg := Config{Locks: locks}
	for _, dir := range []string{world.Secondary, world.Primary} {
		r, err := fs.Open("W/"+filepath.Base(dir), dir, fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Mirrors = append(cfg.Mirrors, Mirror{Reader: r, Kind: "fs"})
	}
	return newHarness(t, cfg, w, h)
}

// Details of a lock view cell marks the places as the matrix does, each
// compared with the lock: in the demo world's 2.0.0 linux_amd64, ≠ on
// secondary ("not the locked package"), and primary, which holds the
// locked package, not ≠ (curation's Details compared it with the first
// place and marked it "hashes differ from [1]'s").
func TestLockViewDetailsMarkTheWrongPlace(t *testing.T) {
	h := demoLockView(t, 120, 40)
	h.until("the lock's hashes tied", tied)
	v := h.m.lockv()
	v.current = v.lockedProviders()[0]
	d := details.New(h.m.styles)
	d.SetSize(60, 60)
	v.showDetails(&d, grid.Cell{Row: "2.0.0", Col: "linux_amd64"})
	out := ansi.Strip(d.View())
	var secondary, primary string
	for _, part := range strings.Split(out, "\n[") {
		switch {
		case strings.HasPrefix(part, "1] "):
			secondary = part
		case strings.HasPrefix(part, "2] "):
			primary = part
		}
	}
	if !strings.Contains(secondary, "≠") || !strings.Contains(secondary, "not the locked package") {
		t.Errorf("secondary, which holds a package the lock does not name, is not marked ≠ not the locked package:\n%s", out)
	}
	if strings.Contains(primary, "≠") || strings.Contains(out, "differ from") {
		t.Errorf("primary, which holds the locked package, is marked as differing:\n%s", out)
	}
}

// TestLockViewDemoWrongPlace: the demo's world, `ui W/secondary W/primary
// --lock W/infra/.terraform.lock.hcl` on acme/cloud. Cell 2.0.0
// linux_amd64 marks secondary, which holds a package the lock does not
// name, ≠, and primary, which holds the locked one, ◇; the title and the
// list say "1 missing, 1 differ". L's dialog counts the two apart and,
// with f, replaces the differing one in the same pass: both jobs land and
// the provider is ok. Golden screens at 80x24 and 120x40 (go test ./ui
// -run TestLockViewDemoWrongPlace -update).
func TestLockViewDemoWrongPlace(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		h := demoLockView(t, size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
				golden.RequireEqual(t, []byte(h.screen()))
			})
		}
		h.until("the lock's hashes tied", tied)
		v := h.m.lockv()
		cloud := v.lockedProviders()[0]
		if n := v.lockNote(cloud); n != "2.0.0 1 missing, 1 differ" {
			t.Errorf("cloud: %q", n)
		}
		_, platforms, marks := matrixData(h.m)
		col := slices.Index(platforms, "linux_amd64")
		if col < 0 || len(marks[0][col]) != 2 || marks[0][col][0] != theme.MarkDiffers || marks[0][col][1] == theme.MarkDiffers {
			t.Errorf("2.0.0 linux_amd64 marks %v in %v: want ≠ on secondary only", marks, platforms)
		}
		// The legend says what ≠ means here: not the locked package (it
		// said "hashes differ", which in curation is "from the first
		// mirror's", and docs/ui.md's lock view means otherwise).
		if s := h.screen(); !strings.Contains(s, "≠ not the locked package") && !strings.Contains(s, "≠ not locked") {
			t.Errorf("the lock view's legend does not say what ≠ means there:\n%s", s)
		}
		// The key bar keeps the job's keys, L and C, when it is short of
		// room: they went first, before tab (and m, where modules are).
		h.send(resize(60, 16))
		if lines := strings.Split(h.screen(), "\n"); !strings.Contains(lines[len(lines)-1], "L ") || !strings.Contains(lines[len(lines)-1], "C ") {
			t.Errorf("the key bar at 60 columns lacks L or C: %q", lines[len(lines)-1])
		}
		h.send(resize(size.w, size.h))
		snap("marks")
		h.press("L")
		if h.m.dialog == nil {
			t.Fatalf("no dialog: %q", h.m.sh.status.text)
		}
		// One source holds the gaps (primary): the dialog confirms at once.
		snap("queue")
		h.press("f")
		if s := h.screen(); !strings.Contains(s, "will be REPLACED (force)") {
			t.Errorf("forced dialog:\n%s", s)
		}
		snap("forced")
		h.press("enter")
		h.until("the jobs landed and the lock tied again", func(m Model) bool {
			return tied(m) && m.lockv().lockNote(cloud) == "2.0.0 ok"
		})
		if c := h.m.jobs.Tracker().Counts(); c[engine.Failed] != 0 || c[engine.Done] == 0 {
			t.Errorf("L, f, enter: jobs %v, want every one done and none failed", c)
		}
		snap("landed")
	}
}
