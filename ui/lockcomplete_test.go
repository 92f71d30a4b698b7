package ui

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// testPkgDir is the package's directory, where the golden files are.
var testPkgDir, _ = os.Getwd()

// fillWorld is lockWorld with its two lock files on disk (in the test's
// working directory), infra's as `terraform init` through the origin
// writes it on linux_amd64: the h1: of that one platform and the signed
// zh: of every SHA256SUMS line. want is what `tfmirror lock` (lockcheck,
// from the origin, for the three platforms) makes of infra's file. snap
// is golden.RequireEqual, run from the package's directory.
func fillWorld(t *testing.T) (cfg Config, want []byte, snap func(t *testing.T, screen string)) {
	cfg, _ = lockWorld(t)
	pkg := testPkgDir
	work := t.TempDir()
	t.Chdir(work)
	snap = func(t *testing.T, screen string) {
		t.Helper()
		if err := os.Chdir(pkg); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(work)
		golden.RequireEqual(t, []byte(screen))
	}
	origin := cfg.Mirrors[1].Reader
	alpha := cfg.Locks.Entries[0]
	as, err := origin.Archives(t.Context(), alpha.Provider, alpha.Locked.Version)
	if err != nil {
		t.Fatal(err)
	}
	var drop []hashing.Hash
	var plats []backends.Platform
	for _, a := range as {
		plats = append(plats, a.Platform)
		ls, err := lockcheck.PackageLockHashes(t.Context(), origin, a, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Platform.String() != "linux_amd64" {
			drop = append(drop, ls.Unpacked)
		}
	}
	for i, e := range cfg.Locks.Entries {
		e.Locked.Hashes = slices.DeleteFunc(slices.Clone(e.Locked.Hashes), func(h hashing.Hash) bool { return slices.Contains(drop, h) })
		cfg.Locks.Entries[i] = e
		f := lockfile.New(lockfile.HeaderTerraform)
		if err := f.Set(lockfile.Provider{Addr: e.Provider, Version: e.Locked.Version, Hashes: e.Locked.Hashes}); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(e.Locked.Source), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := f.Save(e.Locked.Source); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, probs, err := lockcheck.UpdateLock(t.Context(), origin, f, lockcheck.LockRequest{Platforms: plats}); err != nil || len(probs) > 0 {
				t.Fatalf("lock: %v %v", probs, err)
			}
			want = f.Bytes()
		}
	}
	return cfg, want, snap
}

// TestLockViewFill: C completes the lock files from the places. infra's
// lock is complete for 1 of 3 platforms; the preview lists the h1: of
// darwin_arm64 and windows_amd64 from the origin (./mirror holds only
// linux_amd64), says the file will be complete for 3 of 3, and corp's
// (widget, held nowhere) has nothing to add. enter writes it: the file is
// byte for byte what `tfmirror lock` writes from the origin for the three
// platforms, the status line names it and the hashes added, and the view,
// reading it again, says "complete for 3 of 3". Golden screens at 80x24
// and 120x40 (go test ./ui -run TestLockViewFill -update).
func TestLockViewFill(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		cfg, want, golden := fillWorld(t)
		h := newHarness(t, cfg, size.w, size.h)
		snap := func(name string) {
			t.Helper()
			t.Run(name+"_"+itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) { golden(t, h.screen()) })
		}
		h.until("the lock's hashes tied", tied)
		if n, m, _ := h.m.lockv().lockComplete("infra/.terraform.lock.hcl"); n != 1 || m != 3 {
			t.Fatalf("infra complete for %d of %d, want 1 of 3", n, m)
		}
		before, err := os.ReadFile("infra/.terraform.lock.hcl")
		if err != nil {
			t.Fatal(err)
		}
		h.press("C")
		if st := h.m.status().text; st != "hashing 2 package(s) for the lock files…" || !h.m.busy() {
			t.Errorf("C's progress: status %q, busy %v", st, h.m.busy())
		}
		h.until("the preview", func(m Model) bool { return m.preview != nil })
		s := h.screen()
		for _, w := range []string{"complete for 1 of 3 platforms, then 3 of 3", "darwin_arm64 from [2] ./origin", "windows_amd64 from [2] ./origin", "nothing to add"} {
			if !strings.Contains(s, w) {
				t.Errorf("preview lacks %q:\n%s", w, s)
			}
		}
		if p := h.m.preview; p.adds != 2 {
			t.Errorf("the preview adds %d hashes, want 2 (the h1: of darwin_arm64 and windows_amd64)", p.adds)
		}
		if now, _ := os.ReadFile("infra/.terraform.lock.hcl"); !bytes.Equal(now, before) {
			t.Fatal("the preview wrote the lock file")
		}
		snap("preview")
		h.press("enter")
		h.until("the lock written and tied again", func(m Model) bool {
			n, _, ok := m.lockv().lockComplete("infra/.terraform.lock.hcl")
			return tied(m) && ok && n == 3 && !m.lockv().lock.filling
		})
		if st := h.m.status(); st.kind != statusInfo || st.text != "2 hashes added to infra/.terraform.lock.hcl" {
			t.Errorf("status %q", st.text)
		}
		got, err := os.ReadFile("infra/.terraform.lock.hcl")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("the lock file as C wrote it:\n%s\nas tfmirror lock writes it:\n%s", got, want)
		}
		if s := h.screen(); !strings.Contains(s, ".terraform.lock.hcl: complete for 3 of 3") {
			t.Errorf("screen:\n%s", s)
		}
		snap("completed")
		if help := strings.Join(h.m.fullHelpLines(), "\n"); !strings.Contains(help, "completes every lock file") {
			t.Errorf("help does not say what C does:\n%s", help)
		}
	}
}

