package sync_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// world is a source fs mirror with index documents and an empty destination.
type world struct {
	srcDir, dstDir string
	src, dst       *fs.Mirror
	seeds          []backendtest.Seed
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{srcDir: t.TempDir(), dstDir: filepath.Join(t.TempDir(), "dst")}
	w.seeds = backendtest.Seeds(t,
		[]string{"example.com/acme/alpha", "example.com/acme/beta"},
		[]string{"1.0.0", "1.1.0", "2.0.0"},
		[]string{"linux_amd64", "darwin_arm64", "windows_amd64"})
	backendtest.WritePacked(t, w.srcDir, w.seeds)
	var err error
	w.src, err = fs.Open(w.srcDir, w.srcDir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Give the source index documents, so it states hashes like a real mirror.
	for _, p := range []string{"example.com/acme/alpha", "example.com/acme/beta"} {
		pp, _ := backends.ParseProvider(p)
		if err := w.src.Flush(context.Background(), pp); err != nil {
			t.Fatal(err)
		}
	}
	w.dst, err = fs.Open(w.dstDir, w.dstDir, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// syncAll plans src -> dst and runs the missing items; it returns the plan and
// the tracker.
func syncAll(t *testing.T, ctx context.Context, src backends.Reader, dst backends.Writer, sel sync.Selection, opts engine.Options) (*sync.Plan, *engine.Tracker) {
	t.Helper()
	tr := engine.NewTracker()
	plan := runMissing(t, ctx, src, dst, sel, opts, func(ev engine.Event) { tr.Apply(ev) })
	return plan, tr
}

// runMissing plans src -> dst, runs the missing items on an engine with
// opts, hands each event to each in order, and returns the plan.
func runMissing(t *testing.T, ctx context.Context, src backends.Reader, dst backends.Writer, sel sync.Selection, opts engine.Options, each func(engine.Event)) *sync.Plan {
	t.Helper()
	plan, err := sync.MakePlan(ctx, src, dst, sel, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.NewEngine(ctx, opts)
	for _, it := range plan.Items {
		if it.Status == sync.StatusMissing {
			eng.Enqueue(sync.Transfer{Src: src, Dst: dst, Archive: it.Archive})
		}
	}
	eng.Close()
	for ev := range eng.Events() {
		each(ev)
	}
	return plan
}

func assertClean(t *testing.T, dst backends.Reader) {
	t.Helper()
	findings, err := sync.VerifyPlace(context.Background(), dst, sync.Selection{}, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			t.Errorf("verify destination: %s %s: %s", f.Status, f.Package, f.Detail)
		}
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.Contains(filepath.Base(p), ".tfmirror-tmp-") {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}

func TestSyncFSToFS(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	plan, tr := syncAll(t, ctx, w.src, w.dst, sync.Selection{}, engine.Options{Jobs: 3})
	if n := plan.Count(sync.StatusMissing); n != len(w.seeds) {
		t.Fatalf("missing = %d, want %d", n, len(w.seeds))
	}
	if c := tr.Counts(); c[engine.Done] != len(w.seeds) {
		t.Fatalf("counts = %v, failures: %v", c, failures(tr))
	}
	for _, j := range tr.Jobs {
		if !j.Verified {
			t.Errorf("%s: not verified against the source index", j.Info.Package)
		}
		var idx bool
		for _, c := range j.Checks {
			idx = idx || c.Source.Kind == hashing.SourceMirrorIndex && c.Status == hashing.Match
		}
		if !idx {
			t.Errorf("%s: no mirror index check reported: %+v", j.Info.Package, j.Checks)
		}
	}
	assertClean(t, w.dst)
	assertNoTempFiles(t, w.dstDir)

	// Incremental: a second plan finds everything present, reading no
	// archive bytes.
	plan2, tr2 := syncAll(t, ctx, w.src, w.dst, sync.Selection{}, engine.Options{})
	if n := plan2.Count(sync.StatusPresent); n != len(w.seeds) {
		t.Fatalf("second run: present = %d, want %d: %v", n, len(w.seeds), plan2.Findings())
	}
	if tr2.BytesMoved() != 0 || len(tr2.Jobs) != 0 {
		t.Fatalf("second run moved %d bytes in %d jobs", tr2.BytesMoved(), len(tr2.Jobs))
	}
}

func failures(tr *engine.Tracker) []string {
	var out []string
	for _, j := range tr.Failures() {
		out = append(out, j.Err.Error())
	}
	return out
}

func TestSelection(t *testing.T) {
	w := newWorld(t)
	f, _ := backends.ParseProviderFilter("acme/alpha")
	vc, _ := backends.ParseVersionConstraint("~> 1.0")
	lin, _ := backends.ParsePlatform("linux_amd64")
	riscv, _ := backends.ParsePlatform("linux_riscv64")
	sel := sync.Selection{Providers: []backends.ProviderFilter{f}, Versions: vc, Platforms: []backends.Platform{lin, riscv}}
	plan, err := sync.MakePlan(context.Background(), w.src, w.dst, sel, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count(sync.StatusMissing) != 2 || plan.Count(sync.StatusUnavailable) != 2 {
		t.Fatalf("plan: %+v", plan.Findings())
	}
	for _, it := range plan.Items {
		if it.Archive.Provider.Type != "alpha" || it.Archive.Version.String() == "2.0.0" {
			t.Errorf("unexpected item %s", it.Archive.Package)
		}
		if it.Status == sync.StatusUnavailable && !strings.Contains(it.Detail, "does not offer") {
			t.Errorf("detail: %s", it.Detail)
		}
	}
}

func TestConflictNeverOverwrittenWithoutForce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	syncAll(t, ctx, w.src, w.dst, sync.Selection{}, engine.Options{})
	// Replace one source archive with different content and rewrite its index.
	s := w.seeds[0]
	other := backendtest.ProviderZip(t, s.Package, "different build")
	p := filepath.Join(w.srcDir, "example.com/acme/alpha", s.Package.Filename())
	if err := os.WriteFile(p, other, 0o644); err != nil {
		t.Fatal(err)
	}
	src2, _ := fs.Open(w.srcDir, w.srcDir, fs.Options{})
	// Forget the old hashes: drop the version document so Flush recomputes.
	os.Remove(filepath.Join(w.srcDir, "example.com/acme/alpha", s.Package.Version.String()+".json"))
	src2.Flush(ctx, s.Package.Provider)

	plan, err := sync.MakePlan(ctx, src2, w.dst, sync.Selection{}, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count(sync.StatusConflict) != 1 {
		t.Fatalf("conflicts = %d: %v", plan.Count(sync.StatusConflict), plan.Findings())
	}
	var it sync.Item
	for _, x := range plan.Items {
		if x.Status == sync.StatusConflict {
			it = x
		}
	}
	// The detail says what differs; which flag resolves it is the front
	// end's to say (ui/report.Advice).
	if !strings.Contains(it.Detail, "states") || !strings.Contains(it.Detail, "zh:") {
		t.Errorf("conflict detail does not say what differs: %s", it.Detail)
	}
	before, _ := os.ReadFile(filepath.Join(w.dstDir, "example.com/acme/alpha", s.Package.Filename()))
	// Without force the engine refuses even when asked directly.
	tr := runJobs(t, ctx, sync.Transfer{Src: src2, Dst: w.dst, Archive: it.Archive})
	if tr.Counts()[engine.Failed] != 1 || !errors.Is(tr.Failures()[0].Err, backends.ErrConflict) {
		t.Fatalf("unforced conflict: %v", failures(tr))
	}
	after, _ := os.ReadFile(filepath.Join(w.dstDir, "example.com/acme/alpha", s.Package.Filename()))
	if string(before) != string(after) {
		t.Fatal("destination archive changed without --force")
	}
	tr = runJobs(t, ctx, sync.Transfer{Src: src2, Dst: w.dst, Archive: it.Archive, Force: true})
	if tr.Counts()[engine.Done] != 1 {
		t.Fatalf("forced: %v", failures(tr))
	}
	assertClean(t, w.dst)
}

func runJobs(t *testing.T, ctx context.Context, specs ...engine.Task) *engine.Tracker {
	t.Helper()
	eng := engine.NewEngine(ctx, engine.Options{Backoff: time.Millisecond})
	eng.Enqueue(specs...)
	eng.Close()
	tr := engine.NewTracker()
	for ev := range eng.Events() {
		tr.Apply(ev)
	}
	return tr
}

// faultySource wraps a real source and breaks Open's stream in chosen ways.
type faultySource struct {
	backends.Reader
	mu     gosync.Mutex
	opens  int
	stream func(real io.ReadCloser, n int) io.ReadCloser
}

func (f *faultySource) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	rc, err := f.Reader.Open(ctx, a)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.opens++
	n := f.opens
	f.mu.Unlock()
	return f.stream(rc, n), nil
}

type failAfter struct {
	rc   io.ReadCloser
	left int
	err  error
}

func (r *failAfter) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, r.err
	}
	if len(p) > r.left {
		p = p[:r.left]
	}
	n, err := r.rc.Read(p)
	r.left -= n
	return n, err
}
func (r *failAfter) Close() error { return r.rc.Close() }

func oneArchive(t *testing.T, w *world) backends.Archive {
	t.Helper()
	s := w.seeds[0]
	as, err := w.src.Archives(context.Background(), s.Package.Provider, s.Package.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Platform == s.Package.Platform {
			return a
		}
	}
	t.Fatal("seed not found")
	return backends.Archive{}
}

func TestSourceFailsMidStreamThenRecovers(t *testing.T) {
	w := newWorld(t)
	src := &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		if n == 1 {
			return &failAfter{rc: rc, left: 100, err: io.ErrUnexpectedEOF}
		}
		return rc
	}}
	a := oneArchive(t, w)
	eng := engine.NewEngine(context.Background(), engine.Options{Backoff: time.Millisecond})
	eng.Enqueue(sync.Transfer{Src: src, Dst: w.dst, Archive: a})
	eng.Close()
	tr := engine.NewTracker()
	retried := false
	for ev := range eng.Events() {
		if _, ok := ev.(engine.JobRetrying); ok {
			retried = true
		}
		tr.Apply(ev)
	}
	if !retried || tr.Counts()[engine.Done] != 1 {
		t.Fatalf("retried=%v counts=%v failures=%v", retried, tr.Counts(), failures(tr))
	}
	assertClean(t, w.dst)
	assertNoTempFiles(t, w.dstDir)
}

func TestSourceFailsPermanently(t *testing.T) {
	w := newWorld(t)
	src := &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		return &failAfter{rc: rc, left: 100, err: io.ErrUnexpectedEOF}
	}}
	a := oneArchive(t, w)
	tr := runJobs(t, context.Background(), sync.Transfer{Src: src, Dst: w.dst, Archive: a})
	if tr.Counts()[engine.Failed] != 1 || src.opens != 4 {
		t.Fatalf("counts=%v opens=%d", tr.Counts(), src.opens)
	}
	msg := tr.Failures()[0].Err.Error()
	if !strings.Contains(msg, a.Package.String()) || !strings.Contains(msg, "unexpected EOF") {
		t.Errorf("message: %s", msg)
	}
	assertNoTempFiles(t, w.dstDir)
	if as, err := w.dst.Archives(context.Background(), a.Provider, a.Version); len(as) != 0 {
		t.Errorf("something is visible after a failed job: %v %v", as, err)
	}
}

