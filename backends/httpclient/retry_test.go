package httpclient

import (
	"context"
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

// TestMetadataRetries: JSON and Document try a transient failure again,
// a bounded number of times, with growing waits; permanent failures and
// refused documents are not retried.
func TestMetadataRetries(t *testing.T) {
	cases := []struct {
		name     string
		failures int // requests answered with status before the real answer
		status   int
		retries  int
		body     string // the real answer
		want     string // "" for success
		requests int32
	}{
		{name: "burst of 503", failures: 2, status: 503, body: `{}`, requests: 3},
		{name: "429 then fine", failures: 1, status: 429, body: `{}`, requests: 2},
		{name: "permanent 500", failures: 100, status: 500, want: "HTTP 500 Internal Server Error: down (3 attempts)", requests: 3},
		{name: "more retries", failures: 100, status: 502, retries: 4, want: "(5 attempts)", requests: 5},
		{name: "no retries", failures: 100, status: 503, retries: -1, want: "HTTP 503 Service Unavailable: down", requests: 1},
		{name: "404 is final", failures: 100, status: 404, want: "HTTP 404 Not Found", requests: 1},
		{name: "401 is final", failures: 100, status: 401, want: "HTTP 401 Unauthorized", requests: 1},
		{name: "bad JSON is final", body: `{"a":`, want: "not a valid document", requests: 1},
		{name: "oversized is final", body: `{"a":"` + strings.Repeat("x", 2000) + `"}`, want: "document larger than 1024 bytes", requests: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if int(n.Add(1)) <= tc.failures {
					http.Error(w, "down", tc.status)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			u, _ := url.Parse(srv.URL + "/doc.json")
			c := &Client{HTTP: srv.Client(), Retries: tc.retries, RetryBackoff: time.Millisecond, MaxDocument: 1024}
			for _, call := range []string{"JSON", "Document"} {
				n.Store(0)
				var err error
				if call == "JSON" {
					var v map[string]any
					_, err = c.JSON(context.Background(), u, nil, &v)
				} else {
					if strings.Contains(tc.want, "JSON") || strings.Contains(tc.want, "valid document") {
						continue // Document does not parse
					}
					_, _, err = c.Document(context.Background(), u, nil)
				}
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("%s: %v", call, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Fatalf("%s: error %v, want %q", call, err, tc.want)
				}
				if got := n.Load(); got != tc.requests {
					t.Errorf("%s: %d requests, want %d", call, got, tc.requests)
				}
			}
		})
	}
}

// The last error of a retried request keeps what it wraps and reports.
func TestRetriedErrorKeepsItsKind(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/x")
	c := &Client{HTTP: srv.Client(), RetryBackoff: time.Millisecond}
	_, _, err := c.Document(context.Background(), u, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 503 || !backends.IsTransient(err) {
		t.Fatalf("%v: want a transient *StatusError 503 inside", err)
	}
}

// Cancelling the caller's context ends the waits between tries at once.
func TestRetryStopsOnCancel(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/x")
	c := &Client{HTTP: srv.Client(), RetryBackoff: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := c.Document(ctx, u, nil)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("%v after %s", err, time.Since(start))
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 503 {
		t.Errorf("%v: want the last answer", err)
	}
}
