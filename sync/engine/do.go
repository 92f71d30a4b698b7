package engine

import "context"

// Result is how a task Do ran ended.
type Result struct {
	// Done is what the task's successful attempt reported; nil when none
	// succeeded.
	Done *JobDone
	// Err is why the job failed: no attempt succeeded, or, after Done,
	// its batch's Finish said it has not succeeded after all.
	Err error
	// Finished is the event its batch's Finish reported, if any.
	Finished Event
}

// Do runs t alone, on a one-worker engine of its own with opts' retries,
// and returns how it ended, once its batch (if it is Batched) is finished.
// retrying, when set, is told of each retry as it is scheduled.
func Do(ctx context.Context, opts Options, t Task, retrying func(JobRetrying)) Result {
	opts.Jobs = 1
	eng := NewEngine(ctx, opts)
	eng.Enqueue(t)
	eng.Close()
	var res Result
	for ev := range eng.Events() {
		switch ev := ev.(type) {
		case JobDone:
			res.Done = &ev
		case JobFailed:
			res.Err = ev.Err
		case JobRetrying:
			if retrying != nil {
				retrying(ev)
			}
		case JobQueued, JobStarted, JobProgress, HashChecked, Idle:
		default:
			res.Finished = ev
		}
	}
	if res.Done == nil && res.Err == nil {
		res.Err = context.Cause(ctx) // queued after the context ended
	}
	return res
}
