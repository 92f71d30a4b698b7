package sync

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
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
	Attempts int
	// Backoff is the first retry delay, doubled each retry; zero means 500ms.
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

// JobSpec is one package to move, or, with Task set, other work that runs
// on the same workers with the same queue, retries and events.
type JobSpec struct {
	Src     backends.Reader
	Dst     backends.Writer
	Archive backends.Archive // as the source lists it, with its evidence
	Force   bool             // replace a different archive in the destination

	// Task, when set, replaces the package transfer (Src, Dst, Archive and
	// Force are then unused): module packages run this way.
	Task Task
}

// Task is work other than a provider package transfer.
type Task interface {
	// Info describes the job; the engine sets its ID.
	Info() JobInfo
	// Attempt makes one try. It reports bytes moved through progress and
	// each hash checked through check, and returns what JobDone says (the
	// engine sets its ID). Errors for which backends.IsTransient holds are
	// retried.
	Attempt(ctx context.Context, progress func(int64), check func(hashing.Check)) (JobDone, error)
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
	spec    JobSpec
	refused error // the destination cannot hold the job's provider (a usage error)
	state   JobState
	cancel  context.CancelFunc
	bytes   atomic.Int64
	started atomic.Int64 // unix nanos of the current attempt
	sent    int64        // bytes in the last progress event (ticker only)
}

type flushKey struct {
	dst      backends.Writer
	provider backends.Provider
}

type flushState struct {
	pending int
	landed  []*job       // done since the last Flush
	writing gosync.Mutex // serialises Flush calls for one destination and provider
}

// Engine runs sync jobs on a pool of workers. Jobs can be queued while others
// run; events report everything that happens, in order per job.
type Engine struct {
	opts   Options
	ctx    context.Context
	events chan Event

	mu      gosync.Mutex
	wake    *gosync.Cond
	queue   []*job
	jobs    map[JobID]*job
	nextID  JobID
	active  int
	flushes map[flushKey]*flushState
	closed  bool

	workers gosync.WaitGroup
	stop    chan struct{}
	// hashSlots bounds how many archives are inflated for h1: at once, to
	// the cores there are: more would only slow each other down, while the
	// other workers keep downloading.
	hashSlots chan struct{}

	// Events wait in an unbounded list until the front end takes them, so
	// the engine never blocks on a slow (or not yet started) reader.
	evMu      gosync.Mutex
	evWake    chan struct{}
	evPending []Event
}

// NewEngine starts an engine whose workers run until ctx is cancelled or
// Close is called and the queue drains. Read Events until it is closed.
func NewEngine(ctx context.Context, opts Options) *Engine {
	e := &Engine{
		opts:    opts.withDefaults(),
		ctx:     ctx,
		events:  make(chan Event),
		jobs:    map[JobID]*job{},
		flushes: map[flushKey]*flushState{},
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

// Enqueue adds jobs and returns their ids. Jobs whose destination cannot
// hold their providers together with the others it is given
// (backends.ProviderChecker) fail before they stage anything, with the
// reason.
func (e *Engine) Enqueue(specs ...JobSpec) []JobID {
	refused := checkProviders(specs)
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]JobID, 0, len(specs))
	for _, s := range specs {
		if e.closed {
			break
		}
		e.nextID++
		j := &job{spec: s}
		if s.Task != nil {
			j.info = s.Task.Info()
		} else {
			j.refused = refused[s.Dst]
			j.info = JobInfo{Package: s.Archive.Package, Src: s.Src.String(), Dst: s.Dst.String(), Size: s.Archive.Size}
		}
		j.info.ID = e.nextID
		e.jobs[j.info.ID] = j
		e.enqueueLocked(j)
		ids = append(ids, j.info.ID)
	}
	return ids
}

func (e *Engine) enqueueLocked(j *job) {
	j.state = Queued
	j.bytes.Store(0)
	j.sent = 0
	e.queue = append(e.queue, j)
	e.active++
	if j.spec.Task == nil {
		k := flushKey{j.spec.Dst, j.info.Package.Provider}
		if e.flushes[k] == nil {
			e.flushes[k] = &flushState{}
		}
		e.flushes[k].pending++
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
			if j.spec.Task == nil {
				fs := e.flushes[flushKey{j.spec.Dst, j.info.Package.Provider}]
				fs.landed = append(fs.landed, j)
			}
		case errors.Is(err, context.Canceled):
			j.state = Canceled
			ev = JobFailed{ID: j.info.ID, Err: err, Canceled: true}
		default:
			j.state = Failed
			ev = JobFailed{ID: j.info.ID, Err: err}
		}
		e.mu.Unlock()
		e.endJob(j, ev)
	}
}

// endJob does the bookkeeping when a job ends (ev, if any, says how): when
// it was the provider's last pending job in that destination, it flushes the
// provider's index documents, even after cancellation so that what landed
// is listed; when nothing is left, it reports Idle. Call it without e.mu.
func (e *Engine) endJob(j *job, ev Event) {
	if ev != nil {
		e.emit(ev)
	}
	if j.spec.Task == nil {
		e.flushIfLast(j)
	}
	e.mu.Lock()
	e.active--
	idle := e.active == 0
	e.mu.Unlock()
	if idle {
		e.emit(Idle{})
	}
}

