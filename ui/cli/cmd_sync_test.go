package cli

import (
	"os"
	"runtime"
	"testing"
)

// A sync doubles the processors the runtime uses once per process: a
// second sync in the same process leaves them as they are.
func TestOverlapSyscallsDoublesOnce(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: a sync leaves it as it is")
	}
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	overlapSyscalls()
	overlapSyscalls()
	if got := runtime.GOMAXPROCS(0); got != 2*before {
		t.Fatalf("GOMAXPROCS %d after two syncs, want %d (twice %d)", got, 2*before, before)
	}
}
