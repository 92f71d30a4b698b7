package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	placeopen "github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

const releaseAddr = "registry.opentofu.org/acme/alpha"

// releaseWorld writes a signed release of acme/alpha 1.2.3 for three
// platforms into ./dist of a fresh working directory (its key inside it,
// as publishers keep it), and opens it as the place factory opens a
// release directory given with -p and --signing-key.
func releaseWorld(t *testing.T) (backends.Reader, string, *backendtest.Signer, sync.Selection) {
	t.Helper()
	dist := filepath.Join(t.TempDir(), "dist")
	signer := backendtest.NewSeededSigner(t, "acme releases", 31)
	key := signer.ReleaseDir(t, dist, releaseAddr, "1.2.3", "darwin_arm64", "linux_amd64", "windows_amd64")
	f, err := backends.ParseProviderFilter(releaseAddr)
	if err != nil {
		t.Fatal(err)
	}
	if !placeopen.IsRelease(dist) {
		t.Fatalf("%s is not taken for a release directory", dist)
	}
	// As the place factory opens it (placeopen.Open), under a short name
	// that does not depend on the temp dir.
	src, err := push.OpenReleaseDir(t.Context(), "./dist", dist, push.ReleaseOptions{Naming: push.Naming{Providers: []backends.ProviderFilter{f}}, SigningKeys: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	return src, dist, signer, sync.Selection{Providers: []backends.ProviderFilter{f}}
}

// TestReleasePlace renders a signed release directory opened as a place
// beside a mirror that lacks it, at 80x24 and 120x40: its platforms are
// cells, stated by the signed SHA256SUMS; selected, queued and landed,
// each job names the signer. Regenerate with go test ./ui -run
// TestReleasePlace -update.
func TestReleasePlace(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		t.Run(itoa(size.w)+"x"+itoa(size.h), func(t *testing.T) {
			src, _, signer, sel := releaseWorld(t)
			dst, err := fs.Open("./mirror", t.TempDir(), fs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, Config{Mirrors: []Mirror{{Reader: src, Kind: "release"}, {Reader: dst, Kind: "fs"}}, Selection: sel}, size.w, size.h)
			snap := func(name string) {
				t.Helper()
				t.Run(name, func(t *testing.T) { golden.RequireEqual(t, []byte(h.screen())) })
			}
			h.until("load", idle)
			snap("start")
			h.press("enter")
			snap("matrix")
			h.press("r")
			snap("selection")
			h.press("enter")
			snap("queue_confirm")
			h.press("enter")
			h.until("the jobs to land and the cells to update", func(m Model) bool { return jobsEnded(3)(m) && idle(m) })
			snap("jobs_done")
			tr := h.m.jobs.Tracker()
			for _, id := range tr.Order {
				if j := tr.Jobs[id]; j.State != engine.Done || j.Info.Signer == nil || j.Info.Signer.Fingerprint != signer.Fingerprint() {
					t.Errorf("job %s: %s, signer %+v; want done, signed by %s", j.Info.Package, j.State, j.Info.Signer, signer.Fingerprint())
				}
			}
			// The jobs pane: Details of its job name the signer (not a
			// golden screen: it shows the temp dir and the time taken).
			h.press("tab")
			if scr := h.screen(); size.w >= 120 && (!strings.Contains(scr, "signed by key "+signer.KeyID()[:8]) || !strings.Contains(scr, signer.Fingerprint()[:24])) {
				t.Errorf("Details of the job do not name the signer (key %s, fingerprint %s):\n%s", signer.KeyID(), signer.Fingerprint(), scr)
			}
		})
	}
}

// TestEndToEndReleaseToOCI pushes a signed release directory from the UI
// as a user would: its cells selected and queued to an OCI mirror (the
// distribution registry in-process) land as `tfmirror push` lands them,
// with the signed SHA256SUMS kept as a provenance referrer, so verify of
// the registry names the publisher's key.
func TestEndToEndReleaseToOCI(t *testing.T) {
	src, _, signer, sel := releaseWorld(t)
	reg := ocitest.New(t)
	r, err := placeopen.Open(t.Context(), "oci://"+reg.Host()+"/tf/${namespace}/${type}", placeopen.Options{CACertFile: reg.CAFile(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	dst := r.(backends.Writer)
	tm, waitFor, press := newProgram(t, Config{Mirrors: []Mirror{{Reader: src, Kind: "release"}, {Reader: dst, Kind: "oci"}}, Selection: sel})
	waitFor("acme/alpha", "1.2.3", "windows_amd64", listed)
	press("enter", "r", "enter") // the matrix; the row of 1.2.3; queue…
	waitFor("3 to copy: 3 from [1] ./dist")
	press("enter")
	waitFor("3 done")
	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(e2eWait)).(Model)
	tr := final.jobs.Tracker()
	for _, id := range tr.Order {
		if j := tr.Jobs[id]; j.State != engine.Done || j.Info.Signer == nil || j.Info.Signer.Fingerprint != signer.Fingerprint() {
			t.Errorf("job %s: %s, signer %+v; want done, signed by %s", j.Info.Package, j.State, j.Info.Signer, signer.Fingerprint())
		}
	}
	again, err := placeopen.Open(t.Context(), "oci://"+reg.Host()+"/tf/${namespace}/${type}", placeopen.Options{CACertFile: reg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := backends.ParseProvider(releaseAddr)
	v, _ := backends.ParseVersion("1.2.3")
	if signed, err := sync.ReadProvenance(t.Context(), again, p, v, provenance.Options{}); err != nil || signed == nil {
		t.Fatalf("the registry keeps no provenance of %s 1.2.3 (%v)", p, err)
	}
	found, err := sync.VerifyPlaceWith(t.Context(), again, sel, sync.VerifyOptions{})
	if err != nil || len(found) != 3 {
		t.Fatalf("verify of the registry: %d packages, %v; want 3", len(found), err)
	}
	for _, f := range found {
		if f.Status != sync.StatusOK || f.Signer == nil || f.Signer.Fingerprint != signer.Fingerprint() {
			t.Errorf("verify %s: %s %q, signer %+v; want ok, signed by %s", f.Package, f.Status, f.Detail, f.Signer, signer.Fingerprint())
		}
	}
}

// A release directory's own files stay as they were: nothing is written
// into a read-only place.
func TestReleasePlaceIsReadOnly(t *testing.T) {
	src, dist, _, _ := releaseWorld(t)
	if _, ok := src.(backends.Writer); ok {
		t.Fatal("a release directory opened as a writable place")
	}
	if _, err := placeopen.OpenWriter(t.Context(), dist, placeopen.Options{}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("OpenWriter of a release directory: %v", err)
	}
	if entries, _ := os.ReadDir(dist); len(entries) != 6 {
		t.Errorf("dist holds %d files, want the 6 written", len(entries))
	}
}

// A release checked with a key that did not sign it says so as it opens,
// and nothing of it is copied: its jobs fail naming the signature.
func TestReleasePlaceWrongKey(t *testing.T) {
	_, dist, _, sel := releaseWorld(t)
	other := backendtest.NewSigner(t, "someone else")
	key := filepath.Join(t.TempDir(), "other.asc")
	if err := os.WriteFile(key, []byte(other.Armor), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := push.OpenReleaseDir(t.Context(), "./dist", dist, push.ReleaseOptions{Naming: push.Naming{Providers: sel.Providers}, SigningKeys: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := fs.Open("./mirror", t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Mirrors: []Mirror{{Reader: src, Kind: "release"}, {Reader: dst, Kind: "fs"}}, Selection: sel}, 120, 40)
	h.until("load", idle)
	h.press("enter", "r", "enter", "enter")
	h.until("the jobs to end", func(m Model) bool { return jobsEnded(3)(m) && idle(m) })
	tr := h.m.jobs.Tracker()
	for _, id := range tr.Order {
		if j := tr.Jobs[id]; j.State != engine.Failed || j.Err == nil || !strings.Contains(j.Err.Error(), other.Fingerprint()) {
			t.Errorf("job %s: %s %v; want failed naming the key %s", j.Info.Package, j.State, j.Err, other.Fingerprint())
		}
	}
	h.press("e")
	if scr := h.screen(); !strings.Contains(scr, "1 warning") || !strings.Contains(scr, "does not") {
		t.Errorf("the events do not show the signature that does not check:\n%s", scr)
	}
}
