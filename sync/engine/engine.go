package engine

import (
	"context"
	"reflect"
	"runtime"
	"slices"
	gosync "sync"
	"sync/atomic"

	"github.com/tfmirror/tfmirror/hashing"
)

type job struct {
	info    JobInfo
	task    Task
	batch   any // the Batched task's batch, nil for others
	state   JobState
	cancel  context.CancelFunc
	bytes   atomic.Int64
	started atomic.Int64 // unix nanos of the current attempt
	sent    int64        // bytes in the last progress event (ticker only)
	total   atomic.Int64 // the size expected by the current attempt
	phase   atomic.Int32 // the current attempt's Phase
	// sentPhase is the phase in the last progress event (ticker only).
	sentPhase Phase
	// waited: the job's worker let another start while the job waits on
	// something shared (Engine.waiting); it ends with the job.
	waited bool
}

type batchState struct {
	batch     Batch
	pending   int
	landed    []*job       // succeeded since the last Finish
	finishing gosync.Mutex // serialises Finish calls for one batch
}

// Engine runs Tasks on a pool of workers. Jobs can be queued while others
// run; events report everything that happens, in order per job. One engine
// serves a whole process: job ids come from one sequence.
type Engine struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	events chan Event

	mu      gosync.Mutex
	wake    *gosync.Cond
	queue   []*job
	jobs    map[JobID]*job
	nextID  JobID
	active  int
	batches map[any]*batchState
	closed  bool
	// extra counts the workers started for jobs that wait on something
	// shared (waiting), beyond opts.Jobs.
	extra int

	workers gosync.WaitGroup
	stop    chan struct{}
	// hashSlots is lent to attempts through Env.
	hashSlots chan struct{}

	// Events wait in an unbounded list until the front end takes them, so
	// the engine never blocks on a slow (or not yet started) reader.
	evMu      gosync.Mutex
	evWake    chan struct{}
	evPending []Event
}

// NewEngine starts an engine whose workers run until ctx is cancelled, Stop
// is called, or Close is called and the queue drains. Read Events until it
// is closed.
func NewEngine(ctx context.Context, opts Options) *Engine {
	ctx, cancel := context.WithCancel(ctx)
	e := &Engine{
		opts:    opts.withDefaults(),
		ctx:     ctx,
		cancel:  cancel,
		events:  make(chan Event),
		jobs:    map[JobID]*job{},
		batches: map[any]*batchState{},
		stop:    make(chan struct{}),
		evWake:  make(chan struct{}, 1),

		hashSlots: make(chan struct{}, runtime.NumCPU()),
	}
	e.wake = gosync.NewCond(&e.mu)
	for range e.opts.Jobs {
		e.workers.Add(1)
		go e.worker()
	}
	go e.ticker()
	go func() {
		// On cancellation the workers end every queued job as cancelled
		// and exit; wake the idle ones.
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
		cancel()
	}()
	return e
}

// pump hands queued events to the reader in order, and closes the stream
// once the workers are gone and every event has been taken.
func (e *Engine) pump() {
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

// backlog is how many events wait for the reader.
func (e *Engine) backlog() int {
	e.evMu.Lock()
	defer e.evMu.Unlock()
	return len(e.evPending)
}

// Events is the engine's event stream; it is closed after Close (or
// cancellation) once every job has ended.
func (e *Engine) Events() <-chan Event { return e.events }

// Hashing is the hashing options the engine's jobs use, for front ends that
// verify archives beside it.
func (e *Engine) Hashing() hashing.Options { return e.opts.Hashing }

// Enqueue adds jobs and returns their ids; none once the engine is closed.
// Tasks an Admitter refuses beside the others given fail before they
// change anything, with the reason.
func (e *Engine) Enqueue(tasks ...Task) []JobID {
	tasks = admit(tasks)
	// The jobs are made before the lock is taken: the workers wait for it
	// (30 ms of queuing 10,000 tasks was spent holding it).
	jobs := make([]job, len(tasks))
	for i, t := range tasks {
		jobs[i] = job{task: t, info: t.Info()}
		if b, ok := t.(Batched); ok {
			jobs[i].batch = b.Batch()
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]JobID, 0, len(tasks))
	for i := range jobs {
		if e.closed {
			break
		}
		e.nextID++
		j := &jobs[i]
		if j.batch != nil {
			j.task = e.joinLocked(j.task.(Batched), j.batch)
		}
		j.info.ID = e.nextID
		e.jobs[j.info.ID] = j
		e.enqueueLocked(j)
		ids = append(ids, j.info.ID)
	}
	return ids
}

// admit has each type of Admitter among tasks admit them.
func admit(tasks []Task) []Task {
	var seen []reflect.Type
	for i := 0; i < len(tasks); i++ {
		a, ok := tasks[i].(Admitter)
		if !ok {
			continue
		}
		ty := reflect.TypeOf(a)
		if slices.Contains(seen, ty) {
			continue
		}
		seen = append(seen, ty)
		tasks = a.Admit(tasks)
	}
	return tasks
}

// joinLocked has t join its batch, made from t when it is the first of
// its batch the engine queues.
func (e *Engine) joinLocked(t Batched, key any) Task {
	bs := e.batches[key]
	if bs == nil {
		bs = &batchState{batch: t.NewBatch()}
		e.batches[key] = bs
	}
	return t.Join(bs.batch)
}

func (e *Engine) enqueueLocked(j *job) {
	j.state = Queued
	j.bytes.Store(0)
	j.sent, j.sentPhase = 0, PhaseTransfer
	e.queue = append(e.queue, j)
	e.active++
	if j.batch != nil {
		e.batches[j.batch].pending++
	}
	e.emit(JobQueued{Job: j.info})
	e.wake.Signal()
}

// Cancel stops a queued or running job. The destination is left as it was.
func (e *Engine) Cancel(id JobID) {
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
		// The workers cannot all have exited while this job was queued;
		// count this goroutine among them until the job has ended, so the
		// event stream stays open for its last events.
		e.workers.Add(1)
		e.mu.Unlock()
		e.endJob(j, JobFailed{ID: id, Err: context.Canceled, Canceled: true})
		e.workers.Done()
		e.mu.Lock()
	case Running:
		j.cancel()
	}
}

// Retry queues a failed or cancelled job again under the same id.
func (e *Engine) Retry(id JobID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.jobs[id]
	if j == nil || e.closed || (j.state != Failed && j.state != Canceled) {
		return false
	}
	e.enqueueLocked(j)
	return true
}

// Stop cancels every queued and running job and closes the engine; Events
// is closed once every job has ended. A front end that quits calls it and
// reads Events to the end, so no staging file outlives it.
func (e *Engine) Stop() {
	e.cancel()
	e.Close()
}

// Close lets the workers exit once the queue is empty.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.wake.Broadcast()
	e.mu.Unlock()
}

// emit queues an event for the reader; it never blocks.
func (e *Engine) emit(ev Event) {
	e.evMu.Lock()
	e.evPending = append(e.evPending, ev)
	e.evMu.Unlock()
	select {
	case e.evWake <- struct{}{}:
	default:
	}
}
