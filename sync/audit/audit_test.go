package audit_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/audit"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// TestEvents: a run's events become lines (landed, refused, unlisted,
// removed) that read back; jobs of modules and queued jobs that never
// landed leave none.
func TestEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path, "sync", "tfmirror test")
	if err != nil {
		t.Fatal(err)
	}
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	other := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	signer := &provenance.Signer{KeyID: "ABCD", Fingerprint: "00AB"}
	sums := hashing.Sums{H1: "h1:x", ZH: "zh:" + hashing.Hash(strings.Repeat("a", 64))}
	for _, ev := range []engine.Event{
		engine.JobQueued{Job: engine.JobInfo{ID: 1, Package: pkg, Src: "registry://r", Dst: "./m", Signer: signer}},
		engine.JobQueued{Job: engine.JobInfo{ID: 2, Package: other, Src: "registry://r", Dst: "./m"}},
		engine.JobQueued{Job: engine.JobInfo{ID: 3, Name: "a module", Src: "registry://r", Dst: "./m"}},
		engine.JobDone{ID: 1, Sums: sums, Bytes: 10},
		engine.JobDone{ID: 3},
		engine.JobFailed{ID: 2, Err: errors.New("no such file")}, // never landed
		engine.JobFailed{ID: 1, Err: errors.New("write index: disk full")},
		sync.PlanItemLeft{Item: sync.Item{Archive: backends.Archive{Package: other}, Status: sync.StatusError, Detail: "not mirrored: refused"}, Src: "registry://r", Dst: "./m"},
		sync.PlanItemLeft{Item: sync.Item{Archive: backends.Archive{Package: other}, Status: sync.StatusPresent}, Src: "registry://r", Dst: "./m"},
		sync.PackageRemoved{Archive: backends.Archive{Package: pkg, Size: 10, Evidence: []hashing.Evidence{{Hashes: []hashing.Hash{sums.ZH}}}}, Dst: "./m", Signer: signer},
	} {
		l.Show(ev)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	es, err := audit.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Event+" "+e.Platform)
		if e.Command != "sync" || e.Tool != "tfmirror test" || e.Time.IsZero() || e.Provider != "example.com/acme/alpha" {
			t.Errorf("entry %+v", e)
		}
	}
	if want := "landed linux_amd64,unlisted linux_amd64,refused darwin_arm64,removed linux_amd64"; strings.Join(got, ",") != want {
		t.Fatalf("events %s, want %s", strings.Join(got, ","), want)
	}
	e, ok := audit.Entered(es, "./m", sums.ZH)
	if !ok || e.Signer == nil || e.Signer.KeyID != "ABCD" || e.Source != "registry://r" {
		t.Fatalf("entered: %+v %v", e, ok)
	}
}

// TestConcurrentWriters: logs open on one file in several places append
// whole lines, never mixed.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const writers, lines = 4, 200
	var wg gosync.WaitGroup
	for w := range writers {
		l, err := audit.Open(path, "sync", "tfmirror test")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
				pkg.Provider.Type = strings.Repeat("x", 1+(w*lines+i)%300) // lines of many lengths
				l.Show(sync.PackageRemoved{Archive: backends.Archive{Package: pkg}, Dst: "./m"})
			}
			if err := l.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	f, _ := os.Open(path)
	defer f.Close()
	es, err := audit.Read(f)
	if err != nil || len(es) != writers*lines {
		t.Fatalf("%d entries read back, want %d: %v", len(es), writers*lines, err)
	}
}
