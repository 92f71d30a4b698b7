package fs

import (
	"errors"
	"os"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every caller returns only after a sync that started after its call
// ended: its bytes, written before the call, were in that sync.
func TestGroupSyncCoversEveryCaller(t *testing.T) {
	var clock atomic.Int64
	var mu gosync.Mutex
	type span struct{ start, end int64 }
	var syncs []span
	g := newGroupSync(func(*os.File) error {
		s := span{start: clock.Add(1)}
		for range 100 { // some work, so that callers queue up behind it
			clock.Add(0)
		}
		s.end = clock.Add(1)
		mu.Lock()
		syncs = append(syncs, s)
		mu.Unlock()
		return nil
	})
	const callers = 200
	var wg gosync.WaitGroup
	calls := make([]span, callers)
	for i := range callers {
		wg.Go(func() {
			calls[i].start = clock.Add(1)
			if err := g.sync(nil); err != nil {
				t.Error(err)
			}
			calls[i].end = clock.Add(1)
		})
	}
	wg.Wait()
	for i, c := range calls {
		covered := false
		for _, s := range syncs {
			covered = covered || s.start > c.start && s.end < c.end
		}
		if !covered {
			t.Fatalf("caller %d (%d-%d) returned with no sync inside its wait: %v", i, c.start, c.end, syncs)
		}
	}
	t.Logf("%d callers, %d syncs", callers, len(syncs))
}

// Callers that wait while a sync runs share the next one, and each gets
// the error of the sync that was to make its bytes durable.
func TestGroupSyncSharesAndReportsErrors(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	failed := errors.New("disk gone")
	g := newGroupSync(func(*os.File) error {
		switch calls.Add(1) {
		case 1:
			<-release
			return nil
		case 2:
			return failed
		}
		return nil
	})
	first := make(chan error)
	go func() { first <- g.sync(nil) }()
	waitFor(t, func() bool { return calls.Load() == 1 })
	const waiting = 20
	errs := make(chan error, waiting)
	for range waiting {
		go func() { errs <- g.sync(nil) }()
	}
	waitFor(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.pending != nil && g.pending.waiting == waiting
	})
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first sync: %v", err)
	}
	for range waiting {
		if err := <-errs; !errors.Is(err, failed) {
			t.Fatalf("a caller of the failed sync got %v", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d syncs for 1 + %d callers, want 2", n, waiting)
	}
	if err := g.sync(nil); err != nil || calls.Load() != 3 {
		t.Fatalf("a later caller: %v after %d syncs, want its own good sync", err, calls.Load())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in a minute")
		}
		time.Sleep(time.Millisecond)
	}
}