func TestWrongArchiveRejected(t *testing.T) {
	w := newWorld(t)
	// The source serves another build than its index states.
	s := w.seeds[0]
	wrong := backendtest.ProviderZip(t, s.Package, "tampered")
	if err := os.WriteFile(filepath.Join(w.srcDir, "example.com/acme/alpha", s.Package.Filename()), wrong, 0o644); err != nil {
		t.Fatal(err)
	}
	a := oneArchive(t, w)
	tr := runJobs(t, context.Background(), sync.Transfer{Src: w.src, Dst: w.dst, Archive: a})
	if tr.Counts()[engine.Failed] != 1 {
		t.Fatalf("counts=%v", tr.Counts())
	}
	err := tr.Failures()[0].Err
	if !errors.Is(err, hashing.ErrHashMismatch) {
		t.Fatalf("err = %v, want a hash mismatch", err)
	}
	// The source's index states zh: (as tfmirror writes them by default).
	for _, want := range []string{a.Package.String(), "zh mismatch against mirror index", "want zh:", "got zh:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.dstDir, "example.com/acme/alpha", a.Package.Filename())); err == nil {
		t.Error("a rejected archive is visible in the destination")
	}
	assertNoTempFiles(t, w.dstDir)
}

type stallReader struct {
	ctx     context.Context
	rc      io.ReadCloser
	started chan struct{}
	once    gosync.Once
}