// At 80x24, with --platform naming three platforms no place holds, the
// preview is taller than its box: it scrolls (G shows its end), and says
// of each such platform that no place holds the locked package. esc
// writes nothing.
func TestLockViewFillScrolls(t *testing.T) {
	cfg, _, _ := fillWorld(t)
	for _, s := range []string{"darwin_arm64", "linux_amd64", "windows_amd64", "linux_arm64", "freebsd_amd64", "openbsd_amd64"} {
		pl, err := backends.ParsePlatform(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Selection.Platforms = append(cfg.Selection.Platforms, pl)
	}
	before, err := os.ReadFile("infra/.terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg, 80, 24)
	h.until("the lock's hashes tied", tied)
	h.press("C")
	h.until("the preview", func(m Model) bool { return m.preview != nil })
	first := h.screen()
	if !strings.Contains(first, "Complete the lock files from the places ─ 1-") || strings.Contains(first, "openbsd_amd64") {
		t.Errorf("the preview does not scroll:\n%s", first)
	}
	h.send(tea.MouseWheelMsg{X: 40, Y: 5, Button: tea.MouseWheelDown})
	if h.m.preview.top != 1 {
		t.Errorf("the wheel scrolled the preview to line %d, want 1", h.m.preview.top)
	}
	h.press("G")
	last := h.screen()
	if last == first || !strings.Contains(last, "openbsd_amd64") || !strings.Contains(last, "no place holds the locked") {
		t.Errorf("after G:\n%s", last)
	}
	h.press("esc")
	if h.m.preview != nil || h.m.status().text != "the lock files were left as they are" {
		t.Errorf("esc: preview %v, status %q", h.m.preview != nil, h.m.status().text)
	}
	if now, _ := os.ReadFile("infra/.terraform.lock.hcl"); !bytes.Equal(now, before) {
		t.Error("esc wrote the lock file")
	}
}

// A lock file changed between the preview and enter (its provider moved
// to another version) is left as it now is, and the status line names it
// and says to press C again.
func TestLockViewFillChangedMeanwhile(t *testing.T) {
	cfg, _, _ := fillWorld(t)
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	h.press("C")
	h.until("the preview", func(m Model) bool { return m.preview != nil })
	f, err := lockfile.Load("infra/.terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	alpha := cfg.Locks.Entries[0].Provider
	old, _ := backends.ParseVersion("1.0.0")
	if err := f.Set(lockfile.Provider{Addr: alpha, Version: old}); err != nil {
		t.Fatal(err)
	}
	if err := f.Save("infra/.terraform.lock.hcl"); err != nil {
		t.Fatal(err)
	}
	moved := f.Bytes()
	h.press("enter")
	h.until("the write's answer", func(m Model) bool { return !m.lockv().lock.filling && m.preview == nil })
	st := h.m.status()
	if st.kind != statusBad || !strings.Contains(st.text, "infra/.terraform.lock.hcl: it changed since the preview") || !strings.Contains(st.text, "press C again") {
		t.Errorf("status %v %q", st.kind, st.text)
	}
	if now, _ := os.ReadFile("infra/.terraform.lock.hcl"); !bytes.Equal(now, moved) {
		t.Errorf("the file changed meanwhile was written:\n%s", now)
	}
}

// A place holding a package other than the locked one (≠: rebuilt under
// the same name) is never where C takes hashes from: ./mirror's
// darwin_arm64 differs, so its hashes come from the origin, and the file
// is what `tfmirror lock` writes from the origin.
func TestLockViewFillNotFromDiffering(t *testing.T) {
	cfg, want, _ := fillWorld(t)
	dir := cfg.Mirrors[0].Reader.(*fs.Mirror).Dir()
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.1.0", "darwin_arm64")
	backendtest.WritePacked(t, dir, []backendtest.Seed{{Package: pkg, Zip: backendtest.ProviderZip(t, pkg, "rebuilt")}})
	m, err := fs.Open("./mirror", dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(t.Context(), pkg.Provider); err != nil {
		t.Fatal(err)
	}
	cfg.Mirrors[0].Reader = m
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	_, platforms, marks := matrixData(h.m)
	if col := slices.Index(platforms, "darwin_arm64"); col < 0 || marks[0][col][0] != theme.MarkDiffers {
		t.Fatalf("darwin_arm64 in ./mirror is not marked ≠: %v %v", platforms, marks)
	}
	h.press("C")
	h.until("the preview", func(m Model) bool { return m.preview != nil })
	if s := h.screen(); !strings.Contains(s, "darwin_arm64 from [2] ./origin") {
		t.Errorf("preview:\n%s", s)
	}
	h.press("enter")
	h.until("the lock written", func(m Model) bool { return !m.lockv().lock.filling && tied(m) })
	if got, _ := os.ReadFile("infra/.terraform.lock.hcl"); !bytes.Equal(got, want) {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
}

// An OCI mirror states only the zh: of what it holds (its layers'
// digests): where it is the one place holding a platform the lock has no
// h1: of, the preview says that only zh: is known, and adds nothing.
func TestLockViewFillOnlyZh(t *testing.T) {
	cfg, _, _ := fillWorld(t)
	origin := cfg.Mirrors[1].Reader
	reg := ocitest.New(t)
	tmpl := reg.Host() + "/tf/${namespace}/${type}"
	o, err := oci.Open("oci://"+tmpl, tmpl, oci.Options{RootCAs: reg.RootCAs(), Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	alpha := cfg.Locks.Entries[0]
	as, err := origin.Archives(t.Context(), alpha.Provider, alpha.Locked.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Platform.String() == "windows_amd64" {
			if res := engine.Do(t.Context(), engine.Options{}, sync.Transfer{Src: origin, Dst: o, Archive: a}, nil); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
	}
	cfg.Mirrors[1] = Mirror{Reader: o, Kind: "oci"}
	before, err := os.ReadFile("infra/.terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	h.press("C")
	h.until("the preview", func(m Model) bool { return m.preview != nil })
	s := h.screen()
	if !strings.Contains(s, "windows_amd64 from [2] oci://") || !strings.Contains(s, "only zh: known: no place states this platform's h1:") {
		t.Errorf("preview:\n%s", s)
	}
	h.press("enter")
	if h.m.status().text != "nothing to write: the places state no hash the lock files lack" {
		t.Errorf("status %q", h.m.status().text)
	}
	if now, _ := os.ReadFile("infra/.terraform.lock.hcl"); !bytes.Equal(now, before) {
		t.Error("the lock file was written")
	}
}

// A random walk of keys and sizes in the lock view, C's and L's keys
// among them: every frame fits the terminal, and the lock file is only
// ever what it was or what `tfmirror lock` makes of it.
func TestLockViewRandomKeys(t *testing.T) {
	cfg, want, _ := fillWorld(t)
	before, err := os.ReadFile("infra/.terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	keys := append([]string{"C", "C", "L", "G", "g", "y", "n"}, fuzzKeys...)
	rng := rand.New(rand.NewPCG(34, 34))
	h := newHarness(t, cfg, 80, 24)
	h.until("the lock's hashes tied", tied)
	h.walk(t, 800, 80, 24, true, func() tea.Msg {
		var msg tea.Msg = keyPress(keys[rng.IntN(len(keys))])
		if rng.IntN(10) == 0 {
			msg = randomMsg(rng)
		}
		return msg
	})
	// Nothing may be left writing once the test's directory is gone.
	h.until("C's work done", func(m Model) bool { return !m.lockv().lock.filling })
	got, err := os.ReadFile("infra/.terraform.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("written by C during the walk: %v", bytes.Equal(got, want))
	if !bytes.Equal(got, before) && !bytes.Equal(got, want) {
		t.Errorf("the lock file is neither as it was nor as tfmirror lock writes it:\n%s", got)
	}
}

// From an origin registry, which states no h1:, C downloads the packages
// it hashes (the registry counts the archive requests): the file is what
// `tfmirror lock` writes from the registry for the three platforms, and,
// read again, the view ties the h1: it computed to their platforms:
// complete for 3 of 3, no "locked h1: of no held package".
func TestLockViewFillFromRegistry(t *testing.T) {
	plats := []string{"darwin_arm64", "linux_amd64", "windows_amd64"}
	ver := registrytest.Version{Version: "1.0.0", Archives: map[string][]byte{}}
	var platforms []backends.Platform
	for _, plat := range plats {
		ver.Archives[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
		pl, _ := backends.ParsePlatform(plat)
		platforms = append(platforms, pl)
	}
	// As registry.terraform.io: no "packages" field, no h1: stated.
	reg := registrytest.NewWithOptions(t, registrytest.Options{Faults: registrytest.Faults{NoPackages: true}}, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{ver}})
	src, err := placeopen.Open(t.Context(), "registry://"+reg.Host(), placeopen.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	mirrorDir := t.TempDir()
	alpha := backends.Provider{Hostname: reg.Host(), Namespace: "acme", Type: "alpha"}
	pkgDir := filepath.Join(mirrorDir, reg.Host(), "acme", "alpha")
	os.MkdirAll(pkgDir, 0o755)
	os.WriteFile(filepath.Join(pkgDir, "terraform-provider-alpha_1.0.0_linux_amd64.zip"), ver.Archives["linux_amd64"], 0o644)
	mirror, err := fs.Open("./mirror", mirrorDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	// The lock as init through the registry writes it on linux_amd64:
	// that h1: and every signed zh:.
	v100, _ := backends.ParseVersion("1.0.0")
	lock := func(plats []backends.Platform) *lockfile.File {
		f := lockfile.New(lockfile.HeaderTerraform)
		if err := f.Set(lockfile.Provider{Addr: alpha, Version: v100}); err != nil {
			t.Fatal(err)
		}
		if _, probs, err := lockcheck.UpdateLock(t.Context(), src, f, lockcheck.LockRequest{Platforms: plats}); err != nil || len(probs) > 0 {
			t.Fatalf("lock: %v %v", probs, err)
		}
		return f
	}
	want := lock(platforms).Bytes()
	f := lock(platforms[1:2])
	if err := f.Save(".terraform.lock.hcl"); err != nil {
		t.Fatal(err)
	}
	locks := &Locks{Files: []string{".terraform.lock.hcl"}}
	for p, l := range lockcheck.LockedFromFile(f, ".terraform.lock.hcl") {
		locks.Entries = append(locks.Entries, LockEntry{Provider: p, Locked: l})
	}
	h := newHarness(t, Config{Mirrors: []Mirror{{Reader: mirror, Kind: "fs"}, {Reader: src, Kind: "registry"}}, Locks: locks}, 120, 40)
	h.until("the lock's hashes tied", tied)
	if n, m, _ := h.m.lockv().lockComplete(".terraform.lock.hcl"); n != 1 || m != 3 {
		t.Fatalf("complete for %d of %d, want 1 of 3", n, m)
	}
	archives := func() int {
		n := 0
		for _, r := range reg.Requests() {
			if r.Kind == registrytest.KindArchive {
				n++
			}
		}
		return n
	}
	got0 := archives()
	h.press("C")
	h.until("the preview", func(m Model) bool { return m.preview != nil })
	if s := h.screen(); !strings.Contains(s, "darwin_arm64 from [2] registry://") || !strings.Contains(s, "then 3 of 3") {
		t.Errorf("preview:\n%s", s)
	}
	if n := archives() - got0; n != 2 {
		t.Errorf("C downloaded %d archives, want 2 (darwin_arm64 and windows_amd64)", n)
	}
	h.press("enter")
	h.until("the lock written and tied again", func(m Model) bool {
		n, _, ok := m.lockv().lockComplete(".terraform.lock.hcl")
		return tied(m) && ok && n == 3 && !m.lockv().lock.filling
	})
	if got, _ := os.ReadFile(".terraform.lock.hcl"); !bytes.Equal(got, want) {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
	if s := h.screen(); strings.Contains(s, "of no held package") {
		t.Errorf("the h1: C computed are not tied:\n%s", s)
	}
}

// A lock file that cannot be read any more when enter is pressed (here a
// directory took its place) is named on the status line, with what went
// wrong and what to do, and nothing is written.
func TestLockViewFillUnreadable(t *testing.T) {
	cfg, _, _ := fillWorld(t)
	h := newHarness(t, cfg, 120, 40)
	h.until("the lock's hashes tied", tied)
	h.press("C")
	h.until("the preview", func(m Model) bool { return m.preview != nil })
	if err := os.Remove("infra/.terraform.lock.hcl"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("infra/.terraform.lock.hcl", 0o755); err != nil {
		t.Fatal(err)
	}
	h.press("enter")
	h.until("the write's answer", func(m Model) bool { return !m.lockv().lock.filling && m.preview == nil })
	st := h.m.status()
	if st.kind != statusBad || !strings.HasPrefix(st.text, "✗ infra/.terraform.lock.hcl: cannot read this lock file") || !strings.Contains(st.text, "nothing written: fix it, then press C again") {
		t.Errorf("status %v %q", st.kind, st.text)
	}
	if fi, err := os.Stat("infra/.terraform.lock.hcl"); err != nil || !fi.IsDir() {
		t.Errorf("the directory was replaced: %v", err)
	}
}
