package pull

import (
	"context"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// Two processes on one bucket (two Mirrors here, each with its own
// holder): one takes a zip's fetch lease, the other finds it held and
// waits; when the holder stops renewing it (killed), the waiter's wait
// ends once the lease expired and it takes the lease over. A release that
// says the zip landed ends a wait with true.
func TestFleetLeaseTakenOverWhenItsHolderStops(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := s3.Open(ctx, "s3://"+bucket+"/cache", bucket+"/cache", srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer func(old time.Duration) { leaseTTL = old }(leaseTTL)
	leaseTTL = 500 * time.Millisecond
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	a, b := New(Options{Cache: st}), New(Options{Cache: st})
	defer a.Close()
	defer b.Close()
	if held, err := a.takeLease(ctx, st, pkg); !held || err != nil {
		t.Fatalf("the first process's lease: %v %v", held, err)
	}
	if held, err := b.takeLease(ctx, st, pkg); held || err != nil {
		t.Fatalf("the second process took a lease held by the first: %v %v", held, err)
	}
	start := time.Now()
	landed, err := b.awaitLease(ctx, st, pkg)
	if err != nil || landed {
		t.Fatalf("the wait for a lease its holder stopped renewing: landed %v, %v", landed, err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("the wait ended after %s, before the lease (%s) expired", waited, leaseTTL)
	}
	if held, err := b.takeLease(ctx, st, pkg); !held || err != nil {
		t.Fatalf("the second process did not take the expired lease over: %v %v", held, err)
	}
	if held, _ := a.takeLease(ctx, st, pkg); held {
		t.Fatal("the first process took the lease back while the second held it")
	}
	// The second process releases it, the zip landed: a waiter is told so.
	b.mu.Lock()
	b.landed[pkg.Key()] = true
	b.mu.Unlock()
	b.keepLease(st, pkg) // no fetch runs: it releases at once
	landed, err = a.awaitLease(ctx, st, pkg)
	if err != nil || !landed {
		t.Errorf("the wait for a lease released with the zip landed: landed %v, %v", landed, err)
	}
}
