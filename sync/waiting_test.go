package sync_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// waitTask is a job that, when waits is set, tells the engine it waits on
// something shared (backends.Waiting), then waits until released; one
// without waits just waits.
type waitTask struct {
	waits   bool
	started chan<- struct{}
	release <-chan struct{}
	running *atomic.Int32
	peak    *atomic.Int32
}

func (w waitTask) Info() engine.JobInfo { return engine.JobInfo{Name: "wait", Size: -1} }

func (w waitTask) Attempt(ctx context.Context, env engine.Env) (engine.JobDone, error) {
	n := w.running.Add(1)
	defer w.running.Add(-1)
	for p := w.peak.Load(); n > p && !w.peak.CompareAndSwap(p, n); p = w.peak.Load() {
	}
	if w.waits {
		backends.Waiting(ctx)
	}
	w.started <- struct{}{}
	select {
	case <-w.release:
		return engine.JobDone{}, nil
	case <-ctx.Done():
		return engine.JobDone{}, ctx.Err()
	}
}

type waitWorld struct {
	started chan struct{}
	release chan struct{}
	running atomic.Int32
	peak    atomic.Int32
}

func (w *waitWorld) tasks(n int, waits bool) []engine.Task {
	out := make([]engine.Task, n)
	for i := range out {
		out[i] = waitTask{waits: waits, started: w.started, release: w.release, running: &w.running, peak: &w.peak}
	}
	return out
}

// awaitStarts waits for n jobs to reach their wait, or fails after a
// generous bound.
func (w *waitWorld) awaitStarts(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for i := range n {
		select {
		case <-w.started:
		case <-deadline:
			t.Fatalf("%d of %d jobs reached their wait", i, n)
		}
	}
}

// noMoreStarts checks that no further job reaches its wait for a while:
// the check cannot fail on a slow machine, only miss a defect on one.
func (w *waitWorld) noMoreStarts(t *testing.T, why string) {
	t.Helper()
	select {
	case <-w.started:
		t.Fatalf("another job started: %s", why)
	case <-time.After(200 * time.Millisecond):
	}
}

// A job that waits on something shared (a group sync of small files) lets
// another start, up to 32 per job the user asked for, so a group holds the
// files of more than --jobs archives; the workers started for them end
// with their jobs, so jobs that do not wait run --jobs at a time again.
func TestWaitingJobsLetOthersStart(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		t.Run(fmt.Sprintf("jobs=%d", jobs), func(t *testing.T) {
			w := &waitWorld{started: make(chan struct{}, 1024), release: make(chan struct{})}
			eng := engine.NewEngine(context.Background(), engine.Options{Jobs: jobs})
			defer eng.Stop()
			go func() {
				for range eng.Events() {
				}
			}()
			bound := jobs + 32*jobs
			eng.Enqueue(w.tasks(bound+5, true)...)
			w.awaitStarts(t, bound)
			w.noMoreStarts(t, fmt.Sprintf("more than %d jobs (--jobs %d) run at once", bound, jobs))
			close(w.release)
			w.awaitStarts(t, 5)
			for w.running.Load() != 0 {
				time.Sleep(time.Millisecond)
			}
			if p := w.peak.Load(); int(p) != bound {
				t.Fatalf("peak %d jobs at once, want %d", p, bound)
			}

			// Jobs that do not wait: --jobs at a time.
			w.release = make(chan struct{})
			w.peak.Store(0)
			eng.Enqueue(w.tasks(jobs+1, false)...)
			w.awaitStarts(t, jobs)
			w.noMoreStarts(t, fmt.Sprintf("more than --jobs %d jobs that do not wait run at once", jobs))
			close(w.release)
			w.awaitStarts(t, 1)
		})
	}
}
