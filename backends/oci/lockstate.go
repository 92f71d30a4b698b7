package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

// lockManifest is a lock manifest: the free one when holder is "".
func lockManifest(holder, nonce string, lease time.Duration) (ocispec.Descriptor, []byte) {
	a := map[string]string{annotationLockHolder: holder}
	if holder != "" {
		a[annotationLockNonce] = nonce
		a[annotationLockLease] = strconv.FormatInt(lease.Milliseconds(), 10)
	}
	return emptyManifest(ArtifactTypeLock, a)
}

// emptyManifest is a manifest of artifactType whose config and one layer
// are the empty JSON blob (ensureConfig pushes it), saying what it says in
// its annotations: a lock's claim, a note.
func emptyManifest(artifactType string, annotations map[string]string) (ocispec.Descriptor, []byte) {
	man := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: artifactType,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers:       []ocispec.Descriptor{ocispec.DescriptorEmptyJSON},
		Annotations:  annotations,
	}
	b, _ := json.Marshal(man)
	return content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b), b
}

// freeLock is the manifest LockTag named when no writer held the lock,
// before the lock had ReleasedTag; such a lock reads as free.
var freeLock, _ = lockManifest("", "", 0)

// claim is one attempt's claim of a repository's lock.
type claim struct {
	m     *Mirror
	r     *remote.Repository
	addr  Repository
	label string
	desc  ocispec.Descriptor
	body  []byte
	tags  lockTags
}

func newClaim(m *Mirror, r *remote.Repository, addr Repository, label, holder, nonce string) *claim {
	desc, b := lockManifest(holder, nonce, lockLease)
	return &claim{m: m, r: r, addr: addr, label: label, desc: desc, body: b, tags: repoLockTags}
}

// write pushes the claim to tag.
func (c *claim) write(ctx context.Context, tag string) error {
	if err := retryRace(ctx, func() error { return c.r.PushReference(ctx, c.desc, bytes.NewReader(c.body), tag) }); err != nil {
		return classify(err, fmt.Sprintf("push the lock's claim as tag %q", tag), c.m.name, c.addr, c.label)
	}
	return nil
}

func (c *claim) held() *repoLock {
	return &repoLock{m: c.m, r: c.r, addr: c.addr, claim: c.desc.Digest, rel: c, tags: c.tags}
}

// tagState reads a tag of the lock: what it names, no digest when the tag
// is absent. A link that distribution 2.8 is rewriting reads as absent, or
// fails to parse; failures are asked again a few times.
func (m *Mirror) tagState(ctx context.Context, r *remote.Repository, addr Repository, label, tag string) (ocispec.Descriptor, error) {
	for attempt := 1; ; attempt++ {
		desc, err := r.Resolve(ctx, tag)
		switch {
		case err == nil:
			return desc, nil
		case isNotFound(err):
			return ocispec.Descriptor{}, nil
		case ctx.Err() != nil:
			return ocispec.Descriptor{}, ctx.Err()
		case attempt >= raceRetry.Tries():
			return ocispec.Descriptor{}, classify(err, fmt.Sprintf("read the lock (tag %q)", tag), m.name, addr, label)
		}
		if err := raceRetry.Wait(ctx, 1); err != nil {
			return ocispec.Descriptor{}, err
		}
	}
}

// lockFree reads ReleasedTag, then LockTag: whether the lock is free, and
// what LockTag names. A claim ReleasedTag named once stays released, so
// the lock was free when LockTag was read.
func (m *Mirror) lockFree(ctx context.Context, r *remote.Repository, addr Repository, label string, tags lockTags) (bool, ocispec.Descriptor, error) {
	released, err := m.tagState(ctx, r, addr, label, tags.r)
	if err != nil {
		return false, ocispec.Descriptor{}, err
	}
	y, err := m.tagState(ctx, r, addr, label, tags.y)
	if err != nil {
		return false, y, err
	}
	free := y.Digest == "" || y.Digest == freeLock.Digest || y.Digest == released.Digest
	return free, y, nil
}

