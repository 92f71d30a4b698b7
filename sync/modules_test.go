package sync_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// moduleWorld is a module registry over TLS whose versions live in each
// kind of location: an https zip (JSON body), a tar.gz (X-Terraform-Get on
// a 204) and a git repository (with a //subdir).
type moduleWorld struct {
	reg     *modulestest.Server
	client  *modules.Registry
	builder *fetch.Builder
	module  modules.Module
}

func newModuleWorld(t *testing.T) *moduleWorld {
	t.Helper()
	s := modulestest.New(t)
	files := []modulestest.Entry{{Name: "main.tf", Body: `variable "name" {}`}, {Name: "modules/sub/main.tf", Body: `module "up" { source = "../.." }`}}
	s.File("/archives/net-1.0.0.zip", modulestest.Zip(t, files))
	s.File("/archives/net-1.1.0.tar.gz", modulestest.TarGz(t, append(files, modulestest.Entry{Name: "CHANGELOG.md", Body: "1.1.0"})))
	repo := modulestest.GitRepo(t, []string{"v1.2.0"}, [][]modulestest.Entry{append(files, modulestest.Entry{Name: "CHANGELOG.md", Body: "1.2.0"})})
	s.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "/archives/net-1.0.0.zip"})
	s.Add("acme/net/aws", "1.1.0", modulestest.Download{Location: s.URL() + "/archives/net-1.1.0.tar.gz", Style: modulestest.Header204})
	s.Add("acme/net/aws", "v1.2.0", modulestest.Download{Location: "git::file://" + repo + "//modules/sub?ref=v1.2.0"})
	r, err := modules.NewRegistry("registry://"+s.Host(), s.Host(), modules.Options{HTTP: httpclient.Client{HTTP: s.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := modules.ParseModule("acme/net/aws", s.Host())
	return &moduleWorld{reg: s, client: r, builder: fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: s.Client()}, TempDir: t.TempDir()}), module: m}
}

func (w *moduleWorld) jobs(t *testing.T, dst modules.Writer, constraint string, force bool) []sync.ModuleJobSpec {
	t.Helper()
	c, _ := backends.ParseVersionConstraint(constraint)
	ls, err := w.client.ListModule(context.Background(), w.module, c)
	if err != nil {
		t.Fatal(err)
	}
	specs, unavailable := sync.ModuleJobs(ls, w.client.String(), w.builder, dst, force)
	if len(unavailable) > 0 {
		t.Fatalf("unavailable: %+v", unavailable)
	}
	return specs
}

// runModules runs specs and returns the results and every event.
func runModules(t *testing.T, opts engine.Options, specs ...sync.ModuleJobSpec) ([]sync.ModuleResult, []engine.Event, *engine.Tracker) {
	t.Helper()
	e := engine.NewEngine(context.Background(), opts)
	tasks := sync.ModuleTasks(specs)
	e.Enqueue(tasks...)
	e.Close()
	tr := engine.NewTracker()
	var evs []engine.Event
	for ev := range e.Events() {
		tr.Apply(ev)
		evs = append(evs, ev)
	}
	return sync.ModuleResults(tasks), evs, tr
}

