// Package killtest kills real processes with SIGKILL at random moments, for
// the tests that hold tfmirror to what a kill may leave behind: the moments
// are drawn from a seeded source (logged, and KILLTEST_SEED replays one),
// only kills that land while the process runs count, and a check runs after
// every attempt.
package killtest

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Kills is one kill test.
type Kills struct {
	// Start returns the command of attempt i, not started yet. Kills
	// starts it, and kills and waits for it whatever happens.
	Start func(t *testing.T, i int) *exec.Cmd
	// Ready, when set, runs once the process has started and before the
	// moment is drawn: it waits for the process to reach what the kills
	// are to interrupt (a staging file, half a download). k.Exited is
	// closed when the process ends on its own meanwhile.
	Ready func(t *testing.T, k *Kill)
	// Window is the span after Ready (or the start) the moment of each
	// kill is drawn from, uniformly: about how long a whole run takes.
	// An attempt whose process ended before its kill shrinks it to 3/4
	// (not below 5ms), so the moments keep falling inside runs on a
	// machine that got faster. Zero kills at once.
	Window time.Duration
	// N is how many kills must land while the process runs; the test
	// fails with fewer.
	N int
	// MaxAttempts bounds the attempts (4*N when zero).
	MaxAttempts int
	// More, when set, keeps the attempts going after N kills landed while
	// it returns true (a kill of a particular stage has not landed yet).
	More func() bool
	// Seed seeds the source of the moments; zero takes one from the
	// clock. Either way it is logged, and KILLTEST_SEED overrides it.
	Seed uint64
	// Check runs after every attempt, killed or not: what the kill may
	// leave behind, and usually a re-run that must complete.
	Check func(t *testing.T, k Kill)
}

// Kill is one attempt.
type Kill struct {
	I     int           // the attempt, from 0
	Delay time.Duration // how long after Ready (or the start) the kill was sent
	// Landed: SIGKILL ended the process, which was running; false when it
	// had ended on its own before.
	Landed bool
	Cmd    *exec.Cmd
	Err    error // what Wait returned
	// Exited is closed once the process has ended.
	Exited <-chan struct{}
}

// Run makes the attempts and returns how many kills landed, out of how
// many attempts.
func (ks Kills) Run(t *testing.T) (landed, attempts int) {
	t.Helper()
	seed := ks.Seed
	if s := os.Getenv("KILLTEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KILLTEST_SEED=%q: %v", s, err)
		}
		seed = v
	} else if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	if ks.Window > 0 {
		t.Logf("kill moments seeded with %d (KILLTEST_SEED=%d replays them)", seed, seed)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	maxAttempts := ks.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = 4 * ks.N
	}
	window := ks.Window
	for i := 0; (landed < ks.N || ks.More != nil && ks.More()) && attempts < maxAttempts; i++ {
		attempts++
		k := ks.attempt(t, i, window, rng)
		if k.Landed {
			landed++
		} else if window > 0 {
			window = max(window*3/4, 5*time.Millisecond)
		}
		if ks.Check != nil {
			ks.Check(t, k)
		}
		if t.Failed() {
			t.Logf("attempt %d: killed after %s (landed %v); KILLTEST_SEED=%d replays the moments", k.I, k.Delay, k.Landed, seed)
			t.FailNow()
		}
	}
	t.Logf("%d of %d attempts killed the process while it ran", landed, attempts)
	if landed < ks.N {
		t.Errorf("only %d of %d attempts killed the process while it ran, want %d (KILLTEST_SEED=%d)", landed, attempts, ks.N, seed)
	}
	return landed, attempts
}

// attempt starts one process, kills it at a moment drawn within window and
// waits for it.
func (ks Kills) attempt(t *testing.T, i int, window time.Duration, rng *rand.Rand) Kill {
	t.Helper()
	cmd := ks.Start(t, i)
	if err := cmd.Start(); err != nil {
		t.Fatalf("attempt %d: start %s: %v", i, cmd.Path, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	k := Kill{I: i, Cmd: cmd, Exited: exited}
	defer func() { // a Ready or a moment that fails the test leaves no process behind
		_ = cmd.Process.Signal(syscall.SIGKILL) // fails only once it has exited
		<-exited
	}()
	if ks.Ready != nil {
		ks.Ready(t, &k)
	}
	if window > 0 {
		k.Delay = time.Duration(rng.Int64N(int64(window)))
	}
	select {
	case <-exited:
	case <-time.After(k.Delay):
	}
	_ = cmd.Process.Signal(syscall.SIGKILL) // fails only once it has exited
	<-exited
	k.Err = waitErr
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		k.Landed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
	}
	return k
}
