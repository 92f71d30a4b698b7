package s3_test

import (
	"context"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// openStore opens s3://bucket/prefix on srv as the root account.
func openStore(t *testing.T, srv *s3test.Server, bucket, prefix string) *s3.Store {
	t.Helper()
	target := bucket
	if prefix != "" {
		target += "/" + prefix
	}
	st, err := s3.Open(context.Background(), "s3://"+target, target, srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestReaderSuite runs the shared Reader contract against a bucket holding
// a mirror directory with its index documents, uploaded as `aws s3 sync`
// would.
func TestReaderSuite(t *testing.T) {
	srv := s3test.Start(t)
	backendtest.ReaderSuite(t, func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
		dir := t.TempDir()
		backendtest.WritePacked(t, dir, seeds)
		m, err := fs.Open(dir, dir, fs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"example.com/acme/alpha", "example.com/acme/beta"} {
			pp, _ := backends.ParseProvider(p)
			if err := m.Flush(context.Background(), pp); err != nil {
				t.Fatal(err)
			}
		}
		bucket := srv.Bucket(t)
		srv.Upload(t, bucket, "tf/mirror/", dir)
		return openStore(t, srv, bucket, "tf/mirror")
	})
}

// TestWriterSuite runs the shared Writer contract against an empty bucket.
func TestWriterSuite(t *testing.T) {
	srv := s3test.Start(t)
	backendtest.WriterSuite(t, func(t *testing.T) backends.Writer {
		return openStore(t, srv, srv.Bucket(t), "")
	})
}
