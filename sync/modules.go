package sync

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing"
)

// The provider Engine moves archives a source states hashes for, one zip
// per platform, and flushes index documents per provider. A module package
// is different: a registry only says where it lives, so the package has to
// be fetched and packed before anything can be compared, and there is no
// index to flush. ModuleEngine runs those jobs with the same workers,
// retries and events, so front ends show module syncs as they show
// provider syncs (JobInfo.Name names the module).

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

type moduleJob struct {
	info    JobInfo
	spec    ModuleJobSpec
	state   JobState
	cancel  context.CancelFunc
	bytes   atomic.Int64
	started atomic.Int64
	sent    int64
	result  ModuleResult
}

// ModuleEngine runs module jobs on a pool of workers.
type ModuleEngine struct {
	opts   Options
	ctx    context.Context
	events chan Event

	mu     gosync.Mutex
	wake   *gosync.Cond
	queue  []*moduleJob
	jobs   map[JobID]*moduleJob
	order  []JobID
	nextID JobID
	active int
	closed bool

	workers gosync.WaitGroup
	stop    chan struct{}

	evMu      gosync.Mutex
	evWake    chan struct{}
	evPending []Event
}

// NewModuleEngine starts a module engine whose workers run until ctx is
// cancelled or Close is called and the queue drains. Read Events until it
// is closed.
func NewModuleEngine(ctx context.Context, opts Options) *ModuleEngine {
	e := &ModuleEngine{
		opts:   opts.withDefaults(),
		ctx:    ctx,
		events: make(chan Event),
		jobs:   map[JobID]*moduleJob{},
		stop:   make(chan struct{}),
		evWake: make(chan struct{}, 1),
	}
	e.wake = gosync.NewCond(&e.mu)
	for range e.opts.Jobs {
		e.workers.Add(1)
		go e.worker()
	}
	go e.ticker()
	go func() {
		select {
		case <-ctx.Done():
		case <-e.stop:
			return
		}
		e.mu.Lock()
		e.closed = true
		e.wake.Broadcast()
		e.mu.Unlock()
	}()
	go e.pump()
	go func() {
		e.workers.Wait()
		close(e.stop)
	}()
	return e
}

// Events is the event stream; it is closed once Close (or cancellation)
// has let every job end.
func (e *ModuleEngine) Events() <-chan Event { return e.events }

// Enqueue adds jobs and returns their ids.
func (e *ModuleEngine) Enqueue(specs ...ModuleJobSpec) []JobID {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []JobID
	for _, s := range specs {
		if e.closed {
			break
		}
		e.nextID++
		j := &moduleJob{spec: s, info: JobInfo{
			ID:   e.nextID,
			Name: s.Module.String() + " " + s.Version.String(),
			Src:  s.Src,
			Dst:  s.Dst.String(),
			Size: -1,
		}}
		j.result = ModuleResult{ID: j.info.ID, Spec: s}
		e.jobs[j.info.ID] = j
		e.order = append(e.order, j.info.ID)
		e.enqueueLocked(j)
		ids = append(ids, j.info.ID)
	}
	return ids
}

func (e *ModuleEngine) enqueueLocked(j *moduleJob) {
	j.state = Queued
	j.bytes.Store(0)
	j.sent = 0
	e.queue = append(e.queue, j)
	e.active++
	e.emit(JobQueued{Job: j.info})
	e.wake.Signal()
}

// Cancel stops a queued or running job; the destination is left as it was
// (a package lands whole or not at all).
func (e *ModuleEngine) Cancel(id JobID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[id]
	if j == nil {
		return
	}
	switch j.state {
	case Queued:
		for i, q := range e.queue {
			if q == j {
				e.queue = append(e.queue[:i], e.queue[i+1:]...)
				break
			}
		}
		j.state = Canceled
		j.result.Err = context.Canceled
		e.endLocked(JobFailed{ID: id, Err: context.Canceled, Canceled: true})
	case Running:
		j.cancel()
	}
}

// Close lets the workers exit once the queue is empty.
func (e *ModuleEngine) Close() {
	e.mu.Lock()
	e.closed = true
	e.wake.Broadcast()
	e.mu.Unlock()
}

// Results returns how each job ended, in queue order. Call it once Events
// is closed.
func (e *ModuleEngine) Results() []ModuleResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]ModuleResult, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.jobs[id].result)
	}
	return out
}

func (e *ModuleEngine) emit(ev Event) {
	e.evMu.Lock()
	e.evPending = append(e.evPending, ev)
	e.evMu.Unlock()
	select {
	case e.evWake <- struct{}{}:
	default:
	}
}

func (e *ModuleEngine) pump() {
	defer close(e.events)
	for {
		e.evMu.Lock()
		batch := e.evPending
		e.evPending = nil
		e.evMu.Unlock()
		for _, ev := range batch {
			e.events <- ev
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-e.evWake:
		case <-e.stop:
			e.evMu.Lock()
			left := len(e.evPending)
			e.evMu.Unlock()
			if left == 0 {
				return
			}
		}
	}
}

