package oci

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

// Registries have no compare-and-swap on tags: a writer that read a
// version's index before another's push and pushes after it drops what the
// other added. Writers of one repository therefore take turns, by a lock
// over three more tags of the repository, read and written as registers
// (Lamport's fast mutual exclusion, 1987, with a timed slow path in the
// manner of Fischer's):
//
//	y  LockTag      the claim that holds, or last held, the lock
//	x  GateTag      the claim that last went through the gate
//	r  ReleasedTag  the claim that last released the lock
//
// A claim is a manifest no other write makes (a nonce), pushed for each
// attempt. The lock is free when y is absent, or names the claim r names
// (or the free manifest that writers before this scheme left).
//
//  1. A writer pushes its claim to x, then reads r and y (in that order:
//     a claim r named once stays released, so y naming it is free at the
//     read of y). Not free: it waits until it is, or until y names one
//     claim for longer than the lease the claim states (its writer was
//     killed: it takes over, step 4), and starts again.
//  2. It pushes its claim to y and reads x. When x still names its claim
//     and the push to y was answered within lockWait of sending the read
//     of y in step 1, it holds the lock: no waiting (the fast path).
//  3. Otherwise (the slow path) it waits lockWait after the push to y was
//     answered and reads y: naming its claim, it holds the lock; else it
//     starts again.
//  4. A writer taking over pushes its claim to y and goes on at step 3.
//
// Holding, it reads y before every push of an index (and delete) and stops
// when y names another claim; a push answered later than lockWait after
// that read is checked again. Done, it pushes its claim to r, if y still
// names it: it never writes y again, so a release cannot undo a claim.
//
// Why no update is lost. Registries answer a push after it landed and a
// read with what had landed when it was served. Only a holder pushes to r,
// after its last push was answered. Let P and Q both hold, P's claim
// landing on y before Q's. P pushes nothing after Q's claim landed (its
// reads of y see another claim; y never names P's claim again), and what
// it pushed before landed within lockWait of the read of y before it (a
// push answered later is checked again, and fails when Q claimed
// meanwhile): before lockWait after Q's claim was answered. So Q reads
// all of P's work if it held by the slow path, which reads lockWait after
// its claim was answered. Q did not hold by the fast path:
//
//   - If Q's read of y came after P's claim landed, y named a released
//     claim: P's own (P was done), or that of a holder whose claim landed
//     after P's, which by this argument (for that pair) held by the slow
//     path, read after P's work landed, and released after.
//   - If it came before, Q pushed to x before P's claim landed. Had P held
//     by the fast path, P pushed to x after Q (Q's push to x, before P's
//     claim landed, would otherwise have come between P's push to x and
//     P's read of it), so Q read P's claim, or a later one, in x. Had P held
//     by the slow path, it read y lockWait after its claim was answered;
//     Q's claim, answered within lockWait of Q's read of y, which came
//     before P's claim landed, had landed by then, so P did not hold.
//
// A claim taken over is on the slow path.
//
// One writer alone costs five requests (x, r, y, y, x) and one to release;
// writers that meet wait lockWait. The lease only decides when a claim is
// taken over; safety does not depend on it, so a writer that outlives its
// lease is stopped at its next check, not overrun.

// LockTag is the tag of a repository's writer lock (y above). Versions
// never parse from it, so OpenTofu and tfmirror's listings ignore it.
const LockTag = "tfmirror-lock"

// GateTag names the claim that last went through the lock's gate (x).
const GateTag = "tfmirror-lock-gate"

// ReleasedTag names the claim that last released the lock (r).
const ReleasedTag = "tfmirror-lock-released"

// lockTags are the three tags of one lock: y, x and r above. A
// repository's writer lock has LockTag, GateTag and ReleasedTag; a note
// has a lock of its own (note.go), so that writers of different notes
// do not take turns.
type lockTags struct{ y, x, r string }

var repoLockTags = lockTags{y: LockTag, x: GateTag, r: ReleasedTag}

// ArtifactTypeLock is the artifactType of the manifests the lock's tags
// name.
const ArtifactTypeLock = "application/vnd.tfmirror.lock.v1"

// Annotations of a lock manifest: who holds it (empty on the free
// manifest), a nonce that makes each claim a manifest of its own, and the
// lease after which another writer may take a claim over.
const (
	annotationLockHolder = "dev.tfmirror.lock.holder"
	annotationLockNonce  = "dev.tfmirror.lock.nonce"
	annotationLockLease  = "dev.tfmirror.lock.lease-ms"
)

