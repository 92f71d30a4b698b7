package ttlcache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/ttlcache"
)

// TestReusedWithinTTL: a value younger than the TTL is reused; with a TTL
// of zero every Get loads.
func TestReusedWithinTTL(t *testing.T) {
	ctx := context.Background()
	var loads atomic.Int32
	load := func(context.Context) (int, error) { return int(loads.Add(1)), nil }
	c := ttlcache.Cache[int]{TTL: time.Hour}
	for range 3 {
		if v, stale, err := c.Get(ctx, "k", load); v != 1 || stale != 0 || err != nil {
			t.Fatalf("Get = %d, %v, %v; want 1, 0, nil", v, stale, err)
		}
	}
	var none ttlcache.Cache[int]
	none.Get(ctx, "k", load)
	if v, _, _ := none.Get(ctx, "k", load); v != 3 {
		t.Errorf("with no TTL the second Get returned %d, want a fresh load (3)", v)
	}
}

// TestConcurrentGetsShareOneLoad: Gets of one key while a load runs wait
// for it and get its value, and the load is not cancelled with the
// request that started it.
func TestConcurrentGetsShareOneLoad(t *testing.T) {
	c := ttlcache.Cache[string]{TTL: time.Hour}
	var loads atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	load := func(ctx context.Context) (string, error) {
		if loads.Add(1) == 1 {
			close(started)
		}
		<-release
		return "v", ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	got := make([]string, 4)
	errs := make([]error, 4)
	wg.Add(1)
	go func() { defer wg.Done(); got[0], _, errs[0] = c.Get(ctx, "k", load) }()
	<-started
	for i := 1; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _, errs[i] = c.Get(context.Background(), "k", load) }()
	}
	cancel()
	close(release)
	wg.Wait()
	for i := range got {
		if got[i] != "v" || errs[i] != nil {
			t.Errorf("Get %d = %q, %v; want the shared load's v", i, got[i], errs[i])
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1 shared by every Get", n)
	}
}

// TestStaleServedWhenLoadFails: a failed load keeps nothing; the last
// value comes back with its age and the error, and with none kept, the
// error alone.
func TestStaleServedWhenLoadFails(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("upstream down")
	var c ttlcache.Cache[[]string]
	if v, stale, err := c.Get(ctx, "k", func(context.Context) ([]string, error) { return nil, boom }); v != nil || stale != 0 || !errors.Is(err, boom) {
		t.Fatalf("nothing kept: Get = %v, %v, %v; want nil, 0, the error", v, stale, err)
	}
	c.Get(ctx, "k", func(context.Context) ([]string, error) { return []string{"1.0.0"}, nil })
	v, stale, err := c.Get(ctx, "k", func(context.Context) ([]string, error) { return nil, boom })
	if len(v) != 1 || v[0] != "1.0.0" || stale <= 0 || !errors.Is(err, boom) {
		t.Errorf("kept: Get = %v, %v, %v; want [1.0.0], its age, the error", v, stale, err)
	}
}
