package s3_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	gosync "sync"
	"testing"

	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

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

// TestConformance runs the case of every capability an S3 store has
// (backendtest.Capabilities) against buckets of a real S3 server
// (versitygw), seeded through the Writer. Each instance opened is another
// client of the one bucket, as another process would be.
func TestConformance(t *testing.T) {
	srv := s3test.Start(t)
	backendtest.Conformance(t, backendtest.Place{
		HTTPClient: srv.HTTPClient(),
		Empty: func(t *testing.T) func(*testing.T) backends.Writer {
			bucket := srv.Bucket(t)
			return func(t *testing.T) backends.Writer { return openStore(t, srv, bucket, "") }
		},
		Lose: func(t *testing.T, _ backends.Reader, a backends.Archive) {
			bucket, key, ok := strings.Cut(strings.TrimPrefix(a.Location, "s3://"), "/")
			if !ok {
				t.Fatalf("not an object's location: %s", a.Location)
			}
			if _, err := srv.Client().DeleteObject(context.Background(), &s3api.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
				t.Fatal(err)
			}
		},
	})
}

// inFlight tracks how many requests for documents are in flight at once.
type inFlight struct {
	next    http.RoundTripper
	mu      gosync.Mutex
	now, hi int
}

func (f *inFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	doc := strings.HasSuffix(req.URL.Path, ".json")
	if doc {
		f.mu.Lock()
		f.now++
		f.hi = max(f.hi, f.now)
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.now--
			f.mu.Unlock()
		}()
	}
	return f.next.RoundTrip(req)
}

// Providers read at once (a plan reads them in parallel) share the store's
// bound on requests in flight: more than the connection pool keeps would
// each open, and handshake, a connection of their own.
func TestConcurrencyBoundsTheWholeStore(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	srv := s3test.Start(t)
	var providers, versions []string
	for i := range 4 {
		providers = append(providers, fmt.Sprintf("example.com/acme/p%d", i))
	}
	for i := range 12 {
		versions = append(versions, fmt.Sprintf("1.%d.0", i))
	}
	seeds := backendtest.Seeds(t, providers, versions, []string{"linux_amd64"})
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		pp, _ := backends.ParseProvider(p)
		if err := m.Flush(context.Background(), pp); err != nil {
			t.Fatal(err)
		}
	}
	bucket := srv.Bucket(t)
	srv.Upload(t, bucket, "", dir)

	f := &inFlight{next: srv.HTTPClient().Transport}
	o := srv.Options()
	o.HTTPClient, o.Concurrency = &http.Client{Transport: f}, 3
	st, err := s3.Open(context.Background(), "s3://"+bucket, bucket, o)
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	for _, p := range providers {
		g.Go(func() error {
			pp, _ := backends.ParseProvider(p)
			as, err := st.AllArchives(context.Background(), pp)
			if err == nil && len(as) != len(versions) {
				err = fmt.Errorf("%s: %d archives, want %d", p, len(as), len(versions))
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if f.hi > 3+len(providers) { // each provider's index.json is read on its own
		t.Fatalf("%d requests for documents in flight at once, want at most the concurrency (3) and one index per provider", f.hi)
	}
}
