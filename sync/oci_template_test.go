package sync_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// A template that cannot tell the plan's providers apart is a usage error
// of the plan, before anything is written; with the selection narrowed to
// one provider, the same template is fine.
func TestPlanRefusesATemplateThatMixesProviders(t *testing.T) {
	w := newWorld(t) // alpha and beta, one host and namespace
	reg := ocitest.New(t)
	ctx := context.Background()
	open := func() backends.Writer {
		r, err := place.Open(ctx, "oci://"+reg.Host()+"/mixed/${namespace}", place.Options{CACertFile: reg.CAFile()})
		if err != nil {
			t.Fatal(err)
		}
		return r.(backends.Writer)
	}
	_, err := sync.MakePlan(ctx, w.src, open(), sync.Selection{}, sync.PlanOptions{})
	if !errors.Is(err, backends.ErrUsage) {
		t.Fatalf("plan of alpha and beta into one repository: %v, want a usage error", err)
	}
	for _, want := range []string{"does not use ${type}", "2 types (alpha, beta)", "mixed/${namespace}"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if n := reg.BlobUploads(); n != 0 {
		t.Errorf("%d blob uploads", n)
	}
	// Alone, alpha would fit, but beta's turn would come: a template
	// without ${type} is refused for writing whatever the selection.
	_, err = sync.MakePlan(ctx, w.src, open(), mustSelection(t, []string{"example.com/acme/alpha"}, ""), sync.PlanOptions{})
	if !errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), "add ${type}") {
		t.Fatalf("alpha alone into mixed/${namespace}: %v, want a usage error naming the fix", err)
	}
}

// Front ends that queue jobs without a plan (the UI) meet the same rule in
// the engine: the jobs fail before they stage anything, with the reason,
// and the registry receives nothing.
func TestEngineRefusesJobsATemplateCannotTellApart(t *testing.T) {
	w := newWorld(t)
	reg := ocitest.New(t)
	ctx := context.Background()
	r, err := place.Open(ctx, "oci://"+reg.Host()+"/mixed/${namespace}", place.Options{CACertFile: reg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	dst := r.(backends.Writer)
	var specs []engine.Task
	for _, p := range []string{"example.com/acme/alpha", "example.com/acme/beta"} {
		pp, _ := backends.ParseProvider(p)
		v, _ := backends.ParseVersion("1.0.0")
		as, err := w.src.Archives(ctx, pp, v)
		if err != nil || len(as) == 0 {
			t.Fatal(as, err)
		}
		specs = append(specs, sync.Transfer{Src: w.src, Dst: dst, Archive: as[0]})
	}
	reg.ResetRequests()
	tr := runJobs(t, ctx, specs...)
	if tr.Counts()[engine.Failed] != 2 {
		t.Fatalf("counts %v, want both jobs failed", tr.Counts())
	}
	for _, j := range tr.Failures() {
		if !errors.Is(j.Err, backends.ErrUsage) || !strings.Contains(j.Err.Error(), "does not use ${type}") {
			t.Errorf("%s: %v", j.Info.Package, j.Err)
		}
	}
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("the registry got %d requests: %v", n, reg.Requests())
	}
}