// flushIfLast writes a provider's index documents once its last pending job
// in that destination has ended, if any of its archives landed. The jobs
// whose packages the index documents then do not list (Flush's
// backends.UnlistedError) have not succeeded after all: they end failed.
func (e *Engine) flushIfLast(j *job) {
	k := flushKey{j.spec.Dst, j.info.Package.Provider}
	e.mu.Lock()
	fs := e.flushes[k]
	fs.pending--
	var landed []*job
	if fs.pending == 0 {
		landed, fs.landed = fs.landed, nil
	}
	e.mu.Unlock()
	if len(landed) == 0 {
		return
	}
	fs.writing.Lock()
	err := j.spec.Dst.Flush(context.WithoutCancel(e.ctx), k.provider)
	fs.writing.Unlock()
	if err == nil {
		e.emit(IndexWritten{Dst: j.info.Dst, Provider: k.provider})
		return
	}
	unlisted := backends.Unlisted(err)
	e.emit(IndexWritten{Dst: j.info.Dst, Provider: k.provider, Err: &backends.OpError{Op: "write index", Place: j.info.Dst, Side: "destination", Err: err}})
	for _, lj := range landed {
		cause, ok := unlisted[lj.info.Package.Key()]
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
			pkg := lj.info.Package
			e.emit(JobFailed{ID: lj.info.ID, Err: &backends.OpError{Op: "write index", Place: lj.info.Dst, Side: "destination", Pkg: &pkg, Err: cause}})
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
			n := j.bytes.Load()
			if n == j.sent {
				continue
			}
			j.sent = n
			rate := 0.0
			if el := time.Since(time.Unix(0, j.started.Load())).Seconds(); el > 0 {
				rate = float64(n) / el
			}
			e.emit(JobProgress{ID: j.info.ID, Bytes: n, Total: j.info.Size, Rate: rate})
		}
		e.mu.Unlock()
	}
}

// run tries a job until it succeeds, fails permanently, or runs out of
// attempts.
func (e *Engine) run(ctx context.Context, j *job) error {
	for attempt := 1; ; attempt++ {
		e.emit(JobStarted{ID: j.info.ID, Attempt: attempt})
		err := e.attempt(backends.WithAttempt(ctx, attempt), j)
		if err == nil || ctx.Err() != nil {
			if ctx.Err() != nil {
				return context.Canceled
			}
			return nil
		}
		if !backends.IsTransient(err) || attempt >= e.opts.Attempts {
			return err
		}
		delay := e.opts.Backoff << (attempt - 1)
		e.emit(JobRetrying{ID: j.info.ID, Attempt: attempt, Err: err, Delay: delay})
		select {
		case <-ctx.Done():
			return context.Canceled
		case <-time.After(delay):
		}
	}
}

// checkProviders asks each destination of the specs whether it can hold
// their providers, and returns the refusals by destination.
func checkProviders(specs []JobSpec) map[backends.Writer]error {
	byDst := map[backends.Writer][]backends.Provider{}
	var order []backends.Writer
	for _, s := range specs {
		if s.Task != nil {
			continue
		}
		if _, ok := byDst[s.Dst]; !ok {
			order = append(order, s.Dst)
		}
		byDst[s.Dst] = append(byDst[s.Dst], s.Archive.Provider)
	}
	refused := map[backends.Writer]error{}
	for _, dst := range order {
		if err := backends.CheckProviders(dst, byDst[dst]); err != nil {
			refused[dst] = err
		}
	}
	return refused
}

