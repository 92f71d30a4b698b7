package httpclient

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// recorder is a handler that logs each request it answers.
type recorder struct {
	mu   sync.Mutex
	seen []string // "PATH AUTHORIZATION"
	h    http.HandlerFunc
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.Path+" "+req.Header.Get("Authorization"))
	r.mu.Unlock()
	r.h(w, req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// TestNoDowngradeToHTTP: whatever a request fetches (a JSON document, a
// signature, a registry answer, an archive), a redirect from https to plain
// http is refused with an error naming both URLs, and the plain server is
// never asked.
func TestNoDowngradeToHTTP(t *testing.T) {
	plain := &recorder{h: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}}
	ps := httptest.NewServer(plain)
	defer ps.Close()
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ps.URL+"/doc", http.StatusFound)
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/start")
	c := &Client{HTTP: ts.Client()}
	ctx := context.Background()
	calls := map[string]func() error{
		"JSON":     func() error { var v any; _, err := c.JSON(ctx, u, nil, &v); return err },
		"Document": func() error { _, _, err := c.Document(ctx, u, nil); return err },
		"Get":      func() error { _, err := c.Get(ctx, u, nil, ""); return err },
		"Open": func() error {
			d, err := c.Open(ctx, u, nil, "")
			if err == nil {
				d.Close()
			}
			return err
		},
	}
	for name, call := range calls {
		err := call()
		var re *RedirectError
		want := ts.URL + "/start redirects to " + ps.URL + "/doc: refusing to leave https for plain http"
		if !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a RedirectError containing %q", name, err, want)
		}
	}
	if got := plain.requests(); len(got) != 0 {
		t.Errorf("the plain server was asked %v", got)
	}
}

// A redirect back to a URL already visited is named a loop at once, not
// followed until the count runs out; more redirects than allowed are
// refused too.
func TestRedirectLoopAndLimit(t *testing.T) {
	rec := &recorder{h: func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			http.Redirect(w, r, "/a", http.StatusFound)
		default: // /hop/N redirects to /hop/N+1 forever
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		}
	}}
	ts := httptest.NewTLSServer(rec)
	defer ts.Close()
	c := &Client{HTTP: ts.Client()}
	u, _ := url.Parse(ts.URL + "/a")
	_, _, err := c.Document(context.Background(), u, nil)
	if !errors.Is(err, ErrRedirectLoop) || !strings.Contains(err.Error(), ts.URL+"/b redirects back to "+ts.URL+"/a") {
		t.Fatalf("loop: %v", err)
	}
	if n := len(rec.requests()); n != 2 {
		t.Errorf("loop: %d requests, want 2 (a redirect loop is not retried)", n)
	}
	u, _ = url.Parse(ts.URL + "/hop")
	_, _, err = c.Document(context.Background(), u, nil)
	if err == nil || !strings.Contains(err.Error(), "GET "+ts.URL+"/hop: more than 10 redirects") || errors.Is(err, ErrRedirectLoop) {
		t.Fatalf("endless: %v", err)
	}
}

// gzipOfZeros is a gzip stream of n members, each 1 MiB of zeros: about a
// kilobyte each on the wire.
func gzipOfZeros(t *testing.T, n int) []byte {
	t.Helper()
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(one.Bytes(), n)
}

// TestArchiveReadAsSent: an archive answered with Content-Encoding: gzip is
// read as the bytes on the wire, never inflated (a megabyte of gzip that
// inflates to a gigabyte stays a megabyte), and the request asked for
// identity.
func TestArchiveReadAsSent(t *testing.T) {
	body := gzipOfZeros(t, 1024) // inflates to 1 GiB
	var acceptEncoding atomic.Value
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acceptEncoding.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/x.zip")
	d, err := (&Client{HTTP: ts.Client()}).Open(context.Background(), u, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(d, 64<<20))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(body)) || d.Size != int64(len(body)) || d.Encoding != "gzip" {
		t.Errorf("read %d bytes (size %d, encoding %q); want the %d bytes sent, encoding gzip", n, d.Size, d.Encoding, len(body))
	}
	if acceptEncoding.Load() != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", acceptEncoding.Load())
	}
}
