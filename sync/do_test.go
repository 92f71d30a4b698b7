package sync_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// Do runs one transfer to its end and returns how it ended: what landed,
// its batch's index written, and each retry told as it came.
func TestDoReturnsTheResult(t *testing.T) {
	w := newWorld(t)
	a := oneArchive(t, w)
	src := &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		if n == 1 {
			return &failAfter{rc: rc, left: 100, err: io.ErrUnexpectedEOF}
		}
		return rc
	}}
	var retries []engine.JobRetrying
	res := engine.Do(context.Background(), engine.Options{Backoff: time.Millisecond}, sync.Transfer{Src: src, Dst: w.dst, Archive: a},
		func(r engine.JobRetrying) { retries = append(retries, r) })
	if res.Err != nil || res.Done == nil || res.Done.Sums.ZH == "" || !res.Done.Verified {
		t.Fatalf("result: %+v", res)
	}
	if iw, ok := res.Finished.(engine.IndexWritten); !ok || iw.Err != nil || iw.Provider != a.Provider {
		t.Errorf("finished: %#v", res.Finished)
	}
	if len(retries) != 1 || src.opens != 2 {
		t.Errorf("retries told: %d, opens: %d", len(retries), src.opens)
	}
	assertClean(t, w.dst)

	w = newWorld(t)
	src = &faultySource{Reader: w.src, stream: func(rc io.ReadCloser, n int) io.ReadCloser {
		return &failAfter{rc: rc, left: 100, err: io.ErrUnexpectedEOF}
	}}
	res = engine.Do(context.Background(), engine.Options{Attempts: 2, Backoff: time.Millisecond}, sync.Transfer{Src: src, Dst: w.dst, Archive: a}, nil)
	if res.Done != nil || res.Err == nil || !strings.Contains(res.Err.Error(), "unexpected EOF") || res.Finished != nil {
		t.Fatalf("result of a failing transfer: %+v", res)
	}
	assertNoTempFiles(t, w.dstDir)
}
