package engine

import (
	"context"
	"errors"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// worker runs queued jobs, one at a time, until the queue is empty and the
// engine closed.
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