func TestModulesRegistryToOCI(t *testing.T) {
	w := newModuleWorld(t)
	oreg := ocitest.New(t)
	dst, err := modoci.Open("oci://"+oreg.Host()+"/m/${namespace}/${name}-${system}", oreg.Host()+"/m/${namespace}/${name}-${system}",
		modoci.Options{HTTP: oreg.Client(), Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	results, evs, tr := runModules(t, engine.Options{Jobs: 3}, w.jobs(t, dst, ">= 1.0", false)...)
	if len(results) != 3 {
		t.Fatalf("%d results", len(results))
	}
	addrs := map[string]string{}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Spec.Version, r.Err)
		}
		if r.Stored.Present || r.Stored.Bytes <= 0 {
			t.Errorf("%s: %+v", r.Spec.Version, r.Stored)
		}
		addrs[r.Spec.Version.String()] = r.Stored.Address
	}
	repo := "oci://" + oreg.Host() + "/m/acme/net-aws"
	if !strings.HasPrefix(addrs["1.0.0"], repo+"?digest=sha256:") || !strings.HasPrefix(addrs["1.2.0"], repo+"//modules/sub?digest=sha256:") {
		t.Errorf("addresses %v", addrs)
	}
	// Events: every job was queued, started and done, named by module.
	counts := tr.Counts()
	if counts[engine.Done] != 3 {
		t.Errorf("tracker %v", counts)
	}
	for _, id := range tr.Order {
		j := tr.Jobs[id]
		if !strings.HasPrefix(j.Info.Label(), w.module.String()+" 1.") || j.Info.Dst != dst.String() || !j.Verified {
			t.Errorf("job %+v", j)
		}
	}
	if _, ok := evs[len(evs)-1].(engine.Idle); !ok {
		t.Errorf("last event %T, want Idle", evs[len(evs)-1])
	}
	// Second run: everything is present, nothing is uploaded.
	oreg.ResetRequests()
	results, _, _ = runModules(t, engine.Options{Jobs: 3}, w.jobs(t, dst, ">= 1.0", false)...)
	for _, r := range results {
		if r.Err != nil || !r.Stored.Present || r.Stored.Address != addrs[r.Spec.Version.String()] {
			t.Errorf("second run %s: %+v %v", r.Spec.Version, r.Stored, r.Err)
		}
	}
	if n := oreg.BlobUploads() + oreg.Count(http.MethodPut, "/manifests/"); n != 0 {
		t.Errorf("the second run uploaded %d times: %v", n, oreg.Requests())
	}
	// The registry lists the versions with their digests.
	ls, err := dst.ListModule(context.Background(), w.module, backends.VersionConstraint{})
	if err != nil || len(ls.Items) != 3 || ls.Items[0].Location != addrs["1.2.0"] {
		t.Errorf("listing %+v %v", ls, err)
	}
}

func TestModulesRegistryToFS(t *testing.T) {
	w := newModuleWorld(t)
	root := t.TempDir()
	dst, _ := modfs.Open(root, root, hashing.Options{})
	results, _, _ := runModules(t, engine.Options{Jobs: 2}, w.jobs(t, dst, "~> 1.1.0", false)...)
	if len(results) != 1 || results[0].Err != nil || results[0].Stored.Address != filepath.Join(root, w.module.Host, "acme/net/aws/1.1.0.zip") {
		t.Fatalf("results %+v", results)
	}
	results, _, _ = runModules(t, engine.Options{Jobs: 2}, w.jobs(t, dst, "~> 1.1.0", false)...)
	if !results[0].Stored.Present {
		t.Errorf("second run wrote again: %+v", results[0].Stored)
	}
}

// flakyBuilder fails with a transient error the first times, then builds.
type flakyBuilder struct {
	modules.Builder
	fails atomic.Int32
}

func (f *flakyBuilder) Build(ctx context.Context, m modules.Module, v modules.Version, loc modules.Location, progress func(int64)) (*modules.Package, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, backends.Transient(errors.New("connection reset"))
	}
	return f.Builder.Build(ctx, m, v, loc, progress)
}

func TestModulesRetryAndFailure(t *testing.T) {
	w := newModuleWorld(t)
	root := t.TempDir()
	dst, _ := modfs.Open(root, root, hashing.Options{})
	specs := w.jobs(t, dst, "= 1.0.0", false)
	fb := &flakyBuilder{Builder: w.builder}
	fb.fails.Store(2)
	specs[0].Builder = fb
	results, evs, _ := runModules(t, engine.Options{Backoff: time.Millisecond}, specs...)
	retries := 0
	for _, ev := range evs {
		if _, ok := ev.(engine.JobRetrying); ok {
			retries++
		}
	}
	if results[0].Err != nil || retries != 2 {
		t.Fatalf("after %d retries: %v", retries, results[0].Err)
	}
	// A permanent failure (the archive is gone) ends the job at once.
	w.reg.Handle("/archives/net-1.0.0.zip", func(rw http.ResponseWriter, r *http.Request) { http.NotFound(rw, r) })
	other := t.TempDir()
	dst2, _ := modfs.Open(other, other, hashing.Options{})
	results, evs, tr := runModules(t, engine.Options{Backoff: time.Millisecond}, w.jobs(t, dst2, "= 1.0.0", false)...)
	if !errors.Is(results[0].Err, backends.ErrNotFound) || len(tr.Failures()) != 1 {
		t.Fatalf("got %v", results[0].Err)
	}
	for _, ev := range evs {
		if _, ok := ev.(engine.JobRetrying); ok {
			t.Error("a 404 was retried")
		}
	}
}

