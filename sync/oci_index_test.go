package sync_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// A job succeeds only when its package is listed: when the registry
// refuses version 1.0.0's index, that version's jobs end failed although
// their manifests were pushed, while 1.1.0's, whose index was pushed, are
// done. A retry pushes the index again.
func TestJobsFailWhenTheIndexDoesNotListThem(t *testing.T) {
	w := newWorld(t)
	reg := ocitest.New(t)
	ctx := context.Background()
	var refuse atomic.Bool
	refuse.Store(true)
	reg.Intercept(func(rw http.ResponseWriter, r *http.Request) bool {
		if refuse.Load() && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/1.0.0") {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(rw, `{"errors":[{"code":"MANIFEST_INVALID","message":"manifest invalid"}]}`)
			return true
		}
		return false
	})
	r, err := place.Open(ctx, "oci://"+reg.Host()+"/listed/${hostname}/${namespace}/${type}", place.Options{CACertFile: reg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	dst := r.(backends.Writer)
	plan, err := sync.MakePlan(ctx, w.src, dst, mustSelection(t, []string{"example.com/acme/alpha"}, "< 2.0.0"), sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	specs, _ := plan.Jobs(dst, false)
	eng := engine.NewEngine(ctx, engine.Options{})
	eng.Enqueue(specs...)
	tr := engine.NewTracker()
	idle := make(chan struct{}, 4)
	go func() {
		for ev := range eng.Events() {
			tr.Apply(ev)
			if _, ok := ev.(engine.Idle); ok {
				idle <- struct{}{}
			}
		}
		close(idle)
	}()
	<-idle
	failed := tr.Failures()
	if len(failed) != 3 || tr.Counts()[engine.Done] != 3 || len(tr.IndexFails) != 1 {
		t.Fatalf("counts %v, %d index failures; want 1.0.0's 3 jobs failed, 1.1.0's done", tr.Counts(), len(tr.IndexFails))
	}
	for _, j := range failed {
		if j.Info.Package.Version.String() != "1.0.0" || !strings.Contains(j.Err.Error(), "write index") || !strings.Contains(j.Err.Error(), "MANIFEST_INVALID") {
			t.Errorf("%s: %v", j.Info.Package, j.Err)
		}
	}

	refuse.Store(false)
	for _, j := range failed {
		if !eng.Retry(j.Info.ID) {
			t.Fatalf("retry %s refused", j.Info.Package)
		}
	}
	<-idle
	eng.Close()
	for range idle {
	}
	if c := tr.Counts(); c[engine.Done] != 6 {
		t.Fatalf("after the retry: %v %v", c, failures(tr))
	}
	v, _ := backends.ParseVersion("1.0.0")
	as, err := dst.Archives(ctx, specs[0].(sync.Transfer).Archive.Provider, v)
	if err != nil || len(as) != 3 {
		t.Fatalf("1.0.0 after the retry: %v %v", as, err)
	}
}
