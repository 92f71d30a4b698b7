package oci_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// claimLock pushes to the repository's lock tag a claim as another
// tfmirror process leaves it (one killed while it held the lock, or one
// that takes it over), stating lease.
func claimLock(ctx context.Context, t testing.TB, reg *ocitest.Registry, repo, holder string, lease time.Duration) {
	t.Helper()
	reg.ClaimLock(ctx, t, repo, holder, lease)
}

const lockTestRepo = "providers/example.com/acme/alpha"

// A writer killed while it held the lock leaves its claim on the lock tag.
// The next writer waits for the lease the claim states, no longer, then
// takes the lock over, says so, and leaves the lock free.
func TestLockTakesOverAKilledWritersClaim(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	const lease = 1500 * time.Millisecond
	claimLock(ctx, t, reg, lockTestRepo, "ci-runner-7 pid 4242", lease)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	m := openTest(t, reg, testTemplate)
	mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
	start := time.Now()
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < lease {
		t.Errorf("the flush took %s: it did not wait for the killed writer's lease (%s)", took, lease)
	}
	if ws := strings.Join(m.Warnings(), "\n"); !strings.Contains(ws, "took over the lock") || !strings.Contains(ws, "ci-runner-7 pid 4242") {
		t.Errorf("warnings %q do not say whose lock was taken over", ws)
	}
	as, err := openTest(t, reg, testTemplate).Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives after the flush: %v %v", as, err)
	}
	assertLockFree(ctx, t, reg, lockTestRepo)
}

// assertLockFree checks that the lock is free: the lock tag names the
// claim the released tag names.
func assertLockFree(ctx context.Context, t *testing.T, reg *ocitest.Registry, repo string) {
	t.Helper()
	r, err := remote.NewRepository(reg.Host() + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	r.Client = &http.Client{Transport: &http.Transport{TLSClientConfig: reg.TLSConfig()}}
	held, err := r.Resolve(ctx, oci.LockTag)
	if err != nil {
		t.Fatalf("the lock tag after the flush: %v", err)
	}
	released, err := r.Resolve(ctx, oci.ReleasedTag)
	if err != nil {
		t.Fatalf("the released tag after the flush: %v", err)
	}
	if held.Digest != released.Digest {
		t.Errorf("the lock is not free after the flush: tag %q names %s, tag %q %s", oci.LockTag, held.Digest, oci.ReleasedTag, released.Digest)
	}
}

// A holder whose claim another writer replaced (one that outlived its
// lease, or claimed at the same moment) pushes nothing more: it checks the
// lock before each push of an index. Here another claim lands while the
// holder reads the version's tag; the holder's index is pushed only after
// that claim's lease, under a lock of its own.
func TestHolderStopsWhenAnotherWriterTakesTheLock(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	const lease = 1500 * time.Millisecond
	var (
		claimed   atomic.Bool // the holder has pushed a claim
		mu        sync.Mutex
		takenOver time.Time
		indexPush time.Time
	)
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/"+oci.LockTag):
			claimed.Store(true)
		case r.Method == http.MethodHead && strings.HasSuffix(r.URL.Path, "/manifests/1.0.0") && claimed.Load():
			// The holder reads the version's tag under the lock: another
			// writer claims the lock now, once.
			mu.Lock()
			defer mu.Unlock()
			if takenOver.IsZero() {
				claimLock(ctx, t, reg, lockTestRepo, "the other writer", lease)
				takenOver = time.Now()
			}
		case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/1.0.0"):
			mu.Lock()
			defer mu.Unlock()
			if indexPush.IsZero() {
				indexPush = time.Now()
			}
		}
		return false
	})
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	m := openTest(t, reg, testTemplate)
	mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
	if err := m.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	gotTakenOver, gotIndexPush := takenOver, indexPush
	mu.Unlock()
	if gotTakenOver.IsZero() || gotIndexPush.IsZero() {
		t.Fatalf("the lock was taken over at %v, the index pushed at %v: the test did not run as meant", gotTakenOver, gotIndexPush)
	}
	if gap := gotIndexPush.Sub(gotTakenOver); gap < lease {
		t.Errorf("the index was pushed %s after another writer claimed the lock, within that writer's lease (%s): the holder did not stop", gap, lease)
	}
	as, err := openTest(t, reg, testTemplate).Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives after the flush: %v %v", as, err)
	}
	assertLockFree(ctx, t, reg, lockTestRepo)
}

