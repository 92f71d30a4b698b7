package ui

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// lockWorld is a lock view: ./mirror holds example.com/acme/alpha 1.1.0
// for linux_amd64 only; ./origin holds it (and 1.0.0) for three platforms
// and keeps the release's signed SHA256SUMS, which also lists the
// release's manifest. infra's lock (as `terraform providers lock
// -platform=linux_amd64 -platform=darwin_arm64` writes it) holds the h1:
// of two platforms and the zh: of every SHA256SUMS line; corp's locks
// example.com/corp/widget, which no place holds.
func lockWorld(t *testing.T) (cfg Config, mirrorDir string) {
	t.Helper()
	plats := []string{"darwin_arm64", "linux_amd64", "windows_amd64"}
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, plats)
	originDir, mirrorDir := t.TempDir(), t.TempDir()
	backendtest.WritePacked(t, originDir, seeds)
	var v110 []backendtest.Seed
	for _, s := range seeds {
		if s.Package.Version.String() == "1.1.0" {
			v110 = append(v110, s)
			if s.Package.Platform.String() == "linux_amd64" {
				backendtest.WritePacked(t, mirrorDir, []backendtest.Seed{s})
			}
		}
	}
	origin, err := fs.Open("./origin", originDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mirror, err := fs.Open("./mirror", mirrorDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The release's signed SHA256SUMS, with its manifest's line.
	signer := backendtest.NewSigner(t, "acme releases")
	prov := signer.Provenance(t, v110)
	prov.SHA256SUMS = append(prov.SHA256SUMS, fmt.Sprintf("%x  terraform-provider-alpha_1.1.0_manifest.json\n", sha256.Sum256([]byte("manifest")))...)
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, signer.Entity, bytes.NewReader(prov.SHA256SUMS), nil); err != nil {
		t.Fatal(err)
	}
	prov.Signature = sig.Bytes()
	p, v := v110[0].Package.Provider, v110[0].Package.Version
	if err := origin.WriteProvenance(t.Context(), p, v, prov); err != nil {
		t.Fatal(err)
	}

	var hashes []hashing.Hash
	lines, err := provenance.ParseSums(prov.SHA256SUMS)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range lines {
		hashes = append(hashes, hashing.Hash("zh:"+sum))
	}
	for _, s := range v110 {
		if s.Package.Platform.String() != "windows_amd64" {
			h1, err := hashing.ZipH1(filepath.Join(originDir, "example.com", "acme", "alpha", s.Package.Filename()), hashing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hashes = append(hashes, h1)
		}
	}
	sort.Slice(hashes, func(i, j int) bool { return hashes[i] < hashes[j] })
	widget := backendtest.Pkg(t, "example.com/corp/widget", "1.2.0", "linux_amd64")
	cfg = Config{
		Mirrors: []Mirror{{Reader: mirror, Kind: "fs"}, {Reader: origin, Kind: "fs"}},
		Locks: &Locks{Files: []string{"infra/.terraform.lock.hcl", "corp/.terraform.lock.hcl"}, Entries: []LockEntry{
			{Provider: p, Locked: sync.Locked{Version: v, Hashes: hashes, Source: "infra/.terraform.lock.hcl"}},
			{Provider: widget.Provider, Locked: sync.Locked{Version: widget.Version, Source: "corp/.terraform.lock.hcl",
				Hashes: []hashing.Hash{"h1:widgetWidgetWidgetWidgetWidgetWidgetWidget0=", "zh:" + hashing.Hash(strings.Repeat("0a", 32))}}},
		}},
	}
	return cfg, mirrorDir
}

// tied reports that the lock's hashes are tied and the view idle.
func tied(m Model) bool { return idle(m) && m.lockv().lock.tied != nil && !m.lockv().lock.running }

// TestLockView opens the UI on two lock files: the list holds both locked
// providers, the one no place holds marked "not in any"; alpha's matrix
// has exactly its locked version as a row (not 1.0.0, which the origin
// also holds) and the three platforms its hashes are tied to as columns
// (the origin's signed SHA256SUMS ties windows_amd64, for which no h1: is
// locked); the manifest's zh: is shown as untied, never a gap. L queues
// the two gaps from the origin; once they land the provider is "ok". The
// screens at 80x24 and 120x40 are golden files (go test ./ui -run
// TestLockView -update).
func TestLockView(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		cfg, _ := lockWorld(t)
		h := newHarness(t, cfg, size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
				golden.RequireEqual(t, []byte(h.screen()))
			})
		}
		h.until("the lock's hashes tied", tied)
		v := h.m.lockv()
		if got := fmt.Sprint(v.lockedProviders()); got != "[example.com/acme/alpha example.com/corp/widget]" || v.list.Len() != 2 {
			t.Fatalf("list %s (%d items)", got, v.list.Len())
		}
		alpha, widget := v.lockedProviders()[0], v.lockedProviders()[1]
		if n, w := v.lockNote(alpha), v.lockNote(widget); n != "1.1.0 2 missing" || w != "1.2.0 not in any" {
			t.Errorf("notes %q, %q", n, w)
		}
		versions, platforms, _ := matrixData(h.m)
		if fmt.Sprint(versions) != "[1.1.0]" || fmt.Sprint(platforms) != "[darwin_arm64 linux_amd64 windows_amd64]" {
			t.Errorf("matrix %v × %v", versions, platforms)
		}
		if !strings.Contains(h.screen(), "untied locked hashes: 1 (zh: of a non-package file)") {
			t.Errorf("the manifest's zh: is not shown as untied:\n%s", h.screen())
		}
		snap("start")

		h.press("enter", "right", "right") // into the matrix: 1.1.0 windows_amd64
		if size.w < 100 {
			h.press("d")
		}
		snap("details")
		if size.w < 100 {
			h.press("d")
		}

		h.press("L")
		if h.m.dialog == nil {
			t.Fatalf("L opened no dialog; status %q", h.m.sh.status.text)
		}
		snap("queue")
		h.press("enter")
		h.until("the gaps to land and the lock to be tied again", func(m Model) bool {
			return jobsEnded(2)(m) && tied(m) && m.lockv().lockNote(alpha) == "1.1.0 ok"
		})
		if c := h.m.jobs.Tracker().Counts(); c[engine.Done] != 2 {
			t.Fatalf("jobs %v", c)
		}
		snap("landed")
	}
}

