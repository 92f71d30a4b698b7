package sync

import (
	"context"
	"runtime"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Parallel calls fn(i) for every i in [0, n) on at most workers goroutines,
// and returns once every call has returned. Calls not yet started when ctx
// is cancelled are not made. Callers keep results by index, so the order
// of the output does not depend on the order of the work.
func Parallel(ctx context.Context, workers, n int, fn func(i int)) {
	workers = max(1, min(workers, n))
	next := make(chan int)
	var wg gosync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
}

// HashWorkers is how many archives of r to hash at once: one per core
// where they are local files (hashing is the work), more where each waits
// on the network too.
func HashWorkers(r backends.Reader) int {
	if _, local := r.(backends.LocalPather); local {
		return runtime.NumCPU()
	}
	return engine.DefaultJobs()
}

// ordered calls work(i) for every i in [0, n) on at most workers
// goroutines, and done(i, result) on the calling goroutine in order of i,
// each as soon as its result and those before it are in. At most window
// results are made ahead of the one done waits for, so a run over many
// providers holds a few of their results at a time, not all of them. Once
// done returns an error it is not called again, but the work started goes
// on to the end, as Parallel's would (what it warns of is the place's).
// Work not yet started when ctx is cancelled is not started. ordered
// returns done's first error, else ctx's, once every call has returned.
func ordered[T any](ctx context.Context, workers, window, n int, work func(i int) T, done func(i int, r T) error) error {
	workers = max(1, min(workers, n))
	results := make([]chan T, n)
	for i := range results {
		results[i] = make(chan T, 1)
	}
	// A slot is taken, in order of i, before work(i) is handed out, and
	// given back once done has had its result: taken in any other order,
	// the window could fill with later results while the one done waits
	// for waits for a slot.
	slots := make(chan struct{}, max(min(window, n), workers))
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case slots <- struct{}{}:
				next <- i
				continue
			case <-ctx.Done():
			}
			for _, r := range results[i:] {
				close(r) // never made
			}
			return
		}
	}()
	for range workers {
		go func() {
			for i := range next {
				results[i] <- work(i)
			}
		}()
	}
	var first error
	for i := range n {
		r, ok := <-results[i]
		if !ok {
			break
		}
		if first == nil {
			first = done(i, r)
		}
		<-slots
	}
	if first == nil {
		first = ctx.Err()
	}
	return first
}
