package sync_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// A pinned selection (what a mirror spec resolved) selects exactly its
// providers at exactly its versions, whatever else the source holds; a pinned
// version the source lacks is an unavailable item; the hashes a lock file gave
// for a version are evidence its archives are checked against, so a sync
// refuses an archive no lock file hash matches.
func TestPinnedSelection(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pin := func(version string, hashes ...hashing.Hash) sync.Locked {
		v, err := backends.ParseVersion(version)
		if err != nil {
			t.Fatal(err)
		}
		return sync.Locked{Version: v, Hashes: hashes, Source: "infra/.terraform.lock.hcl"}
	}
	alpha := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	beta := backendtest.Pkg(t, "example.com/acme/beta", "1.1.0", "linux_amd64")
	wrong := hashing.Hash("zh:" + strings.Repeat("0", 64))
	sel := sync.Selection{
		Pinned: map[backends.Provider][]sync.Locked{
			alpha.Provider: {pin("2.0.0"), pin("1.0.0", wrong), pin("3.0.0")},
			beta.Provider:  {pin("1.1.0")},
		},
		Platforms: []backends.Platform{alpha.Platform},
		// Ignored next to Pinned.
		Versions: backends.NewestMatching(nil),
	}
	plan, err := sync.MakePlan(ctx, w.src, w.dst, sel, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sync.Status{}
	for _, it := range plan.Items {
		got[it.Archive.Provider.Type+" "+it.Archive.Version.String()+" "+it.Archive.Platform.String()] = it.Status
	}
	want := map[string]sync.Status{
		"alpha 2.0.0 linux_amd64": sync.StatusMissing,
		"alpha 1.0.0 linux_amd64": sync.StatusMissing,
		"alpha 3.0.0 _":           sync.StatusUnavailable,
		"beta 1.1.0 linux_amd64":  sync.StatusMissing,
	}
	if len(got) != len(want) {
		t.Errorf("plan has %v, want %v", got, want)
	}
	for k, s := range want {
		if got[k] != s {
			t.Errorf("%s: %q, want %q (plan: %v)", k, got[k], s, got)
		}
	}

	eng := engine.NewEngine(ctx, engine.Options{Jobs: 2})
	sum := sync.Sync(ctx, eng, w.dst, false, sinkFunc(func(engine.Event) {}), plan)
	if sum.Done != 2 || len(sum.Failed) != 1 || len(sum.Skipped) != 1 {
		t.Fatalf("summary: done %d, failed %d, skipped %d; want 2, 1, 1", sum.Done, len(sum.Failed), len(sum.Skipped))
	}
	if f := sum.Failed[0]; f.Info.Package.Key() != alpha.Key() || !strings.Contains(f.Err.Error(), "lock file") {
		t.Errorf("failed job %s: %v; want %s refused by the lock file's hash", f.Info.Package, f.Err, alpha)
	}

	// A pinned provider the source does not hold at all is an error naming
	// it, not a provider left out quietly.
	gamma := backendtest.Pkg(t, "example.com/acme/gamma", "1.0.0", "linux_amd64")
	_, err = sync.MakePlan(ctx, w.src, w.dst, sync.Selection{Pinned: map[backends.Provider][]sync.Locked{gamma.Provider: {pin("1.0.0")}}}, sync.PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "gamma") {
		t.Errorf("plan of a provider the source lacks: %v", err)
	}
	if errors.Is(err, sync.ErrNothingSelected) && !strings.Contains(err.Error(), "gamma") {
		t.Errorf("unhelpful error: %v", err)
	}
}

type sinkFunc func(engine.Event)

func (f sinkFunc) Show(ev engine.Event) { f(ev) }
