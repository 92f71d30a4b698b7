package fs

import (
	"context"

	"github.com/tfmirror/tfmirror/backends"
)

// SetAfterStep makes m call f after each write of a Remove.
func SetAfterStep(m *Mirror, f func(what string)) { m.afterStep = f }

// NameStagingFiles makes m stage every archive under a name, as it does
// where unnamed files (O_TMPFILE) are not supported.
func NameStagingFiles(m *Mirror) { m.named.Store(true) }

// LockProvider takes p's lock in m as a commit does.
func LockProvider(ctx context.Context, m *Mirror, p backends.Provider) (func(), error) {
	return m.lockProvider(ctx, p)
}

// LockWaiters is how many of m's writers wait for p's turn.
func LockWaiters(m *Mirror, p backends.Provider) int32 { return m.providerLock(p).waiting.Load() }
