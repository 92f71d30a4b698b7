package sync_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// syncEvents plans src -> dst, runs the missing items, and returns every
// event in order.
func syncEvents(t *testing.T, src backends.Reader, dst backends.Writer, sel sync.Selection, opts engine.Options) []engine.Event {
	t.Helper()
	var evs []engine.Event
	runMissing(t, context.Background(), src, dst, sel, opts, func(ev engine.Event) { evs = append(evs, ev) })
	return evs
}

// A registry that states no sizes (no "packages"): the job's progress
// reports the size the download's Content-Length states, so front ends
// can show a percentage; zh: is checked against the signed SHA256SUMS and
// nothing is inflated, so there is no hashing phase and no h1:.
func TestProgressTotalFromTheStream(t *testing.T) {
	z := backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64"), "")
	reg := registrytest.NewWithOptions(t, registrytest.Options{Faults: registrytest.Faults{NoPackages: true}},
		registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{{Version: "1.0.0", Archives: map[string][]byte{"linux_amd64": z}}}})
	src, err := place.Open(context.Background(), "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	dstDir := filepath.Join(t.TempDir(), "m")
	dst, _ := fs.Open(dstDir, dstDir, fs.Options{Create: true})
	var total int64 = -1
	var done *engine.JobDone
	for _, ev := range syncEvents(t, src, dst, mustSelection(t, []string{"acme/alpha"}, "1.0.0"), engine.Options{}) {
		switch ev := ev.(type) {
		case engine.JobQueued:
			if ev.Job.Size != -1 {
				t.Fatalf("the registry stated size %d; this test wants one that states none", ev.Job.Size)
			}
		case engine.JobProgress:
			total = ev.Total
			if ev.Phase == engine.PhaseHashing {
				t.Error("a hashing phase, though the signed zh: needs no inflating")
			}
		case engine.JobDone:
			done = &ev
		case engine.JobFailed:
			t.Fatal(ev.Err)
		}
	}
	if total != int64(len(z)) {
		t.Errorf("progress total %d, want the Content-Length %d", total, len(z))
	}
	if done == nil || done.Sums.H1 != "" || done.Sums.ZH == "" || !done.Verified {
		t.Errorf("done %+v: want zh: verified and no h1:", done)
	}
}

// Where h1: is needed (a directory without index documents: nothing
// vouches for its zips), the job reports a hashing phase once every byte
// is in, before it is done.
func TestProgressHashingPhase(t *testing.T) {
	srcDir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, srcDir, seeds)
	src, _ := fs.Open(srcDir, srcDir, fs.Options{})
	dstDir := filepath.Join(t.TempDir(), "m")
	dst, _ := fs.Open(dstDir, dstDir, fs.Options{Create: true})
	hashed, done := false, false
	for _, ev := range syncEvents(t, src, dst, sync.Selection{}, engine.Options{}) {
		switch ev := ev.(type) {
		case engine.JobProgress:
			if ev.Phase == engine.PhaseHashing {
				hashed = true
				if done {
					t.Error("hashing reported after the job was done")
				}
			}
		case engine.JobDone:
			done = true
			if ev.Sums.H1 == "" {
				t.Error("no h1: computed, though nothing vouches for the zip")
			}
		case engine.JobFailed:
			t.Fatal(ev.Err)
		}
	}
	if !hashed || !done {
		t.Fatalf("hashing phase reported: %v; done: %v", hashed, done)
	}
}
