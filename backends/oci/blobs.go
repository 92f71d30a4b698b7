package oci

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/tfmirror/tfmirror/backends"
)

// pushBlob pushes a blob, again while the registry answers as it does when
// another push of the same blob is under way (isPushRace), unless it then
// turns out to hold the blob. Where the answer is DIGEST_INVALID and
// invalid is given, invalid says first whether the bytes are the
// digest's: its error ends the pushes.
func pushBlob(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor, open func() (io.ReadCloser, error), invalid func(ocispec.Descriptor) error) error {
	return retryRace(ctx, func() error {
		rc, err := open()
		if err != nil {
			return err
		}
		defer func() { _ = rc.Close() }() // read only
		err = r.Blobs().Push(ctx, desc, rc)
		if errors.Is(err, errdef.ErrAlreadyExists) {
			return nil
		}
		if invalid != nil && isDigestInvalid(err) {
			if ierr := invalid(desc); ierr != nil {
				return ierr
			}
		}
		if err != nil && isPushRace(err) {
			if ok, xerr := r.Blobs().Exists(ctx, desc); xerr == nil && ok {
				return nil
			}
		}
		return err
	})
}

// raceRetry is the policy of a push that met another push of the same
// content, and of a read of what another push is rewriting: a few tries,
// soon (50 ms, doubling), since the other push's link is written within
// moments; each wait spread by ±50% so that writers that met once do not
// meet again in lockstep.
var raceRetry = backends.RetryPolicy{Attempts: 6, Base: 50 * time.Millisecond, Jitter: 0.5}

// retryRace runs push until it succeeds, fails otherwise than by meeting a
// concurrent push (isPushRace), or has been tried as raceRetry says.
func retryRace(ctx context.Context, push func() error) error {
	for attempt := 1; ; attempt++ {
		err := push()
		if err == nil || !isPushRace(err) || attempt >= raceRetry.Tries() {
			return err
		}
		if err := raceRetry.Wait(ctx, attempt); err != nil {
			return err
		}
	}
}

// ensureConfig pushes the empty config blob "{}" once per repository: the
// jobs that need it at the same moment wait for one push. Every platform
// manifest names it, and distribution 2.8 answers a manifest naming a blob
// whose link another push is rewriting as if the blob were missing.
func (m *Mirror) ensureConfig(ctx context.Context, r *remote.Repository, addr Repository, label string) error {
	for {
		m.w.mu.Lock()
		known := m.w.config[addr]
		m.w.mu.Unlock()
		if known {
			return nil
		}
		_, err, _ := m.w.configs.Do(addr.String(), func() (any, error) {
			cfg := ocispec.DescriptorEmptyJSON
			ok, err := r.Blobs().Exists(ctx, cfg)
			if err != nil {
				return nil, classify(err, "check config blob", m.name, addr, label)
			}
			if !ok {
				err := pushBlob(ctx, r, cfg, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(cfg.Data)), nil }, nil)
				if err != nil {
					return nil, classify(err, "push config blob", m.name, addr, label)
				}
			}
			m.w.mu.Lock()
			m.w.config[addr] = true
			m.w.mu.Unlock()
			return nil, nil
		})
		// The push ran under the job that started it; when that job was
		// cancelled, another job still wants the config.
		if err != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			continue
		}
		return err
	}
}
