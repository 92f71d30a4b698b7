package lockcheck_test

import (
	"context"
	"io"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// rendezvous is a place whose archive streams wait, when opened, until a
// second one is open at the same time (or a minute has passed since it was
// made, after which none waits): it records whether archives were ever read
// concurrently.
type rendezvous struct {
	backends.Reader // not a LocalPather: every archive is opened
	mu              gosync.Mutex
	open, most      int
	met             chan struct{}
	once            gosync.Once
}

func newRendezvous(r backends.Reader) *rendezvous {
	z := &rendezvous{Reader: r, met: make(chan struct{})}
	time.AfterFunc(time.Minute, z.meet)
	return z
}

func (z *rendezvous) meet() { z.once.Do(func() { close(z.met) }) }

func (z *rendezvous) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	z.mu.Lock()
	z.open++
	if z.open > z.most {
		z.most = z.open
		if z.most == 2 {
			z.meet()
		}
	}
	z.mu.Unlock()
	<-z.met
	rc, err := z.Reader.Open(ctx, a)
	z.mu.Lock()
	z.open--
	z.mu.Unlock()
	return rc, err
}

// verify and lock hash many archives at once, as sync does (they used to
// hash one after another).
func TestVerifyAndLockHashConcurrently(t *testing.T) {
	ctx := chkCtx(t)
	_, m := chkMirror(t)

	z := newRendezvous(m)
	findings, err := sync.VerifyPlace(ctx, z, sync.Selection{}, hashing.Options{})
	if err != nil || len(findings) < 2 {
		t.Fatalf("verify: %v, %d findings", err, len(findings))
	}
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			t.Errorf("verify: %s %s: %s", f.Package, f.Status, f.Detail)
		}
	}
	if z.most < 2 {
		t.Errorf("verify read at most %d archive at a time", z.most)
	}

	z = newRendezvous(m)
	updates, problems, err := lockcheck.UpdateLock(ctx, z, lockfile.New(lockfile.HeaderTerraform),
		lockcheck.LockRequest{Selection: sync.Selection{Providers: filters(t, chkProviders...)}, Platforms: plats(t, chkPlatforms...)})
	if err != nil || len(problems) > 0 || len(updates) == 0 {
		t.Fatalf("lock: %v %+v %+v", err, problems, updates)
	}
	if z.most < 2 {
		t.Errorf("lock hashed at most %d archive at a time", z.most)
	}
}
