package s3_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// zipFault answers the GETs of archives in its own way (when fault is set),
// and counts them; every other request reaches the real store.
type zipFault struct {
	next  http.RoundTripper
	fault atomic.Value // func(*http.Response, *http.Request) (*http.Response, error)
	hits  atomic.Int32
}

func (z *zipFault) RoundTrip(r *http.Request) (*http.Response, error) {
	f, _ := z.fault.Load().(func(*http.Response, *http.Request) (*http.Response, error))
	if f == nil || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".zip") {
		return z.next.RoundTrip(r)
	}
	z.hits.Add(1)
	resp, err := z.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	return f(resp, r)
}

// stalledBody sends nothing until its request is given up.
type stalledBody struct{ ctx context.Context }

func (b stalledBody) Read([]byte) (int, error) { <-b.ctx.Done(); return 0, b.ctx.Err() }
func (b stalledBody) Close() error             { return nil }

// An S3 object that keeps failing is requested as often as the store's
// retry policy says, and no more when a job's retries are around it (the
// SDK's 3 tries x the engine's 4 before); one whose body stalls after its
// headers ends in the stall watchdog's error (it hung for good).
func TestS3ObjectRetriesAndStall(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "")
	srv := s3test.Start(t)
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, seeds)
	bucket := srv.Bucket(t)
	srv.Upload(t, bucket, "", dir)

	z := &zipFault{next: srv.HTTPClient().Transport}
	opts := srv.Options()
	opts.HTTPClient = &http.Client{Transport: z}
	opts.Timeout = 300 * time.Millisecond
	opts.Retry = backends.RetryPolicy{Attempts: 3, Base: 5 * time.Millisecond}
	st, err := s3.Open(context.Background(), "s3://"+bucket, bucket, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, v := seeds[0].Package.Provider, seeds[0].Package.Version
	as, err := st.Archives(ctx, p, v)
	if err != nil || len(as) != 1 {
		t.Fatalf("Archives = %v, %v", as, err)
	}
	download := func(ctx context.Context) error {
		rc, err := st.Open(ctx, as[0])
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(io.Discard, rc)
		return err
	}
	job := backends.RetryPolicy{Attempts: 4, Base: 5 * time.Millisecond} // the sync engine's, around it

	z.fault.Store(func(resp *http.Response, r *http.Request) (*http.Response, error) {
		resp.Body.Close()
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
			Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	err = job.Do(ctx, download)
	if err == nil || !backends.IsTransient(err) {
		t.Fatalf("err %v: want the transient 503", err)
	}
	if n := z.hits.Load(); n != 3 {
		t.Errorf("object requested %d times, want the policy's 3 (err %v)", n, err)
	}

	z.hits.Store(0)
	z.fault.Store(func(resp *http.Response, r *http.Request) (*http.Response, error) {
		resp.Body.Close()
		resp.Body = stalledBody{r.Context()}
		return resp, nil
	})
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- download(ctx) }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a stalled object body hung the download")
	}
	var stall interface{ Timeout() bool }
	if err == nil || !strings.Contains(err.Error(), "no data for 300ms") || !errors.As(err, &stall) || !backends.IsTransient(err) {
		t.Errorf("err %v after %s: want the watchdog's transient 'no data for 300ms'", err, time.Since(start))
	}
}
