package readers_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tfmirror/tfmirror/backends/readers"
)

// TestWithContextStopsOnceDone: reads pass through until the context is
// done, then fail with its error.
func TestWithContextStopsOnceDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := readers.WithContext(ctx, strings.NewReader("abcdef"))
	buf := make([]byte, 3)
	if n, err := r.Read(buf); n != 3 || err != nil {
		t.Fatalf("read before cancel: %d, %v", n, err)
	}
	cancel()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %d, %v; want 0, context.Canceled", n, err)
	}
}

// TestOnReadReportsEveryByte: the sizes reported add up to what was read,
// one call per read that returned bytes, none for an empty one.
func TestOnReadReportsEveryByte(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 10_000)
	var total, calls int64
	r := readers.OnRead(iotest.OneByteReader(bytes.NewReader(data)), func(n int64) { total += n; calls++ })
	got, err := io.ReadAll(r)
	if err != nil || len(got) != len(data) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if total != int64(len(data)) || calls != int64(len(data)) {
		t.Errorf("reported %d bytes in %d calls, want %d in %d", total, calls, len(data), len(data))
	}
}
