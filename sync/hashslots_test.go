package sync_test

import (
	"context"
	"io"
	"runtime"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
)

// An archive a registry uploads from the source's own file is read only to
// hash it, CPU work: no more archives are read at once than there are
// cores, however many jobs run, so the first uploads start while the next
// archives are hashed instead of all waiting for all.
func TestFilesUploadedAsTheyAreAreHashedOnePerCore(t *testing.T) {
	w := newWorld(t)
	reg := ocitest.New(t)
	ctx := context.Background()
	r, err := place.Open(ctx, "oci://"+reg.Host()+"/slots/${hostname}/${namespace}/${type}", place.Options{CACertFile: reg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	src := &overlapReads{Mirror: w.src}
	_, tr := syncAll(t, ctx, src, r.(backends.Writer), mustSelection(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, ""), sync.Options{Jobs: 12})
	if c := tr.Counts(); c[sync.Done] != 18 {
		t.Fatalf("counts %v, want 18 done", c)
	}
	if src.max > runtime.NumCPU() {
		t.Errorf("%d archives read at once, want at most one per core (%d)", src.max, runtime.NumCPU())
	}
}

// overlapReads is a filesystem mirror whose archives take a moment to read,
// counting how many are being read at once.
type overlapReads struct {
	*fs.Mirror
	mu          gosync.Mutex
	active, max int
}

func (s *overlapReads) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	rc, err := s.Mirror.Open(ctx, a)
	if err != nil {
		return nil, err
	}
	return &overlapReader{rc: rc, s: s}, nil
}

type overlapReader struct {
	rc            io.ReadCloser
	s             *overlapReads
	started, done bool
}

func (r *overlapReader) Read(p []byte) (int, error) {
	if !r.started {
		r.started = true
		r.s.mu.Lock()
		r.s.active++
		r.s.max = max(r.s.max, r.s.active)
		r.s.mu.Unlock()
	}
	time.Sleep(2 * time.Millisecond) // reading takes a while, so reads overlap where they may
	n, err := r.rc.Read(p)
	if err != nil {
		r.end()
	}
	return n, err
}

func (r *overlapReader) end() {
	if r.started && !r.done {
		r.done = true
		r.s.mu.Lock()
		r.s.active--
		r.s.mu.Unlock()
	}
}

func (r *overlapReader) Close() error {
	r.end()
	return r.rc.Close()
}
