package sync_test

import (
	"context"
	"io"
	"runtime"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// An archive a registry uploads from the source's own file, where nothing
// states its zh:, is read only to hash it, CPU work: no more archives are
// read at once than there are cores, however many jobs run, so the first
// uploads start while the next archives are hashed instead of all waiting
// for all.
func TestFilesUploadedAsTheyAreAreHashedOnePerCore(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir() // the same zips, without index documents
	backendtest.WritePacked(t, dir, w.seeds)
	bare, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := &overlapReads{Mirror: bare}
	syncToRegistry(t, src)
	if src.max > runtime.NumCPU() || src.reads != 18 {
		t.Errorf("%d archives read, %d at once, want 18, at most one per core (%d)", src.reads, src.max, runtime.NumCPU())
	}
}

// Where the source states the zh: (a mirror's index documents), that is
// the layer's digest: the registry checks it as the blob arrives, so no
// archive is read before its upload.
func TestStatedZipHashesAreNotReadBeforeTheUpload(t *testing.T) {
	w := newWorld(t)
	src := &overlapReads{Mirror: w.src}
	tr := syncToRegistry(t, src)
	if src.reads != 0 {
		t.Errorf("%d archives read before their upload, want none", src.reads)
	}
	for _, j := range tr.Jobs {
		if !j.Verified || j.Sums.ZH == "" || j.Sums.H1 != "" || j.Bytes != j.Info.Size {
			t.Errorf("%s: verified %v, sums %+v, %d bytes of %d", j.Info.Package, j.Verified, j.Sums, j.Bytes, j.Info.Size)
		}
	}
}

// syncToRegistry syncs every archive of src into a fresh registry, 12 at
// once, and wants all 18 done.
func syncToRegistry(t *testing.T, src backends.Reader) *engine.Tracker {
	t.Helper()
	reg := ocitest.New(t)
	ctx := context.Background()
	r, err := place.Open(ctx, "oci://"+reg.Host()+"/slots/${hostname}/${namespace}/${type}", place.Options{CACertFile: reg.CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	_, tr := syncAll(t, ctx, src, r.(backends.Writer), mustSelection(t, []string{"example.com/acme/alpha", "example.com/acme/beta"}, ""), engine.Options{Jobs: 12})
	if c := tr.Counts(); c[engine.Done] != 18 {
		t.Fatalf("counts %v, want 18 done", c)
	}
	return tr
}

// overlapReads is a filesystem mirror whose archives take a moment to read,
// counting how many are being read at once.
type overlapReads struct {
	*fs.Mirror
	mu                 gosync.Mutex
	active, max, reads int
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
		r.s.reads++
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
