package oci

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
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
		defer rc.Close()
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

// Retries of a push that met another push of the same content: a few,
// soon, since the other push's link is written within moments.
const (
	raceAttempts = 6
	raceBackoff  = 50 * time.Millisecond
)

// retryRace runs push until it succeeds, fails otherwise than by meeting a
// concurrent push (isPushRace), or has been tried raceAttempts times.
func retryRace(ctx context.Context, push func() error) error {
	for attempt := 1; ; attempt++ {
		err := push()
		if err == nil || !isPushRace(err) || attempt == raceAttempts {
			return err
		}
		if err := sleepJittered(ctx, raceBackoff<<(attempt-1)); err != nil {
			return err
		}
	}
}

// sleepJittered waits between d/2 and 3d/2, so that writers that met
// once do not meet again in lockstep.
func sleepJittered(ctx context.Context, d time.Duration) error {
	return backends.Sleep(ctx, d/2+rand.N(d))
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
