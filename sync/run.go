package sync

import (
	"context"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
)

// Sink receives a run's events in the order they happen: the command line's
// text and JSON reporters, a test's recorder. Show must not block for long;
// the engine's pump buffers while it runs.
type Sink interface{ Show(Event) }

// Sinks is a Sink that shows each event to every sink in turn (a
// reporter and an audit log).
type Sinks []Sink

// Show implements Sink.
func (ss Sinks) Show(ev Event) {
	for _, s := range ss {
		if s != nil {
			s.Show(ev)
		}
	}
}

// PlanItemLeft: a package of the plan that the run does not transfer, sent
// before the jobs start: present in the destination already (Status
// present), or a problem (a conflict without force, a package the source
// cannot supply).
type PlanItemLeft struct {
	Item     Item
	Src, Dst string
}

func (PlanItemLeft) isEvent() {}

// Summary is what one run did: the closing line, the JSON summary event and
// the exit code are made from it.
type Summary struct {
	Src, Dst   string
	Done       int            // archives that landed, verified
	Present    int            // already in the destination, hashes agreeing
	Failed     []*TrackedJob  // jobs that ended in an error
	Canceled   int            // jobs cancelled, or never started, by an interrupt
	Skipped    []Item         // conflicts without force, packages the source cannot supply
	Unsupplied int            // versions a module registry could not supply (no plan item)
	IndexFails []IndexWritten // index documents that could not be written
	// Held are the packages of the plans dst holds after the run: present
	// before it, or landed by it.
	Held     []backends.Package
	Bytes    int64
	Duration time.Duration
	// Interrupted: the context ended before every job did.
	Interrupted bool
}

// Problems counts what went wrong: failed jobs, skipped packages and index
// documents not written. A run with no problems and no interrupt succeeded.
func (s Summary) Problems() int {
	return len(s.Failed) + len(s.Skipped) + s.Unsupplied + len(s.IndexFails)
}

// OK reports whether the run did everything it set out to do.
func (s Summary) OK() bool { return s.Problems() == 0 && !s.Interrupted }

// Sync carries out plans into dst on eng and reports every event to sink
// (the caller shows the Summary it returns): each plan's missing packages (and with force its
// conflicting ones) become jobs; the rest are reported as PlanItemLeft. The
// engine writes each provider's index documents once its last job ends;
// providers whose archives dst holds but does not list (a run interrupted
// before its index flush) are flushed here. Sync closes eng: one run per
// engine.
func Sync(ctx context.Context, eng *Engine, dst backends.Writer, force bool, sink Sink, plans ...*Plan) Summary {
	start := time.Now()
	sum := Summary{Dst: dst.String()}
	var specs []Task
	present := 0
	for _, p := range plans {
		present += p.Count(StatusPresent)
	}
	sum.Held = make([]backends.Package, 0, present)
	for _, p := range plans {
		srcName, dstName := p.Src.String(), dst.String()
		if sum.Src == "" {
			sum.Src = srcName
		}
		// The items are read in place (Jobs would copy those left): a plan
		// of 100,000 present archives is the run's largest memory.
		for i := range p.Items {
			it := &p.Items[i]
			if it.job(force) {
				specs = append(specs, p.transfer(dst, it, force))
				continue
			}
			if it.Status == StatusPresent {
				sum.Present++
				sum.Held = append(sum.Held, it.Archive.Package)
			} else {
				sum.Skipped = append(sum.Skipped, *it)
			}
			sink.Show(PlanItemLeft{Item: *it, Src: srcName, Dst: dstName})
		}
	}
	t := NewTracker()
	show := func(ev Event) {
		t.Apply(ev)
		sink.Show(ev)
	}
	drain(eng, specs, show)
	if ctx.Err() == nil {
		flushStale(ctx, dst, plans, show)
		writeBackfill(ctx, dst, plans, show)
	}
	sum.tally(ctx, t, start)
	return sum
}

// RunTasks runs tasks that no plan made (module packages) on eng, reports
// every event to sink, and returns the summary. It closes eng.
func RunTasks(ctx context.Context, eng *Engine, src, dst string, sink Sink, tasks []Task) Summary {
	start := time.Now()
	sum := Summary{Src: src, Dst: dst}
	t := NewTracker()
	drain(eng, tasks, func(ev Event) {
		t.Apply(ev)
		sink.Show(ev)
	})
	sum.tally(ctx, t, start)
	return sum
}

// drain enqueues tasks, closes eng and shows its events until they end.
func drain(eng *Engine, tasks []Task, show func(Event)) {
	eng.Enqueue(tasks...)
	eng.Close()
	for ev := range eng.Events() {
		show(ev)
	}
}

// tally counts what the tracked jobs did.
func (sum *Summary) tally(ctx context.Context, t *Tracker, start time.Time) {
	for _, j := range t.Failures() {
		if j.State == Canceled {
			sum.Canceled++
		} else {
			sum.Failed = append(sum.Failed, j)
		}
	}
	for _, id := range t.Order {
		if j := t.Jobs[id]; j.State == Done && j.Info.Module == (modules.Module{}) {
			sum.Held = append(sum.Held, j.Info.Package)
		}
	}
	sum.Done, sum.Bytes, sum.IndexFails = t.Counts()[Done], t.BytesMoved(), t.IndexFails
	sum.Interrupted = ctx.Err() != nil
	sum.Duration = time.Since(start)
}

// flushStale writes the index documents of providers whose archives dst
// holds without listing them, that no job of the run has flushed.
func flushStale(ctx context.Context, dst backends.Writer, plans []*Plan, show func(Event)) {
	seen := map[backends.Provider]bool{}
	for _, p := range plans {
		for _, prov := range p.StaleIndexes() {
			if seen[prov] {
				continue
			}
			seen[prov] = true
			if err := dst.Flush(ctx, prov); err != nil {
				show(IndexWritten{Dst: dst.String(), Provider: prov, Err: &backends.OpError{Op: "write index", Place: dst.String(), Side: "destination", Err: err}})
			}
		}
	}
}
