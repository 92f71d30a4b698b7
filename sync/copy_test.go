package sync_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// writeSizes is a filesystem mirror whose staging files record the size
// of every write they take.
type writeSizes struct {
	*fs.Mirror
	mu    gosync.Mutex
	sizes []int
}

func (w *writeSizes) Stage(ctx context.Context, pkg backends.Package) (backends.Staged, error) {
	st, err := w.Mirror.Stage(ctx, pkg)
	if err != nil {
		return nil, err
	}
	return recordingStaged{st, w}, nil
}

type recordingStaged struct {
	backends.Staged
	w *writeSizes
}

func (s recordingStaged) Write(p []byte) (int, error) {
	s.w.mu.Lock()
	s.w.sizes = append(s.w.sizes, len(p))
	s.w.mu.Unlock()
	return s.Staged.Write(p)
}

// An archive streamed from a registry (TLS records of at most 16 KiB)
// reaches the staging file in writes of 32 KiB, two records gathered in
// each: no more, so the bytes are still in the core's cache when the
// kernel copies them into the page cache (1 MiB writes cost three times
// the CPU), and no fewer, so a large archive does not cost a syscall per
// record. The archive lands whole.
func TestTransferWritesInCacheSizedPieces(t *testing.T) {
	body := make([]byte, 3<<20)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(body) // incompressible: the zip is as large as its contents
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-alpha_v1.0.0", Body: body})
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha",
		Versions: []registrytest.Version{{Version: "1.0.0", Archives: map[string][]byte{"linux_amd64": z}}}})
	src, err := place.Open(context.Background(), "registry://"+reg.Host(), place.Options{HTTPClient: reg.Client()})
	if err != nil {
		t.Fatal(err)
	}
	dstDir := filepath.Join(t.TempDir(), "m")
	m, err := fs.Open(dstDir, dstDir, fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	dst := &writeSizes{Mirror: m}
	for _, ev := range syncEvents(t, src, dst, mustSelection(t, []string{"acme/alpha"}, "1.0.0"), engine.Options{}) {
		if f, ok := ev.(engine.JobFailed); ok {
			t.Fatal(f.Err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dstDir, reg.Host(), "acme", "alpha", pkg.Filename()))
	if err != nil || !bytes.Equal(got, z) {
		t.Fatalf("the archive did not land whole (%d of %d bytes, %v)", len(got), len(z), err)
	}
	total := 0
	for i, n := range dst.sizes {
		total += n
		if n > 32<<10 || n < 32<<10 && i < len(dst.sizes)-1 {
			t.Fatalf("write %d of %d has %d bytes; want 32 KiB each (the last may be less)", i+1, len(dst.sizes), n)
		}
	}
	if total != len(z) {
		t.Fatalf("%d bytes written, want %d", total, len(z))
	}
}