// Lock timing. lockWait bounds how long after the check before it an
// index push lands; a claim on the slow path is read that long after it
// was pushed. The lease is how long a claim, unchanged, keeps others
// waiting: longer than a writer holds the lock, short enough that a killed
// writer does not stall the next one for long. A claim stating a longer
// lease than lockLease is taken over after lockLease: no writer claims
// more.
var (
	lockWait     = time.Second
	lockLease    = 15 * time.Second
	lockPoll     = 100 * time.Millisecond
	lockAttempts = 20 // claims pushed before a writer gives up
)

// pollLock waits lockPoll, ±50% (backends.RetryPolicy), before the lock is
// read again.
func pollLock(ctx context.Context) error {
	return backends.RetryPolicy{Base: lockPoll, Max: lockPoll, Jitter: 0.5}.Wait(ctx, 1)
}

// errLockLost: the lock tag names another writer's claim; what the holder
// was about to push was not pushed.
var errLockLost = errors.New("another writer took the repository's lock")

// repoLock is a held lock of one repository.
type repoLock struct {
	m     *Mirror
	r     *remote.Repository
	addr  Repository
	claim digest.Digest
	rel   *claim      // pushed to ReleasedTag on release
	local *sync.Mutex // the process's own turn at the repository
	tags  lockTags
}

// localLock returns the process's mutex for a repository: one process's
// flushes and removals of a repository take turns before they claim.
func (w *writeState) localLock(addr Repository, tag string) *sync.Mutex {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := localKey{addr, tag}
	l, ok := w.locks[key]
	if !ok {
		l = &sync.Mutex{}
		w.locks[key] = l
	}
	return l
}

// localKey is one lock of one repository, by its lock tag.
type localKey struct {
	addr Repository
	tag  string
}

// lock takes the repository's lock (see LockTag). label names what the
// writer writes, for messages.
func (m *Mirror) lock(ctx context.Context, r *remote.Repository, addr Repository, label string) (*repoLock, error) {
	return m.lockWith(ctx, r, addr, label, repoLockTags)
}

// lockWith takes the lock whose tags are tags.
func (m *Mirror) lockWith(ctx context.Context, r *remote.Repository, addr Repository, label string, tags lockTags) (*repoLock, error) {
	local := m.w.localLock(addr, tags.y)
	local.Lock()
	l, err := m.claimLock(ctx, r, addr, label, tags)
	if err != nil {
		local.Unlock()
		return nil, err
	}
	l.local = local
	return l, nil
}

func (m *Mirror) claimLock(ctx context.Context, r *remote.Repository, addr Repository, label string, tags lockTags) (*repoLock, error) {
	if err := m.ensureConfig(ctx, r, addr, label); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("%s pid %d", host, os.Getpid())
	for claims := 0; ; {
		nonce := make([]byte, 16)
		rand.Read(nonce)
		c := newClaim(m, r, addr, label, holder, hex.EncodeToString(nonce))
		c.tags = tags
		l, claimed, err := c.try(ctx)
		if claimed {
			claims++
		}
		switch {
		case l != nil:
			return l, nil
		case !errors.Is(err, errLockLost):
			return nil, err
		case claims >= lockAttempts:
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: other writers claimed the lock (tag %q) %d times as this process did: run again once they are done", m.name, addr, label, tags.y, claims)
		}
		// Another writer holds the lock, or won: the next attempt waits
		// until it is free.
	}
}

// try makes one attempt at the lock with c's claim (steps 1 to 4 above):
// the lock when it holds it; claimed when it pushed the claim to y;
// errLockLost when another writer holds the lock or won the attempt.
func (c *claim) try(ctx context.Context) (*repoLock, bool, error) {
	if err := c.write(ctx, c.tags.x); err != nil {
		return nil, false, err
	}
	sent := time.Now()
	free, y, err := c.m.lockFree(ctx, c.r, c.addr, c.label, c.tags)
	if err != nil {
		return nil, false, err
	}
	takeOver := false
	if !free {
		if takeOver, err = c.m.awaitFree(ctx, c.r, c.addr, c.label, c.tags, y); err != nil || !takeOver {
			return nil, false, orLost(err)
		}
	}
	if err := c.write(ctx, c.tags.y); err != nil {
		return nil, true, err
	}
	answered := time.Now()
	if !takeOver && answered.Sub(sent) <= lockWait {
		x, err := c.m.tagState(ctx, c.r, c.addr, c.label, c.tags.x)
		if err != nil {
			return nil, true, err
		}
		if x.Digest == c.desc.Digest {
			return c.held(), true, nil // the fast path
		}
	}
	if err := backends.Sleep(ctx, time.Until(answered.Add(lockWait))); err != nil {
		return nil, true, err
	}
	l := c.held()
	if _, err := l.check(ctx, c.label); err != nil {
		return nil, true, err
	}
	return l, true, nil
}

// orLost returns err, or errLockLost when err is nil.
func orLost(err error) error {
	if err != nil {
		return err
	}
	return errLockLost
}
