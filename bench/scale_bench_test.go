package bench

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/sync"
)

// BenchmarkNoopPlan plans a sync between two filesystem mirrors that hold
// the same archives ($SCALE_SRC and $SCALE_DST, e.g. bench/report.sh's
// 100,000-archive mirror and its copy): the no-op re-sync, in process, to
// profile it (go test -cpuprofile / -memprofile). It reports the heap the
// plan keeps per archive.
func BenchmarkNoopPlan(b *testing.B) {
	src, dst := os.Getenv("SCALE_SRC"), os.Getenv("SCALE_DST")
	if src == "" || dst == "" {
		b.Skip("set SCALE_SRC and SCALE_DST to two mirrors holding the same archives")
	}
	ctx := context.Background()
	for b.Loop() {
		s, err := fs.Open(src, src, fs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d, err := fs.Open(dst, dst, fs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		plan, err := sync.MakePlan(ctx, s, d, sync.Selection{}, sync.PlanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		n := len(plan.Items)
		if n == 0 || plan.Count(sync.StatusPresent) != n {
			b.Fatalf("%d items, %d present: the mirrors differ", n, plan.Count(sync.StatusPresent))
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B/archive")
		if path := os.Getenv("SCALE_HEAPPROFILE"); path != "" {
			// What the plan holds, while it holds it.
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			pprof.WriteHeapProfile(f)
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
		runtime.KeepAlive(plan)
	}
}
