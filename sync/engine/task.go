package engine

import (
	"context"
	"runtime"
	"time"

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

// Task is one job's work. The operations' provider package transfer
// (sync.Transfer) and module copy (sync.ModuleTasks) are both Tasks: the
// engine runs them on the
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
