package fs

import (
	"os"
	gosync "sync"
)

// groupSyncMax is the largest staging file a group sync makes durable: a
// bigger one has had its writeback running while it downloaded
// (startWriteback) and its own fsync costs little more, while a shared
// sync would wait for every other file in flight.
const groupSyncMax = writebackEvery

// groupSync makes small files durable in groups, one filesystem-wide sync
// (syncfs) for the files of one filesystem that wait at the same time,
// instead of one fsync each: landing 10,000 tiny archives and their 2,000
// version documents took ~1,900 syncfs and ~500 fsyncs instead of 12,000
// fsyncs, in half the system time. A caller waits for a sync that starts after it asked, so its
// bytes, written before, are in it. It is used only where syncfs is known
// to make the data and inodes durable and to report write errors
// (groupFS); elsewhere files are fsynced one by one.
//
// A syncfs also writes every other dirty page of the filesystem, which may
// be another program's (or a download just made without fsync) and take far
// longer than the group's own fsyncs. So a batch is synced together only
// while the system holds little dirty data (quiet); otherwise each of its
// callers fsyncs its own files, at once and in parallel.
type groupSync struct {
	fd    func(*os.File) error // the sync: syncfs of the file's filesystem
	quiet func() bool          // whether a syncfs would write little else
	turn  chan struct{}        // held while a sync runs

	mu      gosync.Mutex
	pending *syncBatch // the callers waiting for the next sync
}

type syncBatch struct {
	done    chan struct{}
	err     error
	alone   bool // each caller fsyncs its own files
	waiting int  // callers in the batch
}

func newGroupSync(sync func(*os.File) error, quiet func() bool) *groupSync {
	return &groupSync{fd: sync, quiet: quiet, turn: make(chan struct{}, 1)}
}

// sync returns once the bytes written to files before the call are
// durable, or with the error of the sync that was to make them so. The
// files must be on the group's filesystem; a nil group fsyncs each.
func (g *groupSync) sync(files ...*os.File) error {
	if g == nil || len(files) == 0 {
		return fsyncEach(files)
	}
	b := g.join()
	select {
	case <-b.done:
	case g.turn <- struct{}{}:
		g.lead(b, files)
		<-g.turn
	}
	if b.alone {
		return fsyncEach(files)
	}
	return b.err
}

// join adds a caller to the batch the next sync is for.
func (g *groupSync) join() *syncBatch {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.pending
	if b == nil {
		b = &syncBatch{done: make(chan struct{})}
		g.pending = b
	}
	b.waiting++
	return b
}

// lead syncs b, whose caller with files it is, unless b is done. The
// caller holds the turn: a batch is taken only by its holder, who gives it
// back once the batch is done, so b is still pending or already done.
func (g *groupSync) lead(b *syncBatch, files []*os.File) {
	g.mu.Lock()
	lead := g.pending == b
	if lead {
		g.pending = nil
	}
	g.mu.Unlock()
	if !lead {
		return
	}
	switch {
	case b.waiting == 1 && len(files) == 1:
		// One file alone is fsynced, the turn held all the same: the
		// callers that come meanwhile make the next batch.
		b.err = fsyncEach(files)
	case g.quiet():
		b.err = g.fd(files[0])
	default:
		b.alone = true // much else to write: each fsyncs its own, at once
	}
	close(b.done)
}

func fsyncEach(files []*os.File) error {
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// dirFS is what groupFS found of a directory.
type dirFS struct {
	key   uint64
	group bool
}

// syncGroup returns the group sync for staging files of size bytes in dir,
// or nil where each is fsynced alone.
func (m *Mirror) syncGroup(dir string, size int64) *groupSync {
	if size > groupSyncMax {
		return nil
	}
	m.mu.Lock()
	fs, known := m.dirFS[dir]
	m.mu.Unlock()
	if !known {
		fs.key, fs.group = groupFS(dir)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirFS == nil {
		m.dirFS, m.groups = map[string]dirFS{}, map[uint64]*groupSync{}
	}
	m.dirFS[dir] = fs
	if !fs.group {
		return nil
	}
	g := m.groups[fs.key]
	if g == nil {
		g = newGroupSync(syncFS, fewDirtyPages)
		m.groups[fs.key] = g
	}
	return g
}

// syncFiles makes the written bytes of files, all in dir, durable: with
// one group sync where dir's filesystem allows, else an fsync each.
func (m *Mirror) syncFiles(dir string, files []*os.File) error {
	return m.syncGroup(dir, 0).sync(files...)
}