func (s *stallReader) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.started) })
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}
func (s *stallReader) Close() error { return s.rc.Close() }

func TestStallCancelledCleanly(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	src := &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		return &stallReader{ctx: ctx, rc: rc, started: started}
	}}
	a := oneArchive(t, w)
	eng := engine.NewEngine(ctx, engine.Options{Jobs: 1})
	eng.Enqueue(sync.Transfer{Src: src, Dst: w.dst, Archive: a}, sync.Transfer{Src: src, Dst: w.dst, Archive: a})
	go func() { <-started; cancel() }()
	tr := engine.NewTracker()
	for ev := range eng.Events() { // closes once every job has ended
		tr.Apply(ev)
	}
	if c := tr.Counts(); c[engine.Canceled] != 2 {
		t.Fatalf("counts = %v", c)
	}
	assertNoTempFiles(t, w.dstDir)
}

// cancelAtCommit is a destination whose archives commit and then cancel
// the engine, as a Ctrl-C right after the last archive landed does.
type cancelAtCommit struct {
	*fs.Mirror
	cancel context.CancelFunc
}

func (d *cancelAtCommit) Stage(ctx context.Context, pkg backends.Package) (backends.Staged, error) {
	st, err := d.Mirror.Stage(ctx, pkg)
	return cancelingStaged{st, d.cancel, ctx}, err
}

