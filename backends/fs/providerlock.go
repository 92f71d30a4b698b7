package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockedtemp"
)

// providerLockName is the lock file in each provider directory that every
// tfmirror writer holds (flock) while it lands an archive or rewrites the
// index documents, so no writer's rebuild misses what another landed. It
// is left in place: the lock dies with its holder, the file is harmless.
const providerLockName = ".tfmirror-lock"

// lockProvider waits for p's lock, or for ctx. The returned function
// releases it. p's directory must exist. This process's writers of p take
// turns on a channel first, so the flock is contended only by other
// processes: a blocked flock holds an OS thread, and eight workers
// landing one provider's archives at once used to hold eight. While
// writers of this process wait for the turn, the flock passes from one to
// the next, held: opening the lock file, locking it and closing it again
// for each of 10,000 tiny archives cost 8 % of the CPU of landing them.
func (m *Mirror) lockProvider(ctx context.Context, p backends.Provider) (func(), error) {
	pl := m.providerLock(p)
	pl.waiting.Add(1)
	select {
	case pl.turn <- struct{}{}:
		pl.waiting.Add(-1)
	case <-ctx.Done():
		pl.waiting.Add(-1)
		// The last holder may have kept the flock for this writer: take
		// the turn when it comes, and release it.
		go func() {
			pl.turn <- struct{}{}
			pl.release()
		}()
		return nil, ctx.Err()
	}
	if pl.held != nil {
		return pl.release, nil
	}
	lock := filepath.Join(m.providerDir(p), providerLockName)
	var f *os.File
	err := m.inDir(m.providerDir(p), func() error {
		if err := m.noLink(lock); err != nil {
			return err
		}
		var err error
		f, err = lockedtemp.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o644)
		return err
	})
	if err != nil {
		<-pl.turn
		return nil, err
	}
	if lockedtemp.Lock(f) == nil {
		pl.held = f
		return pl.release, nil
	}
	got := make(chan error, 1)
	go func() { got <- lockedtemp.Wait(f) }()
	locked := func(err error) error {
		if err != nil {
			_ = f.Close() // the lock file: nothing was written to it
			<-pl.turn
			return fmt.Errorf("lock %s: %w", m.rel(f.Name()), err)
		}
		pl.held = f
		return nil
	}
	select {
	case err := <-got:
		if err := locked(err); err != nil {
			return nil, err
		}
		return pl.release, nil
	case <-ctx.Done():
		go func() {
			if locked(<-got) == nil {
				pl.release()
			}
		}()
		return nil, ctx.Err()
	}
}

// providerLock is this process's side of a provider's lock.
type providerLock struct {
	turn    chan struct{} // held by the writer whose turn it is
	waiting atomic.Int32  // writers waiting for the turn
	held    *os.File      // the flocked lock file; only the turn's holder uses it
}

// release ends a writer's turn. The flock is kept for the next writer of
// this process if one waits; otherwise it is released.
func (pl *providerLock) release() {
	if pl.waiting.Load() == 0 && pl.held != nil {
		_ = pl.held.Close() // releases the flock; nothing was written to it
		pl.held = nil
	}
	<-pl.turn
}

// providerLock is this process's side of p's lock.
func (m *Mirror) providerLock(p backends.Provider) *providerLock {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = map[backends.Provider]*providerLock{}
	}
	pl, ok := m.locks[p]
	if !ok {
		pl = &providerLock{turn: make(chan struct{}, 1)}
		m.locks[p] = pl
	}
	return pl
}
