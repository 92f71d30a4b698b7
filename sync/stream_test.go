package sync_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Ordered hands results on in order, never makes more than window of them
// ahead of the one being handed on, and after an error hands on no more
// but lets the work end.
func TestOrdered(t *testing.T) {
	for _, tc := range []struct {
		name             string
		workers, window  int
		n, failAt        int
		wantDone, wantOK int
	}{
		{"in order", 4, 6, 100, -1, 100, 100},
		{"window below workers is workers", 3, 1, 40, -1, 40, 40},
		{"nothing to do", 2, 4, 0, -1, 0, 0},
		{"error stops the handing on", 2, 4, 30, 7, 8, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var handed atomic.Int64
			var worked atomic.Int64
			var got []int
			err := sync.Ordered(context.Background(), tc.workers, tc.window, tc.n, func(i int) int {
				worked.Add(1)
				if ahead := int64(i) - handed.Load(); tc.failAt < 0 && ahead >= int64(max(tc.window, tc.workers)) {
					t.Errorf("work %d started %d ahead of the one handed on", i, ahead)
				}
				return i * i
			}, func(i, r int) error {
				got = append(got, i)
				if r != i*i {
					t.Errorf("done(%d) got %d", i, r)
				}
				handed.Add(1)
				if i == tc.failAt {
					return fmt.Errorf("stop at %d", i)
				}
				return nil
			})
			if (err != nil) != (tc.failAt >= 0) {
				t.Fatalf("err = %v", err)
			}
			if len(got) != tc.wantDone || !slices.IsSorted(got) {
				t.Errorf("done called for %v, want 0..%d in order", got, tc.wantDone-1)
			}
			if int(worked.Load()) != tc.wantOK {
				t.Errorf("work called %d times, want %d", worked.Load(), tc.wantOK)
			}
		})
	}
}

