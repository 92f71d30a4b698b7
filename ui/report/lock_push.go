package report

import (
	"fmt"
	"io"
	"time"

	"github.com/tfmirror/tfmirror/sync"
)

// PushPlain prints a line per archive pushed, with its size, time and rate
// and the hashes checked, for logs and pipes, and returns the state the
// events built.
func PushPlain(w io.Writer, events <-chan sync.Event) *sync.Tracker {
	t := sync.NewTracker()
	for ev := range events {
		j := t.Apply(ev)
		switch ev := ev.(type) {
		case sync.JobDone:
			rate := int64(0)
			if s := ev.Elapsed.Seconds(); s > 0 {
				rate = int64(float64(ev.Bytes) / s)
			}
			fmt.Fprintf(w, "pushed %s  %s in %s (%s/s)  %s %s\n", j.Info.Package, HumanBytes(ev.Bytes),
				ev.Elapsed.Round(time.Millisecond), HumanBytes(rate), ev.Sums.H1, ev.Sums.ZH)
		case sync.JobFailed:
			fmt.Fprintf(w, "failed %s: %v\n", j.Info.Package, ev.Err)
		case sync.JobRetrying:
			fmt.Fprintf(w, "retry  %s: attempt %d failed, retrying in %s: %v\n", j.Info.Package, ev.Attempt, ev.Delay, ev.Err)
		case sync.IndexWritten:
			if ev.Err != nil {
				fmt.Fprintf(w, "failed %s: version indexes: %v\n", ev.Provider, ev.Err)
			} else {
				fmt.Fprintf(w, "tagged %s in %s\n", ev.Provider, ev.Dst)
			}
		}
	}
	return t
}

// LockUpdates lists what `tfmirror lock` changed and returns how many hashes
// it added.
func LockUpdates(w io.Writer, updates []sync.LockUpdate) int {
	n := 0
	for _, u := range updates {
		what := ""
		switch {
		case u.New:
			what = " (new)"
		case u.OldVersion != nil:
			what = fmt.Sprintf(" (was %s; its hashes replaced)", u.OldVersion)
		case len(u.Added) == 0:
			what = ": nothing new"
		}
		fmt.Fprintf(w, "%s %s%s\n", u.Provider, u.Version, what)
		for _, h := range u.Added {
			fmt.Fprintf(w, "  + %s  %s\n", h.Hash, h.Platform)
			n++
		}
	}
	return n
}
