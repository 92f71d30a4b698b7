package sync

import (
	"context"
	"slices"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Sink receives a run's events in the order they happen: the command line's
// text and JSON reporters, a test's recorder. Show must not block for long;
// the engine's pump buffers while it runs.
type Sink interface{ Show(engine.Event) }

// Idler is a Sink that may hold what it shows (lines written together):
// a run calls Idle when no event is ready, so that what was shown reaches
// the reader before the run waits, and when it ends.
type Idler interface{ Idle() }

// idle tells sink, if it is an Idler, that no event is ready.
func idle(sink Sink) {
	if i, ok := sink.(Idler); ok {
		i.Idle()
	}
}

// Sinks is a Sink that shows each event to every sink in turn (a
// reporter and an audit log).
type Sinks []Sink

// Show implements Sink.
func (ss Sinks) Show(ev engine.Event) {
	for _, s := range ss {
		if s != nil {
			s.Show(ev)
		}
	}
}

// Idle implements Idler for the sinks that are.
func (ss Sinks) Idle() {
	for _, s := range ss {
		if s != nil {
			idle(s)
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

func (PlanItemLeft) IsEvent() {}

// Summary is what one run did: the closing line, the JSON summary event and
// the exit code are made from it.
type Summary struct {
	Src, Dst   string
	Done       int                   // archives that landed, verified
	Present    int                   // already in the destination, hashes agreeing
	Failed     []*engine.TrackedJob  // jobs that ended in an error
	Canceled   int                   // jobs cancelled, or never started, by an interrupt
	Skipped    []Item                // conflicts without force, packages the source cannot supply
	Unsupplied int                   // versions a module registry could not supply (no plan item)
	IndexFails []engine.IndexWritten // index documents that could not be written
	// Held are the providers of the plans some of whose packages dst holds
	// after the run (present before it, or landed by it), sorted: one
	// entry a provider, not a package (a re-sync of 100,000 archives held
	// a list of them).
	Held     []backends.Provider
	Bytes    int64
	Duration time.Duration
	// Interrupted: the context ended before every job did.
	Interrupted bool
	// Err ended the run before any job ran: planning failed part of the
	// way (a listing a streamed plan needed), after what it had planned
	// was reported. An interrupt while planning is Interrupted instead.
	Err error
}

// Problems counts what went wrong: failed jobs, skipped packages and index
// documents not written. A run with no problems and no interrupt succeeded.
func (s Summary) Problems() int {
	return len(s.Failed) + len(s.Skipped) + s.Unsupplied + len(s.IndexFails)
}

// OK reports whether the run did everything it set out to do.
func (s Summary) OK() bool { return s.Problems() == 0 && !s.Interrupted && s.Err == nil }

// Sync carries out plans into dst on eng and reports every event to sink
// (the caller shows the Summary it returns): each plan's missing packages (and with force its
// conflicting ones) become jobs; the rest are reported as PlanItemLeft. The
// engine writes each provider's index documents once its last job ends;
// providers whose archives dst holds but does not list (a run interrupted
// before its index flush) are flushed here. Sync closes eng: one run per
// engine.
func Sync(ctx context.Context, eng *engine.Engine, dst backends.Writer, force bool, sink Sink, plans ...*Plan) Summary {
	r := NewRun(dst, force, sink)
	for _, p := range plans {
		r.Add(p)
	}
	return r.Finish(ctx, eng)
}

// Run is one sync into a destination, fed whole plans (Sync) or a plan
// provider by provider as it is made (PlanEach), which a sync of 100,000
// archives that are all present then never holds whole. Either way the
// events and the summary are the same.
type Run struct {
	dst     backends.Writer
	dstName string
	force   bool
	sink    Sink
	sum     Summary
	tasks   []engine.Task
	// stale are the providers whose index documents are to be flushed
	// (Plan.StaleIndexes), once each; backfill is the plans'.
	stale    []backends.Provider
	seen     map[backends.Provider]bool
	backfill []providerCarry
	// waiting are the events Add holds back for Finish.
	waiting []engine.Event
	start   time.Time
}

// NewRun starts a sync into dst whose events go to sink; with force,
// conflicting packages are replaced.
func NewRun(dst backends.Writer, force bool, sink Sink) *Run {
	return &Run{dst: dst, dstName: dst.String(), force: force, sink: sink, sum: Summary{Dst: dst.String()}, seen: map[backends.Provider]bool{}, start: time.Now()}
}

// Add takes a plan, or one provider's part of one, into the run: its
// missing packages (and with force its conflicting ones) become jobs, the
// rest are reported as PlanItemLeft. Those of packages present in dst are
// reported at once, while every package left so far is present, so a plan
// streamed through Add is not kept; from the first left for another reason
// (a conflict, a package the source cannot supply: what a person reads)
// on, they wait for Finish, which the caller calls after showing what
// planning warned of, as when the whole plan was made first.
func (r *Run) Add(p *Plan) {
	srcName := p.Src.String()
	if r.sum.Src == "" {
		r.sum.Src = srcName
	}
	// The items are read in place (Jobs would copy those left).
	for i := range p.Items {
		it := &p.Items[i]
		if it.job(r.force) {
			r.tasks = append(r.tasks, p.transfer(r.dst, it, r.force))
			continue
		}
		if it.Status == StatusPresent {
			r.sum.Present++
			r.sum.hold(it.Archive.Provider)
		} else {
			r.sum.Skipped = append(r.sum.Skipped, *it)
		}
		ev := PlanItemLeft{Item: *it, Src: srcName, Dst: r.dstName}
		if r.waiting == nil && it.Status == StatusPresent {
			r.sink.Show(ev)
		} else {
			r.waiting = append(r.waiting, ev)
		}
	}
	for _, prov := range p.StaleIndexes() {
		if !r.seen[prov] {
			r.seen[prov] = true
			r.stale = append(r.stale, prov)
		}
	}
	r.backfill = append(r.backfill, p.backfill...)
}

// Finish shows the events Add held back, runs the jobs on eng (closing
// it), writes what the plans leave to write, and returns the summary; its
// Duration counts from NewRun (planning streamed into the run included).
func (r *Run) Finish(ctx context.Context, eng *engine.Engine) Summary {
	for _, ev := range r.waiting {
		r.sink.Show(ev)
	}
	r.waiting = nil
	t := engine.NewTracker()
	show := func(ev engine.Event) {
		t.Apply(ev)
		r.sink.Show(ev)
	}
	drain(eng, r.tasks, show, func() { idle(r.sink) })
	if ctx.Err() == nil {
		flushStale(ctx, r.dst, r.stale, show)
		writeBackfill(ctx, r.dst, r.backfill, show)
	}
	idle(r.sink)
	r.sum.tally(ctx, t, r.start)
	return r.sum
}

// Abandon ends a run whose planning failed with err, running no job: the
// summary counts what was reported (the packages found present). Where
// ctx ended (a signal while planning), the run was interrupted, as one
// whose jobs a signal cancelled: that is not an error of its own.
func (r *Run) Abandon(ctx context.Context, err error) Summary {
	if ctx.Err() != nil {
		r.sum.Interrupted = true
	} else {
		r.sum.Err = err
	}
	r.sum.Duration = time.Since(r.start)
	return r.sum
}

// RunTasks runs tasks that no plan made (module packages) on eng, reports
// every event to sink, and returns the summary. It closes eng.
func RunTasks(ctx context.Context, eng *engine.Engine, src, dst string, sink Sink, tasks []engine.Task) Summary {
	start := time.Now()
	sum := Summary{Src: src, Dst: dst}
	t := engine.NewTracker()
	drain(eng, tasks, func(ev engine.Event) {
		t.Apply(ev)
		sink.Show(ev)
	}, func() { idle(sink) })
	sum.tally(ctx, t, start)
	return sum
}

// drain enqueues tasks, closes eng and shows its events until they end,
// calling idle whenever none is ready, and once they have ended.
func drain(eng *engine.Engine, tasks []engine.Task, show func(engine.Event), idle func()) {
	eng.Enqueue(tasks...)
	eng.Close()
	events := eng.Events()
	for {
		var ev engine.Event
		var ok bool
		select {
		case ev, ok = <-events:
		default:
			idle()
			ev, ok = <-events
		}
		if !ok {
			idle()
			return
		}
		show(ev)
	}
}

// hold adds p to Held, where it is not yet.
func (sum *Summary) hold(p backends.Provider) {
	i, found := slices.BinarySearchFunc(sum.Held, p, func(a, b backends.Provider) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
	if !found {
		sum.Held = slices.Insert(sum.Held, i, p)
	}
}

// tally counts what the tracked jobs did.
func (sum *Summary) tally(ctx context.Context, t *engine.Tracker, start time.Time) {
	for _, j := range t.Failures() {
		if j.State == engine.Canceled {
			sum.Canceled++
		} else {
			sum.Failed = append(sum.Failed, j)
		}
	}
	for _, id := range t.Order {
		if j := t.Jobs[id]; j.State == engine.Done && j.Info.Module == (modules.Module{}) {
			sum.hold(j.Info.Package.Provider)
		}
	}
	sum.Done, sum.Bytes, sum.IndexFails = t.Counts()[engine.Done], t.BytesMoved(), t.IndexFails
	sum.Interrupted = ctx.Err() != nil
	sum.Duration = time.Since(start)
}

// flushStale writes the index documents of providers whose archives dst
// holds without listing them, that no job of the run has flushed.
func flushStale(ctx context.Context, dst backends.Writer, stale []backends.Provider, show func(engine.Event)) {
	for _, prov := range stale {
		if err := dst.Flush(ctx, prov); err != nil {
			show(engine.IndexWritten{Dst: dst.String(), Provider: prov, Err: &backends.OpError{Op: "write index", Place: dst.String(), Side: "destination", Err: err}})
		}
	}
}
