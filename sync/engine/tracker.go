package engine

import (
	"time"

	"github.com/tfmirror/tfmirror/hashing"
)

// TrackedJob is a front end's view of one job, built from events.
type TrackedJob struct {
	Info    JobInfo
	State   JobState
	Attempt int
	Bytes   int64
	// Total is the size the running attempt expects (JobProgress.Total);
	// -1 when unknown.
	Total    int64
	Rate     float64
	Phase    Phase
	Checks   []hashing.Check
	Sums     hashing.Sums
	Verified bool
	Err      error
	Elapsed  time.Duration
	// Client is how clients install the job's provider from its
	// destination, once the destination's index lists what landed and
	// says it (IndexWritten.Client).
	Client *ClientConfig
}

// Expected is the size the job's archive has, for a percentage: the size
// its source listed, else the size its stream stated; -1 when neither did.
func (j *TrackedJob) Expected() int64 {
	switch {
	case j.Info.Size > 0:
		return j.Info.Size
	case j.Total > 0:
		return j.Total
	}
	return -1
}

// Fraction is how much of the expected size has arrived, in [0, 1]; ok is
// false when the size is unknown.
func (j *TrackedJob) Fraction() (f float64, ok bool) {
	n := j.Expected()
	if n <= 0 {
		return 0, false
	}
	return min(1, float64(j.Bytes)/float64(n)), true
}

// ETA is how long the rest of the transfer takes at the rate so far; ok is
// false when the size or the rate is unknown.
func (j *TrackedJob) ETA() (d time.Duration, ok bool) {
	n := j.Expected()
	if n <= 0 || j.Rate <= 0 {
		return 0, false
	}
	left := max(0, n-j.Bytes)
	return time.Duration(float64(left) / j.Rate * float64(time.Second)), true
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
		*j = TrackedJob{Info: ev.Job, State: Queued, Total: ev.Job.Size}
		return j
	case JobStarted:
		if j := t.Jobs[ev.ID]; j != nil {
			j.State, j.Attempt, j.Bytes, j.Checks, j.Err = Running, ev.Attempt, 0, nil, nil
			j.Total, j.Rate, j.Phase = j.Info.Size, 0, PhaseTransfer
			return j
		}
	case JobProgress:
		if j := t.Jobs[ev.ID]; j != nil {
			j.Bytes, j.Rate, j.Phase = ev.Bytes, ev.Rate, ev.Phase
			if ev.Total >= 0 {
				j.Total = ev.Total
			}
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
		if ev.Client != nil {
			for _, j := range t.Jobs {
				if j.State == Done && j.Info.Dst == ev.Dst && j.Info.Name == "" && j.Info.Package.Provider == ev.Provider {
					j.Client = ev.Client
				}
			}
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