// attempt streams the archive into a staging area of the destination,
// computing zh: on the way, then h1:, checks every source of truth, and only
// then commits.
func (e *Engine) attempt(ctx context.Context, j *job) (err error) {
	if j.spec.Task != nil {
		return e.attemptTask(ctx, j)
	}
	a, spec := j.spec.Archive, j.spec
	opErr := func(op, side, place string, err error) error {
		return &backends.OpError{Op: op, Side: side, Place: place, Pkg: &a.Package, Err: err}
	}
	if j.refused != nil {
		return opErr("stage", "destination", j.info.Dst, j.refused)
	}
	j.bytes.Store(0)
	j.started.Store(time.Now().UnixNano())
	start := time.Now()

	unpacked, limit := maxArchive(e.opts.Hashing)
	if limit >= 0 && a.Size > limit {
		return opErr("open", "source", j.info.Src, fmt.Errorf("the source states %d bytes, more than a zip that unpacks within --max-unpacked (%d bytes) can be; refusing to download it", a.Size, unpacked))
	}
	rc, err := spec.Src.Open(ctx, a)
	if err != nil {
		return opErr("open", "source", j.info.Src, err)
	}
	defer rc.Close()
	st, err := spec.Dst.Stage(ctx, a.Package)
	if err != nil {
		return opErr("stage", "destination", j.info.Dst, err)
	}
	defer st.Abort()

	// zh: is computed on the way, unless the source's stream already
	// computes it to authenticate the archive. Network reads come in TLS
	// records of at most 16 KiB: they are gathered into large writes, or the
	// staging file would cost a syscall per record.
	bw := bufio.NewWriterSize(st, 1<<20)
	var w io.Writer = bw
	zh := hashing.NewZipHasher()
	hr, sourceHashes := rc.(backends.HashingReader)
	if !sourceHashes {
		w = io.MultiWriter(bw, zh)
	}
	buf := make([]byte, 1<<20)
	n, err := io.CopyBuffer(w, &countingReader{ctx: ctx, r: rc, n: &j.bytes, limit: limit, unpacked: unpacked}, buf)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return opErr("transfer", "", j.info.Src+" -> "+j.info.Dst, err)
	}
	if a.Size >= 0 && n != a.Size {
		return opErr("transfer", "source", j.info.Src, backends.Transient(fmt.Errorf("received %d bytes, but the source states the archive has %d", n, a.Size)))
	}
	zipHash := zh.Sum()
	if sourceHashes {
		var ok bool
		if zipHash, ok = hr.ZipHash(); !ok {
			if zipHash, err = hashing.HashZipFile(st.Path()); err != nil {
				return opErr("hash", "destination", j.info.Dst, err)
			}
		}
	}
	// Inflating for h1: is the CPU-bound part: one archive per core, while
	// the other workers keep downloading.
	select {
	case e.hashSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	h1, err := hashing.HashZip(st.Path(), e.opts.Hashing)
	<-e.hashSlots
	if err != nil {
		return opErr("hash", "source", j.info.Src, unusableZip(spec.Src, a, err))
	}
	sums := hashing.Sums{H1: h1, ZH: zipHash}
	res := hashing.Verify(sums, a.Evidence...)
	for _, c := range res.Checks {
		e.emit(HashChecked{ID: j.info.ID, Check: c})
	}
	if err := res.Err(); err != nil {
		return opErr("verify", "source", j.info.Src, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.Commit(ctx, sums, spec.Force); err != nil {
		return opErr("commit", "destination", j.info.Dst, err)
	}
	e.emit(JobDone{ID: j.info.ID, Sums: sums, Result: res, Bytes: n, Elapsed: time.Since(start), Verified: res.Verified()})
	return nil
}

// unusableZip is the error for an archive that arrived whole (the copy
// above catches a transfer cut short) but is not a zip that can be hashed.
// It is permanent: reading the same bytes again meets the same fault, even
// where it reads like a dropped connection (a deflate stream that ends
// early reports io.ErrUnexpectedEOF). It names the source's own file where
// there is one, not the staging copy, which is gone by the time anyone
// reads the message.
func unusableZip(src backends.Reader, a backends.Archive, err error) error {
	var ze *hashing.ZipError
	if !errors.As(err, &ze) {
		// Not the zip's fault: the staging copy could not be read.
		return fmt.Errorf("the archive is not a usable zip: %w", err)
	}
	what := "the archive"
	if lp, ok := src.(backends.LocalPather); ok {
		what = lp.LocalPath(a)
	}
	return backends.Permanent(fmt.Errorf("%s is not a usable zip: %w", what, ze.Err))
}

// maxArchive returns the hashing cap on unpacked bytes and the most bytes
// an archive may have: a zip is larger than the contents it unpacks to only
// by its headers, so one beyond the cap (plus room for headers) could never
// be hashed, and a source that states or sends more is lying or endless.
// -1 means no cap.
func maxArchive(o hashing.Options) (unpacked, limit int64) {
	switch {
	case o.MaxUnpacked < 0:
		return -1, -1
	case o.MaxUnpacked == 0:
		unpacked = hashing.DefaultMaxUnpacked
	default:
		unpacked = o.MaxUnpacked
	}
	return unpacked, unpacked + 1<<20
}

// attemptTask makes one try of a task job.
func (e *Engine) attemptTask(ctx context.Context, j *job) error {
	j.bytes.Store(0)
	j.started.Store(time.Now().UnixNano())
	done, err := j.spec.Task.Attempt(ctx,
		func(n int64) { j.bytes.Add(n) },
		func(c hashing.Check) { e.emit(HashChecked{ID: j.info.ID, Check: c}) })
	if err != nil {
		return err
	}
	done.ID = j.info.ID
	e.emit(done)
	return nil
}

type countingReader struct {
	ctx      context.Context
	r        io.Reader
	n        *atomic.Int64
	read     int64
	limit    int64 // -1: none
	unpacked int64 // the cap limit derives from, for the message
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	c.read += int64(n)
	if c.limit >= 0 && c.read > c.limit {
		return n, fmt.Errorf("the source sent more than %d bytes, more than a zip that unpacks within --max-unpacked (%d bytes) can be; refusing the rest", c.limit, c.unpacked)
	}
	return n, err
}