// Removing nothing takes no lock: it asks the registry nothing.
func TestRemovingNothingTakesNoLock(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	m := openTest(t, reg, testTemplate)
	reg.ResetRequests()
	if _, err := m.Remove(ctx, mustProvider(t, "example.com/acme/alpha"), nil); err != nil {
		t.Fatal(err)
	}
	if rs := reg.Requests(); len(rs) != 0 {
		t.Errorf("removing nothing sent %d requests: %v", len(rs), rs)
	}
}

// One writer alone holds the lock without waiting (the fast path): with
// the slow path's wait set to an hour, two flushes into a fresh repository
// finish, each pushing its claim to the gate and the lock tag, and
// releasing it.
func TestOneWriterTakesTheLockWithoutWaiting(t *testing.T) {
	defer oci.SetLockWait(time.Hour)()
	reg := ocitest.New(t)
	ctx := testCtx(t)
	m := openTest(t, reg, testTemplate)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		pkg := mustPkg(t, "example.com/acme/alpha", v, "linux_amd64")
		mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
		reg.ResetRequests()
		if err := m.Flush(ctx, pkg.Provider); err != nil {
			t.Fatal(err)
		}
		pushes := map[string]int{}
		for _, rq := range reg.Requests() {
			if _, tag, ok := strings.Cut(rq.Path, "/manifests/"); ok && rq.Method == http.MethodPut {
				pushes[tag]++
			}
		}
		for _, tag := range []string{oci.GateTag, oci.LockTag, oci.ReleasedTag} {
			if pushes[tag] != 1 {
				t.Errorf("flush of %s: %d pushes to tag %q, want 1 (pushes: %v)", v, pushes[tag], tag, pushes)
			}
		}
	}
	last := mustPkg(t, "example.com/acme/alpha", "1.1.0", "linux_amd64")
	as, err := openTest(t, reg, testTemplate).Archives(ctx, last.Provider, last.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives after the flushes: %v %v", as, err)
	}
	assertLockFree(ctx, t, reg, lockTestRepo)
}

// Four writers (four processes' worth: a Mirror each) flush one version,
// one platform each, at once, into a registry that answers some pushes of
// a tag late, for a few rounds: every platform is listed after each round.
// Writers that meet take the slow path or are stopped and flush again.
func TestFourWritersTakeTurns(t *testing.T) {
	t.Parallel()
	reg := ocitest.NewWithOptions(t, ocitest.Options{TornWrites: true})
	ctx := testCtx(t)
	var n atomic.Int64
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") && !strings.Contains(r.URL.Path, "/manifests/sha256:") && n.Add(1)%3 == 0 {
			time.Sleep(300 * time.Millisecond)
		}
		return false
	})
	plats := []string{"darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}
	for round := range 2 {
		v := fmt.Sprintf("1.%d.0", round)
		var wg sync.WaitGroup
		for _, plat := range plats {
			pkg := mustPkg(t, "example.com/acme/alpha", v, plat)
			m := openTest(t, reg, testTemplate)
			mustPut(ctx, t, m, pkg, providerZip(t, pkg, ""))
			wg.Go(func() {
				if err := m.Flush(ctx, pkg.Provider); err != nil {
					t.Errorf("round %d, %s: %v", round, plat, err)
				}
			})
		}
		wg.Wait()
		pkg := mustPkg(t, "example.com/acme/alpha", v, plats[0])
		as, err := openTest(t, reg, testTemplate).Archives(ctx, pkg.Provider, pkg.Version)
		if err != nil || len(as) != len(plats) {
			t.Errorf("round %d: %d platforms listed, want %d: %v %v", round, len(as), len(plats), as, err)
		}
	}
	assertLockFree(ctx, t, reg, lockTestRepo)
}