// hashes of a lock that lists no platform of a provider version's archives
// tie nothing: with no place holding widget, its matrix has no columns, it
// shows no gap, and L says which gaps there are (alpha's) and queues only
// those.
func TestLockViewNothingTied(t *testing.T) {
	cfg, _ := lockWorld(t)
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	h.press("down")
	h.until("widget listed", func(m Model) bool { return tied(m) && m.prov().current.Type == "widget" })
	versions, platforms, _ := matrixData(h.m)
	if fmt.Sprint(versions) != "[1.2.0]" || len(platforms) != 0 {
		t.Errorf("widget's matrix %v × %v", versions, platforms)
	}
	if s := h.screen(); !strings.Contains(s, "no place ties a locked hash to a platform") || !strings.Contains(s, "locked h1: of no held package: 1") {
		t.Errorf("screen:\n%s", s)
	}
	w := backends.Provider{Hostname: "example.com", Namespace: "corp", Type: "widget"}
	if gaps := h.m.lockv().lockGaps(&w); len(gaps) != 0 {
		t.Errorf("widget gaps %v", gaps)
	}
}

// --platform names the platforms the lock is about, as check's does: the
// one column, even where the lock does not cover it and no place holds
// it: every compared mirror lacks it, for every locked provider, so each
// is a gap, and L finds no source for them.
func TestLockViewPlatformColumn(t *testing.T) {
	cfg, _ := lockWorld(t)
	plat, err := backends.ParsePlatform("linux_arm64")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Selection.Platforms = []backends.Platform{plat}
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	_, platforms, marks := matrixData(h.m)
	if fmt.Sprint(platforms) != "[linux_arm64]" {
		t.Fatalf("columns %v", platforms)
	}
	if m := marks[0][0]; len(m) != 2 || m[0] != theme.MarkMissing || m[1] != theme.MarkMissing {
		t.Errorf("linux_arm64 marks %v, want missing in both", m)
	}
	alpha := h.m.lockv().lockedProviders()[0]
	if n := h.m.lockv().lockNote(alpha); n != "1.1.0 2 missing" {
		t.Errorf("note %q: want linux_arm64 in both places", n)
	}
	h.press("L")
	if h.m.dialog != nil || !strings.Contains(h.m.sh.status.text, "no place holds") {
		t.Errorf("L with no source: dialog %v, status %q", h.m.dialog != nil, h.m.sh.status.text)
	}
}

