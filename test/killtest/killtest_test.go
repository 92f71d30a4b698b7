package killtest_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/test/killtest"
)

// TestMain makes this test binary the process the tests kill when
// KILLTEST_CHILD says how long it is to run.
func TestMain(m *testing.M) {
	if d, err := time.ParseDuration(os.Getenv("KILLTEST_CHILD")); err == nil {
		time.Sleep(d)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(t *testing.T, run time.Duration) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KILLTEST_CHILD="+run.String())
	return cmd
}

// Kills of a process that runs longer than the window all land, and each
// attempt's check sees it killed; a process that ends before its kill is
// not counted as killed, and the moments are the seed's.
func TestKills(t *testing.T) {
	var delays []time.Duration
	landed, attempts := killtest.Kills{
		Start:  func(t *testing.T, i int) *exec.Cmd { return child(t, time.Minute) },
		Window: 50 * time.Millisecond,
		N:      5,
		Seed:   42,
		Check: func(t *testing.T, k killtest.Kill) {
			if !k.Landed || k.Err == nil {
				t.Errorf("attempt %d: a process running a minute was not killed: %v", k.I, k.Err)
			}
			delays = append(delays, k.Delay)
		},
	}.Run(t)
	if landed != 5 || attempts != 5 {
		t.Fatalf("landed %d of %d attempts, want 5 of 5", landed, attempts)
	}
	var again []time.Duration
	killtest.Kills{
		Start:  func(t *testing.T, i int) *exec.Cmd { return child(t, time.Minute) },
		Window: 50 * time.Millisecond, N: 5, Seed: 42,
		Check: func(t *testing.T, k killtest.Kill) { again = append(again, k.Delay) },
	}.Run(t)
	for i := range delays {
		if delays[i] != again[i] {
			t.Fatalf("the same seed drew %v, then %v", delays, again)
		}
	}

	n := 0
	killtest.Kills{
		Start: func(t *testing.T, i int) *exec.Cmd { return child(t, 0) },
		Ready: func(t *testing.T, k *killtest.Kill) { <-k.Exited },
		More:  func() bool { return n < 3 }, MaxAttempts: 10,
		Check: func(t *testing.T, k killtest.Kill) {
			n++
			if k.Landed || k.Err != nil {
				t.Errorf("attempt %d: a process that ended on its own counted as killed (%v)", k.I, k.Err)
			}
		},
	}.Run(t)
	if n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}
