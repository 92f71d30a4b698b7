package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// claimLock pushes to the repository's lock tag a claim as another
// tfmirror process leaves it (one killed while it held the lock, or one
// that takes it over), stating lease.
func claimLock(ctx context.Context, t testing.TB, reg *ocitest.Registry, repo, holder string, lease time.Duration) {
	t.Helper()
	r, err := remote.NewRepository(reg.Host() + "/" + repo)
	if err != nil {
		t.Error(err)
		return
	}
	r.PlainHTTP = reg.PlainHTTP
	r.Client = &http.Client{Transport: &http.Transport{TLSClientConfig: reg.TLSConfig()}}
	if err := r.Push(ctx, ocispec.DescriptorEmptyJSON, bytes.NewReader(ocispec.DescriptorEmptyJSON.Data)); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Error(err)
		return
	}
	man, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: oci.ArtifactTypeLock, Config: ocispec.DescriptorEmptyJSON, Layers: []ocispec.Descriptor{ocispec.DescriptorEmptyJSON},
		Annotations: map[string]string{
			"dev.tfmirror.lock.holder":   holder,
			"dev.tfmirror.lock.nonce":    fmt.Sprint(time.Now().UnixNano()),
			"dev.tfmirror.lock.lease-ms": fmt.Sprint(lease.Milliseconds()),
		}})
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man)
	if err := r.PushReference(ctx, desc, bytes.NewReader(man), oci.LockTag); err != nil {
		t.Error(err)
	}
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

// assertLockFree checks that the lock tag names the free lock manifest.
func assertLockFree(ctx context.Context, t *testing.T, reg *ocitest.Registry, repo string) {
	t.Helper()
	r, err := remote.NewRepository(reg.Host() + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	r.Client = &http.Client{Transport: &http.Transport{TLSClientConfig: reg.TLSConfig()}}
	_, rc, err := r.FetchReference(ctx, oci.LockTag)
	if err != nil {
		t.Fatalf("the lock tag after the flush: %v", err)
	}
	defer rc.Close()
	var man ocispec.Manifest
	if err := json.NewDecoder(rc).Decode(&man); err != nil {
		t.Fatal(err)
	}
	if man.ArtifactType != oci.ArtifactTypeLock || man.Annotations["dev.tfmirror.lock.holder"] != "" {
		t.Errorf("the lock is not free after the flush: %+v", man)
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

// Removing nothing takes no lock: it asks the registry nothing (a lock
// costs a claim and a second's wait).
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