// A cancelled context ends Ordered with its error, starting nothing more.
func TestOrderedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var worked atomic.Int64
	err := sync.Ordered(ctx, 2, 2, 1000, func(i int) int {
		worked.Add(1)
		return i
	}, func(i, _ int) error {
		if i == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := worked.Load(); n > 10 {
		t.Errorf("%d calls of work after cancelling at the 4th (window 2)", n)
	}
}

// lineRecorder keeps what a run shows, as lines that do not depend on timing.
type lineRecorder struct {
	lines []string
	// jobs are the packages of job events, whose order the workers decide.
	jobs []string
}

func (r *lineRecorder) Show(ev engine.Event) {
	switch ev := ev.(type) {
	case sync.PlanItemLeft:
		r.lines = append(r.lines, fmt.Sprintf("%s %s: %s", ev.Item.Status, ev.Item.Archive.Package, ev.Item.Detail))
	case engine.JobDone:
		r.jobs = append(r.jobs, fmt.Sprintf("done %d bytes", ev.Bytes))
	case engine.JobQueued:
		r.lines = append(r.lines, "queued")
		r.jobs = append(r.jobs, "queued "+ev.Job.Package.String())
	case engine.IndexWritten:
		r.jobs = append(r.jobs, fmt.Sprintf("index %s %v", ev.Provider, ev.Err))
	}
}

// A plan streamed into a run provider by provider (PlanEach, Run.Add)
// shows the same events in the same order and ends in the same summary as
// the whole plan given to Sync: present, missing, conflicting and
// unavailable packages alike.
func TestRunStreamedIsSyncOfWholePlan(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	syncAll(t, ctx, w.src, w.dst, sync.Selection{}, engine.Options{})
	// A conflict (alpha 1.0.0 linux_amd64 rebuilt in the source), a
	// missing package (alpha 1.1.0 linux_amd64), and with linux_arm64 asked
	// for, a platform no version offers.
	s := w.seeds[0]
	if err := os.WriteFile(filepath.Join(w.srcDir, "example.com/acme/alpha", s.Package.Filename()), backendtest.ProviderZip(t, s.Package, "other build"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(w.srcDir, "example.com/acme/alpha", s.Package.Version.String()+".json"))
	w.src.Flush(ctx, s.Package.Provider)
	os.Remove(filepath.Join(w.dstDir, "example.com/acme/alpha", w.seeds[3].Package.Filename()))
	sel := sync.Selection{Platforms: backendtest.Platforms(t, "linux_amd64", "darwin_arm64", "linux_arm64")}

	run := func(streamed bool) (*lineRecorder, sync.Summary) {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(w.dstDir)); err != nil {
			t.Fatal(err)
		}
		dst, err := fs.Open("dst", dir, fs.Options{}) // one name in messages
		if err != nil {
			t.Fatal(err)
		}
		rec := &lineRecorder{}
		eng := engine.NewEngine(ctx, engine.Options{Jobs: 1})
		if !streamed {
			plan, err := sync.MakePlan(ctx, w.src, dst, sel, sync.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return rec, sync.Sync(ctx, eng, dst, false, rec, plan)
		}
		r := sync.NewRun(dst, false, rec)
		parts := 0
		err = sync.PlanEach(ctx, w.src, dst, sel, sync.PlanOptions{}, func(p *sync.Plan) error {
			parts++
			r.Add(p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if parts != 2 {
			t.Errorf("PlanEach made %d parts of 2 providers", parts)
		}
		// The packages present before the first conflict are shown as
		// planned; from it on, what a person reads waits for Finish (after
		// the caller's warnings).
		if len(rec.lines) != 4 {
			t.Errorf("%d packages shown before Finish, want the 4 present before the conflict: %q", len(rec.lines), rec.lines)
		}
		return rec, r.Finish(ctx, eng)
	}
	whole, wholeSum := run(false)
	streamed, streamedSum := run(true)
	if !slices.Equal(whole.lines, streamed.lines) {
		t.Errorf("streamed run showed\n%q\nthe whole plan's\n%q", streamed.lines, whole.lines)
	}
	slices.Sort(whole.jobs)
	slices.Sort(streamed.jobs)
	if !slices.Equal(whole.jobs, streamed.jobs) {
		t.Errorf("streamed run's jobs\n%q\nthe whole plan's\n%q", streamed.jobs, whole.jobs)
	}
	type counts struct{ done, present, skipped, failed, held int }
	c := func(s sync.Summary) counts {
		return counts{s.Done, s.Present, len(s.Skipped), len(s.Failed), len(s.Held)}
	}
	if c(wholeSum) != c(streamedSum) || c(wholeSum) != (counts{1, 10, 7, 0, 2}) {
		t.Errorf("summary counts: streamed %+v, whole plan %+v, want {1 10 7 0 2}", c(streamedSum), c(wholeSum))
	}
}

// A run streamed a plan of packages all present shows each as it is
// planned: none waits for Finish, so none is kept.
func TestRunShowsPresentAsPlanned(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	syncAll(t, ctx, w.src, w.dst, sync.Selection{}, engine.Options{})
	rec := &lineRecorder{}
	r := sync.NewRun(w.dst, false, rec)
	if err := sync.PlanEach(ctx, w.src, w.dst, sync.Selection{}, sync.PlanOptions{}, func(p *sync.Plan) error {
		r.Add(p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(rec.lines) != len(w.seeds) {
		t.Errorf("%d packages shown before Finish, want all %d", len(rec.lines), len(w.seeds))
	}
	if sum := r.Finish(ctx, engine.NewEngine(ctx, engine.Options{})); sum.Present != len(w.seeds) || !sum.OK() {
		t.Errorf("summary: %+v", sum)
	}
}

// PlanEach fails as MakePlan does when the selection matches nothing.
func TestPlanEachChecksTheWhole(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sel := sync.Selection{Providers: backendtest.ProviderFilters(t, "example.com/acme/gamma")}
	_, want := sync.MakePlan(ctx, w.src, w.dst, sel, sync.PlanOptions{})
	got := sync.PlanEach(ctx, w.src, w.dst, sel, sync.PlanOptions{}, func(*sync.Plan) error { return nil })
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Errorf("PlanEach: %v; MakePlan: %v", got, want)
	}
}

// ResolveEach hands on, provider by provider, what Resolve lists.
func TestResolveEachIsResolve(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sel := sync.Selection{Platforms: backendtest.Platforms(t, "linux_amd64", "darwin_arm64")}
	whole, err := sel.Resolve(ctx, w.src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	calls := 0
	if err := sel.ResolveEach(ctx, w.src, func(p backends.Provider, as []backends.Archive) error {
		calls++
		for _, a := range as {
			if a.Provider != p {
				t.Errorf("%s handed on with %s", a.Package, p)
			}
			got = append(got, a.Package.String())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range whole {
		want = append(want, a.Package.String())
	}
	if calls != 2 || !slices.Equal(got, want) {
		t.Errorf("%d calls handed on %q, Resolve lists %q", calls, got, want)
	}
	if sel.Names() || !(sync.Selection{Providers: backendtest.ProviderFilters(t, "example.com/acme/alpha")}).Names() {
		t.Error("Names: wrong")
	}
}