// blockingBuilder waits until released, so a test can cancel a running
// job.
type blockingBuilder struct {
	started chan struct{}
	once    gosync.Once
}

func (b *blockingBuilder) Build(ctx context.Context, m modules.Module, v modules.Version, loc modules.Location, progress func(int64)) (*modules.Package, error) {
	b.once.Do(func() { close(b.started) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// blockedJobs queues the world's module versions on one worker, each
// blocking until cancelled, and returns once the first has started.
func blockedJobs(t *testing.T) (*engine.Engine, []engine.Task, []engine.JobID) {
	t.Helper()
	w := newModuleWorld(t)
	root := t.TempDir()
	dst, _ := modfs.Open(root, root, hashing.Options{})
	specs := w.jobs(t, dst, ">= 1.0", false)
	bb := &blockingBuilder{started: make(chan struct{})}
	for i := range specs {
		specs[i].Builder = bb
	}
	e := engine.NewEngine(context.Background(), engine.Options{Jobs: 1})
	tasks := sync.ModuleTasks(specs)
	ids := e.Enqueue(tasks...)
	<-bb.started
	return e, tasks, ids
}

func TestModulesCancel(t *testing.T) {
	e, _, ids := blockedJobs(t)
	e.Close()
	for _, id := range ids {
		e.Cancel(id)
	}
	tr := engine.NewTracker()
	for ev := range e.Events() {
		tr.Apply(ev)
	}
	if c := tr.Counts(); c[engine.Canceled] != 3 {
		t.Fatalf("states %v", c)
	}
}

// TestOneEngineRunsTransfersAndModules queues a provider transfer and
// module packages on one engine: one sequence of job ids, one event stream,
// the provider's index written once its archive landed, and each module
// job naming its module.
func TestOneEngineRunsTransfersAndModules(t *testing.T) {
	w := newWorld(t)
	mw := newModuleWorld(t)
	root := t.TempDir()
	mdst, err := modfs.Open(root, root, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := oneArchive(t, w)
	mods := sync.ModuleTasks(mw.jobs(t, mdst, "1.0.0", false))
	e := engine.NewEngine(context.Background(), engine.Options{Jobs: 2})
	ids := e.Enqueue(append([]engine.Task{sync.Transfer{Src: w.src, Dst: w.dst, Archive: a}}, mods...)...)
	e.Close()
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("ids %v, want two distinct ids from one sequence", ids)
	}
	tr := engine.NewTracker()
	indexes := 0
	for ev := range e.Events() {
		tr.Apply(ev)
		if iw, ok := ev.(engine.IndexWritten); ok && iw.Err == nil && iw.Provider == a.Provider {
			indexes++
		}
	}
	if c := tr.Counts(); c[engine.Done] != 2 {
		t.Fatalf("states %v; failures %v", c, tr.Failures())
	}
	if indexes != 1 {
		t.Errorf("the provider's index was written %d times, want once", indexes)
	}
	prov, mod := tr.Jobs[ids[0]].Info, tr.Jobs[ids[1]].Info
	if prov.Package != a.Package || prov.Module != (modules.Module{}) {
		t.Errorf("provider job %+v", prov)
	}
	if mod.Module != mw.module || mod.Name != mw.module.String()+" 1.0.0" {
		t.Errorf("module job %+v", mod)
	}
	if r := sync.ModuleResults(mods); len(r) != 1 || r[0].Err != nil || r[0].Stored.Address == "" {
		t.Errorf("module results %+v", r)
	}
}

// TestEngineStopCancelsEverything stops an engine with a module job running
// and another queued: both end cancelled and the event stream closes.
func TestEngineStopCancelsEverything(t *testing.T) {
	e, tasks, _ := blockedJobs(t)
	e.Stop()
	tr := engine.NewTracker()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range e.Events() {
			tr.Apply(ev)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the event stream stayed open after Stop")
	}
	if c := tr.Counts(); c[engine.Canceled] != len(tasks) {
		t.Errorf("states %v, want all %d cancelled", c, len(tasks))
	}
	for _, r := range sync.ModuleResults(tasks) {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v", r.Spec.Version, r.Err)
		}
	}
	if ids := e.Enqueue(tasks[0]); len(ids) != 0 {
		t.Errorf("a stopped engine took a job")
	}
}
