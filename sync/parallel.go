package sync

import (
	"context"
	"runtime"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends"
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
	return DefaultJobs()
}
