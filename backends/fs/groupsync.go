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
// instead of one fsync each: a thousand tiny archives cost a few dozen
// syncs. A caller waits for a sync that starts after it asked, so its
// bytes, written before, are in it. It is used only where syncfs is known
// to make the data and inodes durable and to report write errors
// (groupFS); elsewhere files are fsynced one by one.
type groupSync struct {
	fd   func(*os.File) error // the sync: syncfs of the file's filesystem
	turn chan struct{}        // held while a sync runs

	mu      gosync.Mutex
	pending *syncBatch // the callers waiting for the next sync
}

type syncBatch struct {
	done    chan struct{}
	err     error
	waiting int // callers in the batch
}

func newGroupSync(sync func(*os.File) error) *groupSync {
	return &groupSync{fd: sync, turn: make(chan struct{}, 1)}
}

// sync returns once the bytes written to f before the call are durable, or
// the error of the sync that was to make them so. f must be on the group's
// filesystem; a nil group fsyncs f alone.
func (g *groupSync) sync(f *os.File) error {
	if g == nil {
		return f.Sync()
	}
	g.mu.Lock()
	b := g.pending
	if b == nil {
		b = &syncBatch{done: make(chan struct{})}
		g.pending = b
	}
	b.waiting++
	g.mu.Unlock()
	select {
	case <-b.done:
		return b.err
	case g.turn <- struct{}{}:
	}
	defer func() { <-g.turn }()
	// A batch is taken only by the holder of the turn, which gives it back
	// once the batch is done: b is still pending, or done.
	g.mu.Lock()
	lead := g.pending == b
	if lead {
		g.pending = nil
	}
	g.mu.Unlock()
	if lead {
		b.err = g.fd(f)
		close(b.done)
	}
	return b.err
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
		g = newGroupSync(syncFS)
		m.groups[fs.key] = g
	}
	return g
}

// syncFiles makes the written bytes of files, all in dir, durable: one
// group sync where dir's filesystem allows, else an fsync each.
func (m *Mirror) syncFiles(dir string, files []*os.File) error {
	if len(files) == 0 {
		return nil
	}
	if g := m.syncGroup(dir, 0); g != nil {
		return g.sync(files[0])
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}
