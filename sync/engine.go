package sync

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// Options tune an Engine.
type Options struct {
	// Jobs is the number of workers; zero means DefaultJobs().
	Jobs int
	// Attempts bounds tries per job for transient errors; zero means 4.
	// A job is tried again only for what the layers below it cannot try
	// again themselves (a body cut off mid-stream, a download stalled after
	// its headers): a failure they already retried to the end of their
	// policy (backends.Retried) ends the job, so tries do not multiply.
	Attempts int
	// Backoff is the first retry delay, doubled each retry (±10%); zero
	// means 500ms.
	Backoff time.Duration
	// ProgressInterval is how often running jobs' byte counts are sent;
	// zero means 150ms.
	ProgressInterval time.Duration
	Hashing          hashing.Options
}

// DefaultJobs is enough transfers to keep every core hashing while others
// wait on the network; hashing itself is limited to one archive per core.
func DefaultJobs() int { return max(8, 4*runtime.NumCPU()) }

func (o Options) withDefaults() Options {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs()
	}
	if o.Attempts <= 0 {
		o.Attempts = 4
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = 150 * time.Millisecond
	}
	return o
}

// Task is one job's work. A provider package transfer (Transfer) and a
// module package (ModuleTask) are both Tasks: the engine runs them on the
// same workers, with the same queue, retries and events, and knows nothing
// else of them.
type Task interface {
	// Info describes the job; the engine sets its ID.
	Info() JobInfo
	// Attempt makes one try. It reports bytes moved and hashes checked
	// through env, and returns what JobDone says (the engine sets its ID).
	// Errors for which backends.IsTransient holds are retried, unless a
	// layer below already retried them (backends.Retried).
	Attempt(ctx context.Context, env Env) (JobDone, error)
}

// Batched is a Task that belongs to a batch: tasks whose Batch keys are
// equal share one Batch, whichever Enqueue call queued them, and the batch
// is finished once its last queued task has ended (a provider's index
// documents, written once its archives have landed rather than once per
// archive).
type Batched interface {
	Task
	// Batch names the batch; it must be a comparable value.
	Batch() any
	// NewBatch makes the batch's shared state; the engine calls it on the
	// first of the batch's tasks it queues and keeps what it returns for
	// its life.
	NewBatch() Batch
	// Join returns the task to run as a member of b, its batch.
	Join(b Batch) Task
}

// Batch is the state a batch's tasks share.
type Batch interface {
	// Finish runs when the batch's last queued task has ended, if any of
	// its tasks succeeded since the last Finish; landed are their jobs. It
	// returns the event to report (none when nil) and, for the landed jobs
	// that have not succeeded after all, why: they end failed. ctx is not
	// cancelled with the jobs, so what landed is finished even after
	// cancellation. Calls for one batch never overlap.
	Finish(ctx context.Context, landed []JobInfo) (Event, map[JobID]error)
}

// Admitter is a Task that may not run beside some of the tasks queued with
// it (a destination that cannot hold two providers together).
type Admitter interface {
	Task
	// Admit is called once per Enqueue call and type of Admitter, on the
	// first task of that type, with every task of the call. It returns
	// them, each it refuses replaced by a task that fails with the reason
	// before it changes anything.
	Admit(tasks []Task) []Task
}

// Env is what the engine lends one attempt of a task.
type Env struct {
	// Progress counts bytes moved; the engine reports them by ticking.
	Progress func(n int64)
	// Check reports one source of truth checked.
	Check   func(hashing.Check)
	Hashing hashing.Options
	// expect and phase, when set, tell the progress ticker the job's size
	// once the stream states it, and what the job is doing.
	expect func(int64)
	phase  func(Phase)
	// hashSlots bounds how many archives are inflated for h1: at once, to
	// the cores there are: more would only slow each other down, while the
	// other workers keep downloading.
	hashSlots chan struct{}
}

