package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// pushLine is push's plain line for an event: one per archive pushed, with
// its size, time and rate and its hashes, for logs and pipes.
func pushLine(ev engine.Event, j *engine.TrackedJob) string {
	switch ev := ev.(type) {
	case engine.JobDone:
		rate := int64(0)
		if s := ev.Elapsed.Seconds(); s > 0 {
			rate = int64(float64(ev.Bytes) / s)
		}
		// The hashes computed: zh: always, h1: where it was needed.
		return fmt.Sprintf("pushed %s  %s in %s (%s/s)  %s", j.Info.Package, HumanBytes(ev.Bytes),
			ev.Elapsed.Round(time.Millisecond), HumanBytes(rate), hashList(ev.Sums.List()))
	case engine.JobFailed:
		return fmt.Sprintf("failed %s: %s", j.Info.Package, Advised(ev.Err))
	case engine.JobRetrying:
		return fmt.Sprintf("retry  %s: attempt %d failed, retrying in %s: %v", j.Info.Package, ev.Attempt, ev.Delay, ev.Err)
	case engine.IndexWritten:
		if ev.Err != nil {
			return fmt.Sprintf("failed %s: version indexes: %v", ev.Provider, ev.Err)
		}
		return fmt.Sprintf("tagged %s in %s", ev.Provider, ev.Dst)
	}
	return ""
}

// LockUpdates lists what `tfmirror lock` changed and returns how many hashes
// it added.
func LockUpdates(w io.Writer, updates []lockcheck.LockUpdate) int {
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
			if h.Platform == (backends.Platform{}) {
				fmt.Fprintf(w, "  + %s\n", h.Hash)
			} else {
				fmt.Fprintf(w, "  + %s  %s\n", h.Hash, h.Platform)
			}
			n++
		}
	}
	return n
}

func hashList(hs []hashing.Hash) string {
	return strings.Join(hashing.Strings(hs), " ")
}
