package oci

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

// Registries have no compare-and-swap on tags: a writer that read a
// version's index before another's push and pushes after it drops what the
// other added. Writers of one repository therefore take turns, by a lock
// over one more tag of the repository, LockTag, which needs nothing but
// tags that are read and written (Fischer's timed mutual exclusion):
//
//   - a writer waits until the tag is free (absent, or naming the free
//     manifest), or names the same claim for longer than the lease the
//     claim states (its writer was killed);
//   - it pushes a claim of its own (a manifest no other write makes), waits
//     lockWait after the registry answered, and reads the tag: holding its
//     claim, it holds the lock;
//   - before every push of an index (and delete) it reads the tag again, and
//     stops when the tag names another claim.
//
// Whatever the order of claims, two holders never lose each other's
// updates, provided each push lands within lockWait of the read before it:
// of two claims, the one that landed later is read by its writer lockWait
// after it landed, so every push the other writer had started by then
// (its reads saw its own claim, so before the later claim landed) has
// landed, and is in what the later holder reads; the earlier writer's next
// check sees the later claim and stops. A push that takes longer is checked
// afterwards: if the tag still names the claim, no writer claimed
// meanwhile; otherwise the writer fails, saying that another writer's
// platforms may have been dropped. The lease only decides when a claim is
// taken over; safety does not depend on it, so a writer that outlives its
// lease is stopped at its next check, not overrun.

// LockTag is the tag of a repository's writer lock. Versions never parse
// from it, so OpenTofu and tfmirror's listings ignore it.
const LockTag = "tfmirror-lock"

// ArtifactTypeLock is the artifactType of the manifests LockTag names.
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
// index push lands; a claim is read that long after it was pushed. The
// lease is how long a claim, unchanged, keeps others waiting: longer than
// a writer holds the lock, short enough that a killed writer does not stall
// the next one for long. A claim stating a longer lease than maxLease is
// taken over after maxLease.
var (
	lockWait     = time.Second
	lockLease    = 15 * time.Second
	maxLease     = 10 * time.Minute
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
	local *sync.Mutex // the process's own turn at the repository
}

// lockManifest is a lock manifest: the free one when holder is "".
func lockManifest(holder, nonce string, lease time.Duration) (ocispec.Descriptor, []byte) {
	a := map[string]string{annotationLockHolder: holder}
	if holder != "" {
		a[annotationLockNonce] = nonce
		a[annotationLockLease] = strconv.FormatInt(lease.Milliseconds(), 10)
	}
	man := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeLock,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers:       []ocispec.Descriptor{ocispec.DescriptorEmptyJSON},
		Annotations:  a,
	}
	b, _ := json.Marshal(man)
	return content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b), b
}

// freeLock is the manifest LockTag names when no writer holds the lock.
var freeLock, freeLockBytes = lockManifest("", "", 0)

// localLock returns the process's mutex for a repository: one process's
// flushes and removals of a repository take turns before they claim.
func (w *writeState) localLock(addr Repository) *sync.Mutex {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.locks[addr]
	if !ok {
		l = &sync.Mutex{}
		w.locks[addr] = l
	}
	return l
}

// lock takes the repository's lock (see LockTag). label names what the
// writer writes, for messages.
func (m *Mirror) lock(ctx context.Context, r *remote.Repository, addr Repository, label string) (*repoLock, error) {
	local := m.w.localLock(addr)
	local.Lock()
	l, err := m.claimLock(ctx, r, addr, label)
	if err != nil {
		local.Unlock()
		return nil, err
	}
	l.local = local
	return l, nil
}

func (m *Mirror) claimLock(ctx context.Context, r *remote.Repository, addr Repository, label string) (*repoLock, error) {
	if err := m.ensureConfig(ctx, r, addr, label); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("%s pid %d", host, os.Getpid())
	for attempt := 1; ; attempt++ {
		if err := m.awaitFree(ctx, r, addr, label); err != nil {
			return nil, err
		}
		nonce := make([]byte, 16)
		rand.Read(nonce)
		desc, b := lockManifest(holder, hex.EncodeToString(nonce), lockLease)
		if err := retryRace(ctx, func() error { return r.PushReference(ctx, desc, bytes.NewReader(b), LockTag) }); err != nil {
			return nil, classify(err, fmt.Sprintf("push the lock's claim as tag %q", LockTag), m.name, addr, label)
		}
		if err := backends.Sleep(ctx, lockWait); err != nil {
			return nil, err
		}
		l := &repoLock{m: m, r: r, addr: addr, claim: desc.Digest}
		_, err := l.check(ctx, label)
		switch {
		case err == nil:
			return l, nil
		case !errors.Is(err, errLockLost):
			return nil, err
		case attempt == lockAttempts:
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: other writers claimed the lock (tag %q) %d times as this process did: run again once they are done", m.name, addr, label, LockTag, attempt)
		}
		if err := pollLock(ctx); err != nil {
			return nil, err
		}
	}
}