// endLocked reports a job's end and Idle when nothing is left.
func (e *ModuleEngine) endLocked(ev Event) {
	e.emit(ev)
	e.active--
	if e.active == 0 {
		e.emit(Idle{})
	}
}

func (e *ModuleEngine) worker() {
	defer e.workers.Done()
	for {
		e.mu.Lock()
		for len(e.queue) == 0 && !e.closed {
			e.wake.Wait()
		}
		if len(e.queue) == 0 {
			e.mu.Unlock()
			return
		}
		j := e.queue[0]
		e.queue = e.queue[1:]
		if e.ctx.Err() != nil {
			j.state, j.result.Err = Canceled, e.ctx.Err()
			e.endLocked(JobFailed{ID: j.info.ID, Err: e.ctx.Err(), Canceled: true})
			e.mu.Unlock()
			continue
		}
		ctx, cancel := context.WithCancel(e.ctx)
		j.cancel = cancel
		j.state = Running
		e.mu.Unlock()

		done, err := e.run(ctx, j)
		cancel()

		e.mu.Lock()
		j.result.Err = err
		switch {
		case err == nil:
			j.state = Done
			e.endLocked(done)
		case errors.Is(err, context.Canceled):
			j.state = Canceled
			e.endLocked(JobFailed{ID: j.info.ID, Err: err, Canceled: true})
		default:
			j.state = Failed
			e.endLocked(JobFailed{ID: j.info.ID, Err: err})
		}
		e.mu.Unlock()
	}
}

func (e *ModuleEngine) ticker() {
	t := time.NewTicker(e.opts.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		e.mu.Lock()
		for _, j := range e.jobs {
			if j.state != Running {
				continue
			}
			n := j.bytes.Load()
			if n == j.sent {
				continue
			}
			j.sent = n
			rate := 0.0
			if el := time.Since(time.Unix(0, j.started.Load())).Seconds(); el > 0 {
				rate = float64(n) / el
			}
			e.emit(JobProgress{ID: j.info.ID, Bytes: n, Total: -1, Rate: rate})
		}
		e.mu.Unlock()
	}
}

// run tries a job until it succeeds, fails permanently, or runs out of
// attempts; it returns the JobDone to report.
func (e *ModuleEngine) run(ctx context.Context, j *moduleJob) (JobDone, error) {
	for attempt := 1; ; attempt++ {
		e.emit(JobStarted{ID: j.info.ID, Attempt: attempt})
		done, err := e.attempt(ctx, j)
		if ctx.Err() != nil {
			return JobDone{}, context.Canceled
		}
		if err == nil {
			return done, nil
		}
		if !backends.IsTransient(err) || attempt >= e.opts.Attempts {
			return JobDone{}, err
		}
		delay := e.opts.Backoff << (attempt - 1)
		e.emit(JobRetrying{ID: j.info.ID, Attempt: attempt, Err: err, Delay: delay})
		select {
		case <-ctx.Done():
			return JobDone{}, context.Canceled
		case <-time.After(delay):
		}
	}
}

// attempt builds the package from its location, then stores it; the
// destination compares contents and writes only what differs.
func (e *ModuleEngine) attempt(ctx context.Context, j *moduleJob) (JobDone, error) {
	s := j.spec
	j.bytes.Store(0)
	j.started.Store(time.Now().UnixNano())
	start := time.Now()
	add := func(n int64) { j.bytes.Add(n) }

	pkg, err := s.Builder.Build(ctx, s.Module, s.Version, s.Location, add)
	if err != nil {
		return JobDone{}, &backends.OpError{Op: "fetch", Side: "source", Place: s.Src, Err: err}
	}
	defer pkg.Remove()
	e.mu.Lock()
	j.result.Sums = pkg.Sums
	e.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return JobDone{}, err
	}
	stored, err := s.Dst.Put(ctx, pkg, s.Force, add)
	if err != nil {
		return JobDone{}, &backends.OpError{Op: "store", Side: "destination", Place: j.info.Dst, Err: err}
	}
	res := hashing.Result{Sums: pkg.Sums, Checks: stored.Checks}
	for _, c := range stored.Checks {
		e.emit(HashChecked{ID: j.info.ID, Check: c})
	}
	if err := res.Err(); err != nil {
		return JobDone{}, &backends.OpError{Op: "verify", Side: "destination", Place: j.info.Dst, Err: fmt.Errorf("%s: %w", j.info.Name, err)}
	}
	e.mu.Lock()
	j.result.Stored = stored
	e.mu.Unlock()
	return JobDone{ID: j.info.ID, Sums: pkg.Sums, Result: res, Bytes: stored.Bytes, Elapsed: time.Since(start), Verified: res.Verified()}, nil
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