type cancelingStaged struct {
	backends.Staged
	cancel context.CancelFunc
	ctx    context.Context
}

func (s cancelingStaged) Commit(ctx context.Context, sums hashing.Sums, force bool) error {
	err := s.Staged.Commit(ctx, sums, force)
	s.cancel()
	<-s.ctx.Done()
	return err
}

// TestCanceledAfterLandingIsListed: an archive that landed before the
// cancellation counts as landed, so its index documents list it, rather
// than an unlisted archive left on disk.
func TestCanceledAfterLandingIsListed(t *testing.T) {
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := oneArchive(t, w)
	eng := engine.NewEngine(ctx, engine.Options{Jobs: 1})
	eng.Enqueue(sync.Transfer{Src: w.src, Dst: &cancelAtCommit{w.dst, cancel}, Archive: a})
	tr := engine.NewTracker()
	for ev := range eng.Events() {
		tr.Apply(ev)
	}
	if c := tr.Counts(); c[engine.Done] != 1 {
		t.Fatalf("counts = %v, want the landed job done", c)
	}
	as, err := w.dst.Archives(context.Background(), a.Provider, a.Version)
	if err != nil || len(as) != 1 || len(as[0].Evidence) == 0 {
		t.Fatalf("the destination's documents do not list the archive that landed: %v %+v", err, as)
	}
}

func TestCancelOneJob(t *testing.T) {
	w := newWorld(t)
	started := make(chan struct{})
	jobCtx, stopStall := context.WithCancel(context.Background())
	defer stopStall()
	src := &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		if n == 1 {
			return &stallReader{ctx: jobCtx, rc: rc, started: started}
		}
		return rc
	}}
	as, _ := w.src.Archives(context.Background(), w.seeds[0].Package.Provider, w.seeds[0].Package.Version)
	eng := engine.NewEngine(context.Background(), engine.Options{Jobs: 1, Backoff: time.Millisecond})
	ids := eng.Enqueue(sync.Transfer{Src: src, Dst: w.dst, Archive: as[0]}, sync.Transfer{Src: src, Dst: w.dst, Archive: as[1]})
	go func() {
		<-started
		eng.Cancel(ids[0])
		stopStall()
	}()
	tr := engine.NewTracker()
	idle := 0
	for ev := range eng.Events() {
		tr.Apply(ev)
		if _, ok := ev.(engine.Idle); ok {
			idle++
			if idle == 1 {
				// Retry the cancelled job; it now succeeds.
				if !eng.Retry(ids[0]) {
					t.Error("Retry refused")
				}
				eng.Close()
			}
		}
	}
	if c := tr.Counts(); c[engine.Done] != 2 {
		t.Fatalf("counts = %v failures=%v", c, failures(tr))
	}
	assertClean(t, w.dst)
}