// A compared mirror holding an archive the lock does not name (rebuilt
// under the same name) fails init's checksum on that platform: a gap too,
// counted apart ("1 differ"), said in Details, and L replaces it (forced)
// from a source whose archive the lock names. `check --lock` calls it a
// mismatch; the view said "ok".
func TestLockViewArchiveTheLockDoesNotName(t *testing.T) {
	cfg, mirrorDir := lockWorld(t)
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.1.0", "linux_amd64")
	backendtest.WritePacked(t, mirrorDir, []backendtest.Seed{{Package: pkg, Zip: backendtest.ProviderZip(t, pkg, "rebuilt")}})
	mirror, err := fs.Open("./mirror", mirrorDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := mirror.Flush(t.Context(), pkg.Provider); err != nil {
		t.Fatal(err)
	}
	cfg.Mirrors[0].Reader = mirror
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	alpha := h.m.lockv().lockedProviders()[0]
	if n := h.m.lockv().lockNote(alpha); n != "1.1.0 2 missing, 1 differ" {
		t.Errorf("note %q, want the two missing and the one differing", n)
	}
	if d := strings.Join(h.m.lockv().lockDetails("1.1.0"), "\n"); !strings.Contains(d, "[1] linux_amd64: ≠ not the locked package") {
		t.Errorf("details:\n%s", d)
	}
	// The mark is on the place holding the wrong package, not on the one
	// holding the locked one.
	_, platforms, marks := matrixData(h.m)
	col := slices.Index(platforms, "linux_amd64")
	if m := marks[0][col]; len(m) != 2 || m[0] != theme.MarkDiffers || m[1] == theme.MarkDiffers || m[1] == theme.MarkMissing {
		t.Errorf("linux_amd64 marks %v, want ≠ on ./mirror only", m)
	}
	if title := h.m.lockv().lockTitle(); !strings.Contains(title, "2 missing, 1 differ") {
		t.Errorf("title %q counts otherwise than the list", title)
	}
	h.press("L")
	if h.m.dialog == nil {
		t.Fatalf("no dialog: %q", h.m.sh.status.text)
	}
	if s := h.screen(); !strings.Contains(s, "3 package(s) missing or differing") || !strings.Contains(s, "2 to copy: 2 from [2] ./origin") || !strings.Contains(s, "1 differ from the lock: skipped (f replaces them)") {
		t.Errorf("dialog:\n%s", s)
	}
	h.press("f")
	if s := h.screen(); !strings.Contains(s, "will be REPLACED (force)") {
		t.Errorf("dialog, forced:\n%s", s)
	}
}

// Per lock file, the view says for how many of the platforms it is about
// it holds each provider's h1: (what init -lockfile=readonly and a
// filesystem mirror need): alpha's lock has the h1: of darwin_arm64 and
// linux_amd64, and only the signed zh: of windows_amd64.
func TestLockViewComplete(t *testing.T) {
	cfg, _ := lockWorld(t)
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	if n, m, ok := h.m.lockv().lockComplete("infra/.terraform.lock.hcl"); !ok || n != 2 || m != 3 {
		t.Errorf("complete for %d of %d (%v), want 2 of 3", n, m, ok)
	}
	if s := h.screen(); !strings.Contains(s, "infra/.terraform.lock.hcl: complete for 2 of 3 platforms") {
		t.Errorf("screen:\n%s", s)
	}
}
