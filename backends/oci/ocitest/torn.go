package ocitest

import (
	"context"
	"sync"
	"time"

	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	storagemiddleware "github.com/distribution/distribution/v3/registry/storage/driver/middleware"
)

const tornWritesName = "ocitest-torn-writes"

// tornPause is how long a link stays empty while it is rewritten. On a
// real disk the window is shorter, but a registry serving many clients
// meets it all the same; the pause makes a test meet it in a few rounds.
const tornPause = 20 * time.Millisecond

var registerOnce sync.Once

// registerTornWrites makes the storage middleware known to the registry
// (its registry of middlewares is process-wide).
func registerTornWrites() {
	registerOnce.Do(func() {
		if err := storagemiddleware.Register(tornWritesName, func(_ context.Context, d storagedriver.StorageDriver, _ map[string]any) (storagedriver.StorageDriver, error) {
			return tornDriver{d}, nil
		}); err != nil {
			panic(err)
		}
	})
}

// tornDriver writes small files as distribution 2.8's filesystem driver
// did: PutContent opens the file, truncates it and writes it in place.
type tornDriver struct{ storagedriver.StorageDriver }

func (d tornDriver) PutContent(ctx context.Context, path string, content []byte) error {
	w, err := d.StorageDriver.Writer(ctx, path, false) // truncates in place
	if err != nil {
		return err
	}
	time.Sleep(tornPause)
	if _, err := w.Write(content); err != nil {
		_ = w.Cancel(ctx) // closes it; the write's error is the one to return
		return err
	}
	if err := w.Commit(ctx); err != nil {
		_ = w.Close() // the commit's error is the one to return
		return err
	}
	return w.Close()
}