// HashSlot waits for one of the engine's hashing slots; call release when
// the CPU-bound part is over.
func (env Env) HashSlot(ctx context.Context) (release func(), err error) {
	select {
	case env.hashSlots <- struct{}{}:
		return func() { <-env.hashSlots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Expect records the size the archive's stream states (where the listing
// did not), for the progress events' Total.
func (env Env) Expect(total int64) {
	if env.expect != nil && total >= 0 {
		env.expect(total)
	}
}

// SetPhase records what the attempt is doing, for the progress events.
func (env Env) SetPhase(p Phase) {
	if env.phase != nil {
		env.phase(p)
	}
}

// JobState is where a job is in its life.
type JobState int

const (
	Queued JobState = iota
	Running
	Done
	Failed
	Canceled
)

func (s JobState) String() string {
	return [...]string{"queued", "running", "done", "failed", "canceled"}[s]
}

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

func (e *Engine) worker() {
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
		if err := e.ctx.Err(); err != nil {
			j.state = Canceled
			e.mu.Unlock()
			e.endJob(j, JobFailed{ID: j.info.ID, Err: err, Canceled: true})
			continue
		}
		ctx, cancel := context.WithCancel(e.ctx)
		j.cancel = cancel
		j.state = Running
		e.mu.Unlock()

		err := e.run(ctx, j)
		cancel()

		var ev Event
		e.mu.Lock()
		switch {
		case err == nil:
			j.state = Done
			if j.batch != nil {
				bs := e.batches[j.batch]
				bs.landed = append(bs.landed, j)
			}
		case errors.Is(err, context.Canceled):
			j.state = Canceled
			ev = JobFailed{ID: j.info.ID, Err: err, Canceled: true}
		default:
			j.state = Failed
			ev = JobFailed{ID: j.info.ID, Err: err}
		}
		waited := j.waited
		if waited {
			j.waited = false
			e.extra--
		}
		e.mu.Unlock()
		e.endJob(j, ev)
		if waited {
			return // the worker started in its place goes on
		}
	}
}

// extraWorkers bounds the workers started for waiting jobs (waiting),
// each of which holds its files open: 32 per job the user asked for, at
// most 256.
func (e *Engine) extraWorkers() int { return min(256, 32*e.opts.Jobs) }

// waiting lets another job start while j waits on something shared that
// its worker does not speed up (backends.Waiting): a group sync of small
// files, which then holds the files of every job that waits meanwhile
// rather than of at most opts.Jobs. j's worker ends with j.
func (e *Engine) waiting(j *job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j.waited || e.extra >= e.extraWorkers() || len(e.queue) == 0 {
		return
	}
	j.waited = true
	e.extra++
	e.workers.Add(1)
	go e.worker()
}

// endJob does the bookkeeping when a job ends (ev, if any, says how): when
// it was its batch's last pending job, it finishes the batch (a provider's
// index documents), even after cancellation so that what landed is listed;
// when nothing is left, it reports Idle. Call it without e.mu.
func (e *Engine) endJob(j *job, ev Event) {
	if ev != nil {
		e.emit(ev)
	}
	if j.batch != nil {
		e.finishIfLast(j)
	}
	e.mu.Lock()
	e.active--
	idle := e.active == 0
	e.mu.Unlock()
	if idle {
		e.emit(Idle{})
	}
}

// finishIfLast finishes a job's batch once its last pending job has ended,
// if any of its tasks succeeded. The landed jobs the Finish says have not
// succeeded after all end failed.
func (e *Engine) finishIfLast(j *job) {
	e.mu.Lock()
	bs := e.batches[j.batch]
	bs.pending--
	var landed []*job
	if bs.pending == 0 {
		landed, bs.landed = bs.landed, nil
	}
	e.mu.Unlock()
	if len(landed) == 0 {
		return
	}
	infos := make([]JobInfo, len(landed))
	for i, lj := range landed {
		infos[i] = lj.info
	}
	bs.finishing.Lock()
	ev, failed := bs.batch.Finish(context.WithoutCancel(e.ctx), infos)
	bs.finishing.Unlock()
	if ev != nil {
		e.emit(ev)
	}
	e.failLanded(landed, failed)
}

// failLanded ends failed the landed jobs failed names, with its reason.
func (e *Engine) failLanded(landed []*job, failed map[JobID]error) {
	for _, lj := range landed {
		err, ok := failed[lj.info.ID]
		if !ok {
			continue
		}
		e.mu.Lock()
		done := lj.state == Done
		if done {
			lj.state = Failed
		}
		e.mu.Unlock()
		if done {
			e.emit(JobFailed{ID: lj.info.ID, Err: err})
		}
	}
}

func (e *Engine) ticker() {
	t := time.NewTicker(e.opts.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		if e.backlog() > 0 {
			continue // the reader is behind: a snapshot now would be stale
		}
		e.mu.Lock()
		for _, j := range e.jobs {
			if j.state != Running {
				continue
			}
			if j.bytes.Load() == j.sent && Phase(j.phase.Load()) == j.sentPhase {
				continue
			}
			e.emit(e.progressLocked(j))
		}
		e.mu.Unlock()
	}
}

// progressLocked is a progress snapshot of a running job, recorded as
// sent. The caller holds e.mu.
func (e *Engine) progressLocked(j *job) JobProgress {
	n, phase := j.bytes.Load(), Phase(j.phase.Load())
	j.sent, j.sentPhase = n, phase
	rate := 0.0
	if el := time.Since(time.Unix(0, j.started.Load())).Seconds(); el > 0 {
		rate = float64(n) / el
	}
	return JobProgress{ID: j.info.ID, Bytes: n, Total: j.total.Load(), Rate: rate, Phase: phase}
}

// progressNow reports a job's progress at once: for what changes once an
// attempt (the size its stream states, the start of hashing), not per
// chunk.
func (e *Engine) progressNow(j *job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j.state == Running {
		e.emit(e.progressLocked(j))
	}
}

// retryPolicy is the policy of the engine's jobs (backends.RetryPolicy).
func (o Options) retryPolicy() backends.RetryPolicy {
	return backends.RetryPolicy{Attempts: o.Attempts, Base: o.Backoff, Max: 8 * o.Backoff, Jitter: 0.1}
}

// run tries a job until it succeeds, fails permanently, or runs out of
// attempts (Options.Attempts).
func (e *Engine) run(ctx context.Context, j *job) error {
	ctx = backends.WithWaiting(ctx, func() { e.waiting(j) })
	err := e.opts.retryPolicy().Run(ctx, func(ctx context.Context) error {
		e.emit(JobStarted{ID: j.info.ID, Attempt: backends.Attempt(ctx)})
		err := e.attempt(ctx, j)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return context.Canceled
		}
		return err
	}, func(attempt int, err error, delay time.Duration) {
		e.emit(JobRetrying{ID: j.info.ID, Attempt: attempt, Err: err, Delay: delay})
	})
	if err != nil && ctx.Err() != nil {
		return context.Canceled
	}
	return err
}

// attempt makes one try of a job's task.
func (e *Engine) attempt(ctx context.Context, j *job) error {
	j.bytes.Store(0)
	j.total.Store(j.info.Size)
	j.phase.Store(int32(PhaseTransfer))
	j.started.Store(time.Now().UnixNano())
	env := Env{
		Progress:  func(n int64) { j.bytes.Add(n) },
		Check:     func(c hashing.Check) { e.emit(HashChecked{ID: j.info.ID, Check: c}) },
		Hashing:   e.opts.Hashing,
		expect:    func(n int64) { j.total.Store(n); e.progressNow(j) },
		phase:     func(p Phase) { j.phase.Store(int32(p)); e.progressNow(j) },
		hashSlots: e.hashSlots,
	}
	done, err := j.task.Attempt(ctx, env)
	if err != nil {
		return err
	}
	done.ID = j.info.ID
	e.emit(done)
	return nil
}