// fullDisk is a real fs destination whose staged writes fail after a budget,
// as a full disk does.
type fullDisk struct {
	*fs.Mirror
	left atomic.Int64
}

func (d *fullDisk) Stage(ctx context.Context, pkg backends.Package) (backends.Staged, error) {
	st, err := d.Mirror.Stage(ctx, pkg)
	if err != nil {
		return nil, err
	}
	return &fullStaged{Staged: st, d: d}, nil
}

type fullStaged struct {
	backends.Staged
	d *fullDisk
}

func (s *fullStaged) Write(p []byte) (int, error) {
	if s.d.left.Add(-int64(len(p))) < 0 {
		return 0, errors.New("write: no space left on device")
	}
	return s.Staged.Write(p)
}

func TestDestinationOutOfSpace(t *testing.T) {
	w := newWorld(t)
	dst := &fullDisk{Mirror: w.dst}
	dst.left.Store(1500) // room for about one small archive
	_, tr := syncAll(t, context.Background(), w.src, dst, sync.Selection{}, engine.Options{Jobs: 2, Backoff: time.Millisecond})
	if tr.Counts()[engine.Failed] == 0 {
		t.Fatal("no job failed on a full disk")
	}
	for _, j := range tr.Failures() {
		if !strings.Contains(j.Err.Error(), "no space left on device") || !strings.Contains(j.Err.Error(), j.Info.Package.String()) {
			t.Errorf("message: %v", j.Err)
		}
	}
	assertClean(t, w.dst)
	assertNoTempFiles(t, w.dstDir)
	// With room again, a re-run completes the sync.
	_, tr = syncAll(t, context.Background(), w.src, w.dst, sync.Selection{}, engine.Options{})
	if tr.Counts()[engine.Failed] != 0 {
		t.Fatalf("re-run: %v", failures(tr))
	}
	plan, _ := sync.MakePlan(context.Background(), w.src, w.dst, sync.Selection{}, sync.PlanOptions{})
	if plan.Count(sync.StatusPresent) != len(w.seeds) {
		t.Fatalf("after re-run: %v", plan.Findings())
	}
	assertClean(t, w.dst)
}

func TestProgressIsSnapshotted(t *testing.T) {
	w := newWorld(t)
	// A slow source: 64 bytes every 5ms, so a transfer spans several ticks.
	src := &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		return &slowReader{rc: rc}
	}}
	a := oneArchive(t, w)
	eng := engine.NewEngine(context.Background(), engine.Options{ProgressInterval: 20 * time.Millisecond})
	eng.Enqueue(sync.Transfer{Src: src, Dst: w.dst, Archive: a})
	eng.Close()
	progress, reads := 0, 0
	for ev := range eng.Events() {
		if _, ok := ev.(engine.JobProgress); ok {
			progress++
		}
	}
	reads = int(a.Size/64) + 1
	if progress == 0 || progress >= reads {
		t.Fatalf("%d progress events for %d reads: want a few snapshots, not one per chunk", progress, reads)
	}
}

type slowReader struct{ rc io.ReadCloser }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	if len(p) > 64 {
		p = p[:64]
	}
	return s.rc.Read(p)
}
func (s *slowReader) Close() error { return s.rc.Close() }

// The engine never blocks on its reader: thousands of jobs queued before
// anyone reads events still run to the end.
func TestManyJobsBeforeReading(t *testing.T) {
	w := newWorld(t)
	a := oneArchive(t, w)
	specs := make([]engine.Task, 1500)
	for i := range specs {
		specs[i] = sync.Transfer{Src: w.src, Dst: w.dst, Archive: a}
	}
	eng := engine.NewEngine(context.Background(), engine.Options{Jobs: 4})
	eng.Enqueue(specs...)
	eng.Close()
	time.Sleep(50 * time.Millisecond)
	tr := engine.NewTracker()
	for ev := range eng.Events() {
		tr.Apply(ev)
	}
	if c := tr.Counts(); c[engine.Done] != len(specs) {
		t.Fatalf("counts = %v, failures %v", c, failures(tr)[:min(3, len(failures(tr)))])
	}
}
