package sync

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// A module package is unlike a provider archive: a registry only says where
// it lives, so the package has to be fetched and packed before anything can
// be compared, and there is no index to flush. A moduleTask runs that as an
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

// moduleTask is one module version to mirror, as an engine Task. It keeps
// how its job ended, for reports that print where each package landed.
type moduleTask struct {
	spec ModuleJobSpec

	mu gosync.Mutex
	r  ModuleResult
}

var _ engine.Task = (*moduleTask)(nil)

// newModuleTask returns the task of one module version.
func newModuleTask(s ModuleJobSpec) *moduleTask {
	// Until an attempt says otherwise, the job did not run (a job cancelled
	// while queued never does).
	return &moduleTask{spec: s, r: ModuleResult{Spec: s, Err: context.Canceled}}
}

// ModuleTasks returns a task for each spec, ready for Engine.Enqueue.
func ModuleTasks(specs []ModuleJobSpec) []engine.Task {
	out := make([]engine.Task, len(specs))
	for i, s := range specs {
		out[i] = newModuleTask(s)
	}
	return out
}

// ModuleResults returns how each module task among tasks ended, in order.
// Call it once the engine's Events is closed.
func ModuleResults(tasks []engine.Task) []ModuleResult {
	var out []ModuleResult
	for _, t := range tasks {
		if mt, ok := t.(*moduleTask); ok {
			out = append(out, mt.Result())
		}
	}
	return out
}

// Spec is what the task mirrors.
func (t *moduleTask) Spec() ModuleJobSpec { return t.spec }

// Result is how the task's last attempt ended.
func (t *moduleTask) Result() ModuleResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.r
}

// record updates the task's result under the lock.
func (t *moduleTask) record(f func(r *ModuleResult)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.r)
}

// Info implements Task.
func (t *moduleTask) Info() engine.JobInfo {
	s := t.spec
	return engine.JobInfo{Name: s.Module.String() + " " + s.Version.String(), Module: s.Module, Src: s.Src, Dst: s.Dst.String(), Size: -1}
}

// Attempt builds the package from its location, then stores it; the
// destination compares contents and writes only what differs.
func (t *moduleTask) Attempt(ctx context.Context, env engine.Env) (done engine.JobDone, err error) {
	s := t.spec
	defer func() { t.record(func(r *ModuleResult) { r.Err = err }) }()
	start := time.Now()
	pkg, err := s.Builder.Build(ctx, s.Module, s.Version, s.Location, env.Progress)
	if err != nil {
		return engine.JobDone{}, &backends.OpError{Op: "fetch", Side: "source", Place: s.Src, Err: err}
	}
	defer func() { _ = pkg.Remove() }() // the temporary zip; a leftover is in TempDir
	t.record(func(r *ModuleResult) { r.Sums = pkg.Sums })
	if err := ctx.Err(); err != nil {
		return engine.JobDone{}, err
	}
	stored, err := s.Dst.Put(ctx, pkg, s.Force, env.Progress)
	if err != nil {
		return engine.JobDone{}, &backends.OpError{Op: "store", Side: "destination", Place: s.Dst.String(), Err: err}
	}
	res := hashing.Result{Sums: pkg.Sums, Checks: stored.Checks}
	for _, c := range stored.Checks {
		env.Check(c)
	}
	if err := res.Err(); err != nil {
		return engine.JobDone{}, &backends.OpError{Op: "verify", Side: "destination", Place: s.Dst.String(), Err: fmt.Errorf("%s %s: %w", s.Module, s.Version, err)}
	}
	t.record(func(r *ModuleResult) { r.Stored = stored })
	return engine.JobDone{Sums: pkg.Sums, Result: res, Bytes: stored.Bytes, Elapsed: time.Since(start), Verified: res.Verified()}, nil
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

// ModuleFinding is one module version a module sync would mirror, as diff
// shows it.
type ModuleFinding struct {
	Module  modules.Module
	Version modules.Version // nil when the module could not be listed
	// Status is StatusMissing, StatusPresent, StatusUnavailable (the
	// registry cannot supply it) or StatusError (the destination cannot be
	// read).
	Status Status
	Detail string
}

// PlanModule compares the versions of m that c selects in the registry src
// with those dst holds, reading listings only: a version dst lacks is
// missing; one it holds is present, its contents being compared only when
// sync builds the package (a package is known only once fetched and
// packed); a version src lists without a location, or a module src cannot
// list, is unavailable. Warnings are what the places skipped.
func PlanModule(ctx context.Context, src, dst modules.Lister, m modules.Module, c backends.VersionConstraint) (out []ModuleFinding, warnings []string) {
	ls, err := src.ListModule(ctx, m, c)
	warnings = append(warnings, ls.Warnings...)
	switch {
	case err != nil:
		return []ModuleFinding{{Module: m, Status: StatusUnavailable, Detail: err.Error()}}, warnings
	case len(ls.Items) == 0:
		return []ModuleFinding{{Module: m, Status: StatusUnavailable, Detail: fmt.Sprintf("%s: %s: no version matches %q", src, m.Short(), c)}}, warnings
	}
	held, err := dst.ListModule(ctx, m, backends.VersionConstraint{})
	warnings = append(warnings, held.Warnings...)
	if err != nil && !errors.Is(err, backends.ErrNotFound) {
		return []ModuleFinding{{Module: m, Status: StatusError, Detail: fmt.Sprintf("cannot read what the destination holds: %v", err)}}, warnings
	}
	at := map[string]string{}
	for _, it := range held.Items {
		if it.Err == nil {
			at[it.Version.String()] = it.Location
		}
	}
	for _, it := range ls.Items {
		f := ModuleFinding{Module: m, Version: it.Version}
		loc, ok := at[it.Version.String()]
		switch {
		case it.Err != nil || it.Source == nil:
			why := "it gives no location for it"
			if it.Err != nil {
				why = it.Err.Error()
			}
			f.Status, f.Detail = StatusUnavailable, fmt.Sprintf("%s cannot supply it: %s", src, why)
		case ok:
			f.Status, f.Detail = StatusPresent, "present at "+loc+" (sync compares its contents with the package it builds)"
		default:
			f.Status, f.Detail = StatusMissing, fmt.Sprintf("not in destination; sync packs it from %s", it.Location)
		}
		out = append(out, f)
	}
	return out, warnings
}
