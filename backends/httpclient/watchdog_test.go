package httpclient

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

// An archive whose server sends the headers and then nothing ends in the
// watchdog's transient error after its timeout, not in a hang, and one that
// never answers is tried again as the policy says (and only that often).
func TestWatchdogStalledArchive(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path == "/silent.zip" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("PK"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Timeout: 200 * time.Millisecond, RetryBackoff: time.Millisecond}
	u, _ := url.Parse(srv.URL + "/stalled.zip")
	start := time.Now()
	d, err := c.Open(t.Context(), u, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = io.ReadAll(d)
	var stall *StallError
	if !errors.As(err, &stall) || !backends.IsTransient(err) || !strings.Contains(err.Error(), "GET "+u.String()+": no data for 200ms") {
		t.Errorf("err %v after %s: want the watchdog's transient 'no data for 200ms'", err, time.Since(start))
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %s", el)
	}
	if backends.Retried(err) {
		t.Error("a body stalled after its headers is the caller's to retry, not marked as retried")
	}

	requests.Store(0)
	u, _ = url.Parse(srv.URL + "/silent.zip")
	_, err = c.Open(t.Context(), u, nil, "")
	if !errors.As(err, &stall) || !strings.Contains(err.Error(), "no answer within 200ms (3 attempts)") || !backends.Retried(err) {
		t.Errorf("err %v: want 'no answer within 200ms (3 attempts)', retried", err)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// A request body that keeps going out, slowly, is progress: the watchdog
// does not end an upload that takes longer than its timeout in all.
func TestWatchdogSlowUpload(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strings.Repeat("x", int(n)))
	}))
	defer srv.Close()
	const d = 200 * time.Millisecond
	hc := &http.Client{Transport: Watchdog(srv.Client().Transport, d)}
	body := &slowReader{r: bytes.NewReader(make([]byte, 10)), gap: d / 4}
	start := time.Now()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, body)
	req.ContentLength = 10
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("upload of %s with a %s watchdog: %v", time.Since(start), d, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) != 10 {
		t.Fatalf("answer %q, %v", b, err)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("the upload took %s, less than the watchdog's %s: the test proves nothing", el, d)
	}
}

// slowReader gives a byte at a time, gap apart.
type slowReader struct {
	r   io.Reader
	gap time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.gap)
	return s.r.Read(p[:min(len(p), 1)])
}
