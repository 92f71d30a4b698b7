package engine_test

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// step is a task of the engine's own tests: it fails with fails[n] on its
// n-th attempt (while there is one), then succeeds.
type step struct {
	name  string
	fails []error
	tries *int
	group *group // its batch, when it is in one
}

func (s step) Info() engine.JobInfo { return engine.JobInfo{Name: s.name, Size: -1} }

func (s step) Attempt(ctx context.Context, env engine.Env) (engine.JobDone, error) {
	*s.tries++
	if *s.tries <= len(s.fails) {
		return engine.JobDone{}, s.fails[*s.tries-1]
	}
	env.Progress(1)
	return engine.JobDone{Bytes: 1}, nil
}

// batched is a step in the batch key.
type batched struct {
	step
	key string
	// made counts the batches made, by key.
	made map[string]int
}

type group struct {
	mu       gosync.Mutex
	finishes [][]string
	refuse   string // the job Finish says has not succeeded after all
}

func (b batched) Batch() any { return b.key }

func (b batched) NewBatch() engine.Batch { b.made[b.key]++; return &group{refuse: "b2"} }

func (b batched) Join(g engine.Batch) engine.Task { b.group = g.(*group); return b }

func (g *group) Finish(ctx context.Context, landed []engine.JobInfo) (engine.Event, map[engine.JobID]error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var names []string
	failed := map[engine.JobID]error{}
	for _, l := range landed {
		names = append(names, l.Name)
		if l.Name == g.refuse {
			failed[l.ID] = errors.New("not listed")
		}
	}
	g.finishes = append(g.finishes, names)
	return engine.Idle{}, failed
}

// The tasks of one batch share the state its first task made, across
// Enqueue calls; Finish runs once the last has ended, with every job that
// landed, and a job it names ends failed after its JobDone.
func TestBatchOwnsItsState(t *testing.T) {
	eng := engine.NewEngine(context.Background(), engine.Options{Jobs: 2})
	made := map[string]int{}
	mk := func(name string) engine.Task {
		return batched{step: step{name: name, tries: new(int)}, key: "k", made: made}
	}
	var ids []engine.JobID
	ids = append(ids, eng.Enqueue(mk("b1"), mk("b2"))...)
	ids = append(ids, eng.Enqueue(mk("b3"))...)
	eng.Close()
	tr := engine.NewTracker()
	for ev := range eng.Events() {
		tr.Apply(ev)
	}
	if made["k"] != 1 {
		t.Errorf("batches made: %d, want 1", made["k"])
	}
	got := map[string]engine.JobState{}
	for _, id := range ids {
		got[tr.Jobs[id].Info.Name] = tr.Jobs[id].State
	}
	if got["b1"] != engine.Done || got["b3"] != engine.Done || got["b2"] != engine.Failed {
		t.Errorf("states: %v", got)
	}
}

// refuser refuses every other task of its Enqueue call.
type refuser struct {
	step
	calls *int
}

func (r refuser) Admit(tasks []engine.Task) []engine.Task {
	*r.calls++
	out := append([]engine.Task(nil), tasks...)
	for i := 1; i < len(out); i += 2 {
		out[i] = step{name: fmt.Sprint("refused ", i), fails: []error{backends.Permanent(errors.New("refused"))}, tries: new(int)}
	}
	return out
}

// An Admitter admits the tasks of one Enqueue call, once per call.
func TestAdmitterAdmitsACall(t *testing.T) {
	calls := 0
	mk := func() engine.Task { return refuser{step: step{name: "r", tries: new(int)}, calls: &calls} }
	eng := engine.NewEngine(context.Background(), engine.Options{Jobs: 2})
	eng.Enqueue(mk(), mk(), mk(), mk())
	eng.Close()
	tr := engine.NewTracker()
	for ev := range eng.Events() {
		tr.Apply(ev)
	}
	if c := tr.Counts(); calls != 1 || c[engine.Done] != 2 || c[engine.Failed] != 2 {
		t.Errorf("Admit called %d times; states %v", calls, c)
	}
}

// Do returns how its one task ended, telling each retry as it comes.
func TestDo(t *testing.T) {
	opts := engine.Options{Attempts: 3, Backoff: time.Millisecond}
	var retries int
	s := step{name: "s", fails: []error{backends.Transient(errors.New("cut off"))}, tries: new(int)}
	res := engine.Do(context.Background(), opts, s, func(engine.JobRetrying) { retries++ })
	if res.Err != nil || res.Done == nil || res.Done.Bytes != 1 || retries != 1 || *s.tries != 2 {
		t.Fatalf("result %+v, retries %d, tries %d", res, retries, *s.tries)
	}
	p := step{name: "p", fails: []error{backends.Permanent(errors.New("no"))}, tries: new(int)}
	if res := engine.Do(context.Background(), opts, p, nil); res.Done != nil || res.Err == nil || *p.tries != 1 {
		t.Fatalf("a permanent failure: %+v after %d tries", res, *p.tries)
	}
}
