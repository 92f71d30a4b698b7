package sync

import (
	"time"

	"github.com/tfmirror/tfmirror/hashing"
)

// TrackedJob is a front end's view of one job, built from events.
type TrackedJob struct {
	Info     JobInfo
	State    JobState
	Attempt  int
	Bytes    int64
	Rate     float64
	Checks   []hashing.Check
	Sums     hashing.Sums
	Verified bool
	Err      error
	Elapsed  time.Duration
}

// Tracker folds engine events into per-job state, for any front end.
type Tracker struct {
	Jobs       map[JobID]*TrackedJob
	Order      []JobID // queue order
	IndexFails []IndexWritten
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker { return &Tracker{Jobs: map[JobID]*TrackedJob{}} }

// Apply updates the state with one event and returns the job it concerns
// (nil for events about no job).
func (t *Tracker) Apply(ev Event) *TrackedJob {
	switch ev := ev.(type) {
	case JobQueued:
		j, ok := t.Jobs[ev.Job.ID]
		if !ok {
			j = &TrackedJob{Info: ev.Job}
			t.Jobs[ev.Job.ID] = j
			t.Order = append(t.Order, ev.Job.ID)
		}
		*j = TrackedJob{Info: ev.Job, State: Queued}
		return j
	case JobStarted:
		if j := t.Jobs[ev.ID]; j != nil {
			j.State, j.Attempt, j.Bytes, j.Checks, j.Err = Running, ev.Attempt, 0, nil, nil
			return j
		}
	case JobProgress:
		if j := t.Jobs[ev.ID]; j != nil {
			j.Bytes, j.Rate = ev.Bytes, ev.Rate
			return j
		}
	case HashChecked:
		if j := t.Jobs[ev.ID]; j != nil {
			j.Checks = append(j.Checks, ev.Check)
			return j
		}
	case JobRetrying:
		if j := t.Jobs[ev.ID]; j != nil {
			j.Err = ev.Err
			return j
		}
	case JobDone:
		if j := t.Jobs[ev.ID]; j != nil {
			j.State, j.Bytes, j.Sums, j.Verified, j.Elapsed, j.Err = Done, ev.Bytes, ev.Sums, ev.Verified, ev.Elapsed, nil
			return j
		}
	case JobFailed:
		if j := t.Jobs[ev.ID]; j != nil {
			j.State, j.Err = Failed, ev.Err
			if ev.Canceled {
				j.State = Canceled
			}
			return j
		}
	case IndexWritten:
		if ev.Err != nil {
			t.IndexFails = append(t.IndexFails, ev)
		}
	}
	return nil
}

// Counts returns how many jobs are in each state.
func (t *Tracker) Counts() map[JobState]int {
	c := map[JobState]int{}
	for _, j := range t.Jobs {
		c[j.State]++
	}
	return c
}

// Unfinished reports whether any job is queued or running.
func (t *Tracker) Unfinished() bool {
	c := t.Counts()
	return c[Queued]+c[Running] > 0
}

// Failures returns the failed and cancelled jobs in queue order.
func (t *Tracker) Failures() []*TrackedJob {
	var out []*TrackedJob
	for _, id := range t.Order {
		if j := t.Jobs[id]; j.State == Failed || j.State == Canceled {
			out = append(out, j)
		}
	}
	return out
}

// BytesMoved sums the bytes of finished jobs.
func (t *Tracker) BytesMoved() int64 {
	var n int64
	for _, j := range t.Jobs {
		if j.State == Done {
			n += j.Bytes
		}
	}
	return n
}
