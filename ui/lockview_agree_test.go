package ui

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/demo"
)

// verdicts is, per locked provider, "ok" or "fails": the lock view's (its
// list's word is ok) and check's (every row ok, for every compared place,
// tied with the other places as the view ties with all of them).
func verdicts(t *testing.T, h *harness, places []backends.Reader, locked map[backends.Provider]sync.Locked, platforms []backends.Platform) (ui, cli map[backends.Provider]string) {
	t.Helper()
	ui, cli = map[backends.Provider]string{}, map[backends.Provider]string{}
	v := h.m.prov()
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