// awaitFree waits until the lock is free (false), or names one claim for
// longer than its lease (true: the caller takes it over). y is what
// LockTag named when the wait began.
func (m *Mirror) awaitFree(ctx context.Context, r *remote.Repository, addr Repository, label string, tags lockTags, y ocispec.Descriptor) (bool, error) {
	seen, since := y.Digest, time.Now()
	holder, lease := m.readClaim(ctx, r, y)
	m.waiting(addr, tags.y, holder, lease)
	for {
		if err := pollLock(ctx); err != nil {
			return false, err
		}
		free, desc, err := m.lockFree(ctx, r, addr, label, tags)
		if err != nil || free {
			return false, err
		}
		if desc.Digest != seen {
			seen, since = desc.Digest, time.Now()
			holder, lease = m.readClaim(ctx, r, desc)
			m.waiting(addr, tags.y, holder, lease)
		}
		if time.Since(since) >= lease {
			m.tookOver(addr, tags.y, holder, time.Since(since))
			return true, nil
		}
	}
}

// waiting says, at once, that a writer waits for the lock holder holds,
// and for how long at most.
func (m *Mirror) waiting(addr Repository, tag, holder string, lease time.Duration) {
	if m.opts.Notify != nil {
		m.opts.Notify(backends.Notice{Kind: backends.NoticeWaiting, Place: m.name, Message: backends.Printable(fmt.Sprintf(
			"oci mirror %s: repository %s: waiting for the lock (tag %q) that %s holds; taken over if it stays unreleased for %s",
			m.name, addr, tag, holder, lease.Round(100*time.Millisecond)))})
	}
}

// tookOver says that the lock holder held, unchanged for age, was taken
// over: at once when told to, or among the warnings.
func (m *Mirror) tookOver(addr Repository, tag, holder string, age time.Duration) {
	msg := fmt.Sprintf("repository %s: took over the lock (tag %q) that %s held unreleased for %s: that writer was stopped", addr, tag, holder, age.Round(100*time.Millisecond))
	if m.opts.Notify == nil {
		m.warnf("%s", msg)
		return
	}
	m.opts.Notify(backends.Notice{Kind: backends.NoticeWarning, Place: m.name, Message: backends.Printable("oci mirror " + m.name + ": " + msg)})
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
		// Bounded by the lease this writer claims itself: a claim
		// stating hours would otherwise hold every writer that long.
		lease = min(time.Duration(ms)*time.Millisecond, lockLease)
	}
	return holder, lease
}

// check reads the lock tag and returns when the read was sent; errLockLost
// when it no longer names this writer's claim.
func (l *repoLock) check(ctx context.Context, label string) (time.Time, error) {
	sent := time.Now()
	desc, err := l.m.tagState(ctx, l.r, l.addr, label, l.tags.y)
	if err != nil {
		return sent, err
	}
	if desc.Digest != l.claim {
		return sent, fmt.Errorf("oci mirror %s: repository %s: %s: %w (tag %q)", l.m.name, l.addr, label, errLockLost, l.tags.y)
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
			return fmt.Errorf("oci mirror %s: repository %s: %s: a push took %s, longer than the lock allows (%s), and another writer took the lock meanwhile (tag %q): what it pushed may have been replaced; run sync again, then verify", l.m.name, l.addr, label, time.Since(sent).Round(time.Millisecond), lockWait, l.tags.y)
		}
		return err
	}
	return nil
}

// release frees the lock: it pushes the claim to ReleasedTag, unless
// another writer's claim replaced it on LockTag. It uses its own deadline,
// so that a cancelled run still frees it.
func (l *repoLock) release() {
	defer l.local.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.check(ctx, "release"); err != nil {
		return
	}
	_ = l.rel.write(ctx, l.tags.r)
}
