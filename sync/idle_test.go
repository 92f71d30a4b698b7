package sync_test

import (
	"context"
	"reflect"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// holder is a Sink that holds what it is shown until Idle, as the JSON
// reporter holds its lines.
type holder struct {
	mu            gosync.Mutex
	held, written []engine.Event
	idles         int
}

func (h *holder) Show(ev engine.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = append(h.held, ev)
}

func (h *holder) Idle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.written = append(h.written, h.held...)
	h.held = nil
	h.idles++
}

// A run tells a sink that holds what it shows when no event is ready and
// when it ends, through Sinks too: nothing shown is left held, and what
// is written comes in the order shown.
func TestRunLeavesNothingHeld(t *testing.T) {
	w := newWorld(t)
	h, _, sum := syncHeld(t, w)
	if !sum.OK() || len(h.written) < len(w.seeds) {
		t.Fatalf("%d events for %d archives: %+v", len(h.written), len(w.seeds), sum)
	}
	// Again, with nothing to do: the events are the plan's, shown before
	// the jobs.
	if h, _, sum = syncHeld(t, w); !sum.OK() || len(h.written) != len(w.seeds) {
		t.Fatalf("%d events for %d present archives: %+v", len(h.written), len(w.seeds), sum)
	}
}

// syncHeld plans and syncs w's source into its destination, showing the
// events to a holder and a recorder, and checks the holder wrote them all
// in order.
func syncHeld(t *testing.T, w *world) (*holder, *recorder, sync.Summary) {
	t.Helper()
	ctx := context.Background()
	plan, err := sync.MakePlan(ctx, w.src, w.dst, sync.Selection{}, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, other := &holder{}, &recorder{}
	sum := sync.Sync(ctx, engine.NewEngine(ctx, engine.Options{Jobs: 2}), w.dst, false, sync.Sinks{other, h}, plan)
	if len(h.held) != 0 {
		t.Fatalf("%d events still held after the run: %v", len(h.held), h.held)
	}
	if len(h.written) != len(other.evs) || h.idles == 0 {
		t.Fatalf("%d events written through %d idles; the run showed %d", len(h.written), h.idles, len(other.evs))
	}
	for i := range h.written {
		if !reflect.DeepEqual(h.written[i], other.evs[i]) {
			t.Fatalf("event %d written as %v, shown as %v", i, h.written[i], other.evs[i])
		}
	}
	return h, other, sum
}
