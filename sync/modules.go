package sync

import (
	"context"
	"fmt"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing"
)

// The provider Engine moves archives a source states hashes for, one zip
// per platform, and flushes index documents per provider. A module package
// is different: a registry only says where it lives, so the package has to
// be fetched and packed before anything can be compared, and there is no
// index to flush. ModuleEngine runs those jobs as Tasks on an Engine: the
// same workers, retries and events, so front ends show module syncs as they
// show provider syncs (JobInfo.Name names the module).

// ModuleJobSpec is one module version to mirror.
type ModuleJobSpec struct {
	Module   modules.Module
	Version  modules.Version
	Location modules.Location
	// Src names the registry, for messages.
	Src     string
	Builder modules.Builder
	Dst     modules.Writer
	// Force replaces a different package the destination holds.
	Force bool
}

// ModuleResult is how a module job ended.
type ModuleResult struct {
	ID   JobID
	Spec ModuleJobSpec
	// Sums of the package built from the source (zero when it failed
	// before).
	Sums   hashing.Sums
	Stored modules.Stored
	Err    error
}

// ModuleEngine runs module jobs on an Engine and keeps how each ended.
type ModuleEngine struct {
	eng *Engine

	mu      gosync.Mutex
	results []*ModuleResult // in queue order
}

// NewModuleEngine starts a module engine whose workers run until ctx is
// cancelled or Close is called and the queue drains. Read Events until it
// is closed.
func NewModuleEngine(ctx context.Context, opts Options) *ModuleEngine {
	return &ModuleEngine{eng: NewEngine(ctx, opts)}
}

// Events is the event stream; it is closed once Close (or cancellation)
// has let every job end.
func (e *ModuleEngine) Events() <-chan Event { return e.eng.Events() }

// Enqueue adds jobs and returns their ids.
func (e *ModuleEngine) Enqueue(specs ...ModuleJobSpec) []JobID {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []JobID
	for _, s := range specs {
		// Until an attempt says otherwise, the job did not run (a job
		// cancelled while queued never does). Attempts update the result
		// under e.mu, which this holds until the id is set.
		r := &ModuleResult{Spec: s, Err: context.Canceled}
		got := e.eng.Enqueue(JobSpec{Task: &moduleTask{spec: s, e: e, r: r}})
		if len(got) == 0 {
			break // closed
		}
		r.ID = got[0]
		e.results = append(e.results, r)
		ids = append(ids, r.ID)
	}
	return ids
}

// Cancel stops a queued or running job; the destination is left as it was
// (a package lands whole or not at all).
func (e *ModuleEngine) Cancel(id JobID) { e.eng.Cancel(id) }

// Retry queues a failed or cancelled job again under the same id.
func (e *ModuleEngine) Retry(id JobID) bool { return e.eng.Retry(id) }

// Close lets the workers exit once the queue is empty.
func (e *ModuleEngine) Close() { e.eng.Close() }

// Results returns how each job ended, in queue order. Call it once Events
// is closed.
func (e *ModuleEngine) Results() []ModuleResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]ModuleResult, 0, len(e.results))
	for _, r := range e.results {
		out = append(out, *r)
	}
	return out
}

// record updates a task's result under the lock.
func (t *moduleTask) record(f func(r *ModuleResult)) {
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	f(t.r)
}

// moduleTask is one module version as an Engine task.
type moduleTask struct {
	spec ModuleJobSpec
	e    *ModuleEngine
	r    *ModuleResult
}

func (t *moduleTask) Info() JobInfo {
	return JobInfo{Name: t.spec.Module.String() + " " + t.spec.Version.String(), Src: t.spec.Src, Dst: t.spec.Dst.String(), Size: -1}
}

// Attempt builds the package from its location, then stores it; the
// destination compares contents and writes only what differs.
func (t *moduleTask) Attempt(ctx context.Context, progress func(int64), check func(hashing.Check)) (done JobDone, err error) {
	s := t.spec
	defer func() { t.record(func(r *ModuleResult) { r.Err = err }) }()
	start := time.Now()
	pkg, err := s.Builder.Build(ctx, s.Module, s.Version, s.Location, progress)
	if err != nil {
		return JobDone{}, &backends.OpError{Op: "fetch", Side: "source", Place: s.Src, Err: err}
	}
	defer pkg.Remove()
	t.record(func(r *ModuleResult) { r.Sums = pkg.Sums })
	if err := ctx.Err(); err != nil {
		return JobDone{}, err
	}
	stored, err := s.Dst.Put(ctx, pkg, s.Force, progress)
	if err != nil {
		return JobDone{}, &backends.OpError{Op: "store", Side: "destination", Place: s.Dst.String(), Err: err}
	}
	res := hashing.Result{Sums: pkg.Sums, Checks: stored.Checks}
	for _, c := range stored.Checks {
		check(c)
	}
	if err := res.Err(); err != nil {
		return JobDone{}, &backends.OpError{Op: "verify", Side: "destination", Place: s.Dst.String(), Err: fmt.Errorf("%s %s: %w", s.Module, s.Version, err)}
	}
	t.record(func(r *ModuleResult) { r.Stored = stored })
	return JobDone{Sums: pkg.Sums, Result: res, Bytes: stored.Bytes, Elapsed: time.Since(start), Verified: res.Verified()}, nil
}

// ModuleJobs makes a job for each listed version whose location the
// registry gave; the others come back as unavailable.
func ModuleJobs(ls modules.Listings, src string, b modules.Builder, dst modules.Writer, force bool) (specs []ModuleJobSpec, unavailable []modules.Listing) {
	for _, it := range ls.Items {
		if it.Err != nil || it.Source == nil {
			unavailable = append(unavailable, it)
			continue
		}
		specs = append(specs, ModuleJobSpec{Module: it.Module, Version: it.Version, Location: *it.Source, Src: src, Builder: b, Dst: dst, Force: force})
	}
	return specs, unavailable
}
