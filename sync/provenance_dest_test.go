package sync_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// The destination's own signed SHA256SUMS is evidence (issue 31 item 7): a
// mirror that keeps the signed release of acme/alpha 1.0.0 (linux_amd64,
// darwin_arm64) gets no windows_amd64 of 1.0.0 from an unsigned source,
// by a sync or by transfers queued as the UI queues them: the signed
// release never had one. A platform it lists still lands, checked against
// the signed hash; before, the unsigned extra landed, exit 0, and the next
// verify failed.
func TestSyncHoldsToTheDestinationsSignedSHA256SUMS(t *testing.T) {
	ctx := context.Background()
	reg, src := signedSource(t)
	addr := reg.Host() + "/acme/alpha"
	sel := mustSelection(t, []string{addr}, "1.0.0")
	dst := openFS(t, filepath.Join(t.TempDir(), "dst"))
	if _, sum := run(t, src, dst, mustSelection(t, []string{addr}, "1.0.0"), nil); sum.Done != 2 || !sum.OK() {
		t.Fatalf("registry -> fs: %+v", sum)
	}
	// Keep only linux: darwin_arm64 is then missing in dst, signed.
	darwin := filepath.Join(dst.Dir(), filepath.FromSlash(addr), "terraform-provider-alpha_1.0.0_darwin_arm64.zip")
	if err := os.Remove(darwin); err != nil {
		t.Fatal(err)
	}

	// An unsigned mirror with a windows_amd64 the release never had, and a
	// darwin_arm64 that is not the signed one.
	other := filepath.Join(t.TempDir(), "other")
	for plat, salt := range map[string]string{"windows_amd64": "extra", "darwin_arm64": "forged"} {
		pkg := backendtest.Pkg(t, addr, "1.0.0", plat)
		p := filepath.Join(other, filepath.FromSlash(addr), pkg.Filename())
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, backendtest.ProviderZip(t, pkg, salt), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unsigned := openFS(t, other)
	plan, sum := run(t, unsigned, openFS(t, dst.Dir()), sel, nil)
	if sum.Done != 0 || sum.OK() {
		t.Errorf("sync from the unsigned mirror: %d done, ok %v, plan %v", sum.Done, sum.OK(), plan.Findings())
	}
	for _, it := range plan.Items {
		if it.Archive.Platform.String() == "windows_amd64" && (it.Status != sync.StatusError || !strings.Contains(it.Detail, "signed release has no such package")) {
			t.Errorf("windows_amd64: %s %s", it.Status, it.Detail)
		}
	}
	linux := backendtest.Pkg(t, addr, "1.0.0", "linux_amd64")
	versions := []backends.Version{linux.Version}
	landed := func() []string {
		var out []string
		as, _ := backends.ListArchives(ctx, openFS(t, dst.Dir()), linux.Provider, versions)
		for _, a := range as {
			out = append(out, a.Platform.String())
		}
		return out
	}
	if got := landed(); len(got) != 1 || got[0] != "linux_amd64" {
		t.Errorf("the destination holds %v after the sync, want linux_amd64 alone", got)
	}

	// Transfers no plan made (the UI's queue) meet the same check.
	var tasks []engine.Task
	as, err := backends.ListArchives(ctx, unsigned, linux.Provider, versions)
	if err != nil || len(as) != 2 {
		t.Fatalf("the unsigned mirror lists %v, %v", as, err)
	}
	w := openFS(t, dst.Dir())
	for _, a := range as {
		tasks = append(tasks, sync.Transfer{Src: unsigned, Dst: w, Archive: a})
	}
	eng := engine.NewEngine(ctx, engine.Options{Backoff: 1})
	tr := engine.NewTracker()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range eng.Events() {
			tr.Apply(ev)
		}
	}()
	eng.Enqueue(sync.AuthenticateTransfers(ctx, tasks, nil)...)
	eng.Close()
	<-done
	if c := tr.Counts(); c[engine.Done] != 0 || len(tr.Failures()) != 2 {
		t.Errorf("queued transfers: %v, want both failed", c)
	}
	for _, j := range tr.Failures() {
		if j.Info.Package.Platform.String() == "windows_amd64" && !strings.Contains(j.Err.Error(), "signed release has no such package") {
			t.Errorf("windows_amd64 queued: %v", j.Err)
		}
	}
	if got := landed(); len(got) != 1 {
		t.Errorf("the destination holds %v after the queued transfers, want linux_amd64 alone", got)
	}

	// The signed darwin_arm64 from the registry still lands.
	if _, sum := run(t, src, openFS(t, dst.Dir()), sel, nil); sum.Done != 1 || !sum.OK() {
		t.Errorf("the signed darwin_arm64: %+v", sum)
	}
}
