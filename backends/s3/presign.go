package s3

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends"
)

var _ backends.Presigner = (*Store)(nil)

// PresignArchive returns a presigned GET URL of a's object, valid for ttl,
// once a HEAD found the object there with a's size (a zip deleted or
// replaced since it was listed is then served, and checked, by the
// process instead). The URL carries the signature of the store's
// credentials for that one object and method; it goes to the client in a
// redirect, never into a log (the access log records the request path).
func (s *Store) PresignArchive(ctx context.Context, a backends.Archive, ttl time.Duration) (string, error) {
	key := s.keyOf(a)
	head, err := s.client.HeadObject(ctx, &s3api.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return "", s.errorf(err, "%s: %s", a.Package, s.location(key))
	}
	if a.Size >= 0 && aws.ToInt64(head.ContentLength) != a.Size {
		return "", fmt.Errorf("%s: %s: %d bytes, listed as %d: %w", a.Package, s.location(key), aws.ToInt64(head.ContentLength), a.Size, backends.ErrNotFound)
	}
	req, err := s3api.NewPresignClient(s.client).PresignGetObject(ctx, &s3api.GetObjectInput{Bucket: &s.bucket, Key: &key},
		s3api.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("%s: presign %s: %w", a.Package, s.location(key), err)
	}
	return req.URL, nil
}
