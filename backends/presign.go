package backends

import (
	"context"
	"time"
)

// Presigner is a place whose archives a client may fetch straight from it,
// by a URL that grants access for a while (an object store's presigned
// URL), so that the bytes never pass through the process that serves the
// documents.
type Presigner interface {
	// PresignArchive returns a URL from which a, as listed, can be fetched
	// for ttl. It fails with ErrNotFound when the place does not hold a
	// (then the caller serves the bytes itself).
	PresignArchive(ctx context.Context, a Archive, ttl time.Duration) (string, error)
}
