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

// A module package is unlike a provider archive: a registry only says where
// it lives, so the package has to be fetched and packed before anything can
// be compared, and there is no index to flush. A ModuleTask runs that as an
// engine Task: the same workers, retries and events as provider transfers,
// so front ends show module syncs as they show provider syncs (JobInfo.Name
// and JobInfo.Module name the module).

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
	Spec ModuleJobSpec
	// Sums of the package built from the source (zero when it failed
	// before).
	Sums   hashing.Sums
	Stored modules.Stored
	Err    error
}

// ModuleTask is one module version to mirror, as an engine Task. It keeps
// how its job ended, for reports that print where each package landed.
type ModuleTask struct {
	spec ModuleJobSpec

	mu gosync.Mutex
	r  ModuleResult
}

var _ Task = (*ModuleTask)(nil)

// NewModuleTask returns the task of one module version.
func NewModuleTask(s ModuleJobSpec) *ModuleTask {
	// Until an attempt says otherwise, the job did not run (a job cancelled
	// while queued never does).
	return &ModuleTask{spec: s, r: ModuleResult{Spec: s, Err: context.Canceled}}
}

// ModuleTasks returns a task for each spec, ready for Engine.Enqueue.
func ModuleTasks(specs []ModuleJobSpec) []Task {
	out := make([]Task, len(specs))
	for i, s := range specs {
		out[i] = NewModuleTask(s)
	}
	return out
}

// ModuleResults returns how each module task among tasks ended, in order.
// Call it once the engine's Events is closed.
func ModuleResults(tasks []Task) []ModuleResult {
	var out []ModuleResult
	for _, t := range tasks {
		if mt, ok := t.(*ModuleTask); ok {
			out = append(out, mt.Result())
		}
	}
	return out
}

// Spec is what the task mirrors.
func (t *ModuleTask) Spec() ModuleJobSpec { return t.spec }

// Result is how the task's last attempt ended.
func (t *ModuleTask) Result() ModuleResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.r
}

// record updates the task's result under the lock.
func (t *ModuleTask) record(f func(r *ModuleResult)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.r)
}

// Info implements Task.
func (t *ModuleTask) Info() JobInfo {
	s := t.spec
	return JobInfo{Name: s.Module.String() + " " + s.Version.String(), Module: s.Module, Src: s.Src, Dst: s.Dst.String(), Size: -1}
}

// Attempt builds the package from its location, then stores it; the
// destination compares contents and writes only what differs.
func (t *ModuleTask) Attempt(ctx context.Context, env Env) (done JobDone, err error) {
	s := t.spec
	defer func() { t.record(func(r *ModuleResult) { r.Err = err }) }()
	start := time.Now()
	pkg, err := s.Builder.Build(ctx, s.Module, s.Version, s.Location, env.Progress)
	if err != nil {
		return JobDone{}, &backends.OpError{Op: "fetch", Side: "source", Place: s.Src, Err: err}
	}
	defer pkg.Remove()
	t.record(func(r *ModuleResult) { r.Sums = pkg.Sums })
	if err := ctx.Err(); err != nil {
		return JobDone{}, err
	}
	stored, err := s.Dst.Put(ctx, pkg, s.Force, env.Progress)
	if err != nil {
		return JobDone{}, &backends.OpError{Op: "store", Side: "destination", Place: s.Dst.String(), Err: err}
	}
	res := hashing.Result{Sums: pkg.Sums, Checks: stored.Checks}
	for _, c := range stored.Checks {
		env.Check(c)
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
