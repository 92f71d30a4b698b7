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
	}, func() bool { return true })
	files := twoFiles(t)
	const callers = 200
	var wg gosync.WaitGroup
	calls := make([]span, callers)
	for i := range callers {
		wg.Go(func() {
			calls[i].start = clock.Add(1)
			if err := g.sync(files...); err != nil {
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
	}, func() bool { return true })
	files := twoFiles(t)
	first := make(chan error)
	go func() { first <- g.sync(files...) }()
	waitFor(t, func() bool { return calls.Load() == 1 })
	const waiting = 20
	errs := make(chan error, waiting)
	for range waiting {
		go func() { errs <- g.sync(files...) }()
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
	if err := g.sync(files...); err != nil || calls.Load() != 3 {
		t.Fatalf("a later caller: %v after %d syncs, want its own good sync", err, calls.Load())
	}
}

// While the system holds much dirty data, a syncfs would write it all:
// each caller fsyncs its own files instead, and a caller of one file
// always does.
func TestGroupSyncFsyncsAloneWhenBusy(t *testing.T) {
	var calls atomic.Int32
	quiet := false
	g := newGroupSync(func(*os.File) error { calls.Add(1); return nil }, func() bool { return quiet })
	files := twoFiles(t)
	var wg gosync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := g.sync(files...); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	quiet = true
	if err := g.sync(files[0]); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d filesystem syncs, want none", n)
	}
	files[1].Close()
	if err := g.sync(files[1]); err == nil {
		t.Fatal("an fsync of a closed file reported no error")
	}
}

// twoFiles returns two files to sync, closed when the test ends.
func twoFiles(t *testing.T) []*os.File {
	var out []*os.File
	for range 2 {
		f, err := os.CreateTemp(t.TempDir(), "sync")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		out = append(out, f)
	}
	return out
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