// lockTagState reads LockTag: what it names, no digest when the tag is
// absent. A
// link that distribution 2.8 is rewriting reads as absent, or fails to
// parse; failures are asked again a few times.
func (m *Mirror) lockTagState(ctx context.Context, r *remote.Repository, addr Repository, label string) (ocispec.Descriptor, error) {
	for attempt := 1; ; attempt++ {
		desc, err := r.Resolve(ctx, LockTag)
		switch {
		case err == nil:
			return desc, nil
		case isNotFound(err):
			return ocispec.Descriptor{}, nil
		case ctx.Err() != nil:
			return ocispec.Descriptor{}, ctx.Err()
		case attempt >= raceRetry.Tries():
			return ocispec.Descriptor{}, classify(err, fmt.Sprintf("read the lock (tag %q)", LockTag), m.name, addr, label)
		}
		if err := raceRetry.Wait(ctx, 1); err != nil {
			return ocispec.Descriptor{}, err
		}
	}
}

// awaitFree waits until the lock is free, or names one claim for longer
// than its lease.
func (m *Mirror) awaitFree(ctx context.Context, r *remote.Repository, addr Repository, label string) error {
	var seen digest.Digest
	var since time.Time
	var lease time.Duration
	var holder string
	for {
		desc, err := m.lockTagState(ctx, r, addr, label)
		if err != nil {
			return err
		}
		if desc.Digest == "" || desc.Digest == freeLock.Digest {
			return nil
		}
		if desc.Digest != seen {
			seen, since = desc.Digest, time.Now()
			holder, lease = m.readClaim(ctx, r, desc)
		}
		if time.Since(since) >= lease {
			m.warnf("repository %s: took over the lock (tag %q) that %s claimed %s ago and has not released: that writer was stopped", addr, LockTag, holder, lease.Round(time.Second))
			return nil
		}
		if err := pollLock(ctx); err != nil {
			return err
		}
	}
}

// readClaim reads who holds a claim and its lease. A manifest that cannot
// be read, or is no tfmirror claim, keeps the default lease.
func (m *Mirror) readClaim(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor) (holder string, lease time.Duration) {
	holder, lease = "another writer", lockLease
	b, err := fetchManifest(ctx, r, desc)
	if err != nil {
		return holder, lease
	}
	var man ocispec.Manifest
	if json.Unmarshal(b, &man) != nil || man.ArtifactType != ArtifactTypeLock {
		return holder, lease
	}
	if h := man.Annotations[annotationLockHolder]; h != "" {
		holder = h
	}
	if ms, err := strconv.ParseInt(man.Annotations[annotationLockLease], 10, 64); err == nil && ms >= 0 {
		lease = min(time.Duration(ms)*time.Millisecond, maxLease)
	}
	return holder, lease
}

// check reads the lock tag and returns when the read was sent; errLockLost
// when it no longer names this writer's claim.
func (l *repoLock) check(ctx context.Context, label string) (time.Time, error) {
	sent := time.Now()
	desc, err := l.m.lockTagState(ctx, l.r, l.addr, label)
	if err != nil {
		return sent, err
	}
	if desc.Digest != l.claim {
		return sent, fmt.Errorf("oci mirror %s: repository %s: %s: %w (tag %q)", l.m.name, l.addr, label, errLockLost, LockTag)
	}
	return sent, nil
}

// push runs a push of an index (or its delete) under the lock: after a
// check, and checked again when it took longer than lockWait from the
// check, when a writer that claimed meanwhile could have read before it
// landed.
func (l *repoLock) push(ctx context.Context, label string, push func() error) error {
	sent, err := l.check(ctx, label)
	if err != nil {
		return err
	}
	if err := push(); err != nil {
		return err
	}
	if time.Since(sent) <= lockWait {
		return nil
	}
	if _, err := l.check(ctx, label); err != nil {
		if errors.Is(err, errLockLost) {
			return fmt.Errorf("oci mirror %s: repository %s: %s: a push took %s, longer than the lock allows (%s), and another writer took the lock meanwhile (tag %q): what it pushed may have been replaced; run sync again, then verify", l.m.name, l.addr, label, time.Since(sent).Round(time.Millisecond), lockWait, LockTag)
		}
		return err
	}
	return nil
}

// release frees the lock, unless another writer's claim replaced this
// one's. It uses its own deadline, so that a cancelled run still frees it.
func (l *repoLock) release() {
	defer l.local.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.check(ctx, "release"); err != nil {
		return
	}
	_ = retryRace(ctx, func() error { return l.r.PushReference(ctx, freeLock, bytes.NewReader(freeLockBytes), LockTag) })
}
