package httpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// The debug log has a line per request attempt: method, URL, status, bytes,
// time and attempt; redirects on lines of their own; archives when their
// headers arrive and when their body is done. It never holds the token or
// a presigned URL's signature.
func TestDebugLog(t *testing.T) {
	const token = "token-secret"
	archive := bytes.Repeat([]byte("z"), 5000)
	var flaky atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok": true}`)
		case "/flaky.json":
			if flaky.Add(1) == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
		case "/old.json":
			http.Redirect(w, r, "/doc.json", http.StatusFound)
		case "/a.zip":
			http.Redirect(w, r, "/signed/a.zip?X-Amz-Credential=cred-secret&X-Amz-Signature=sig-secret&token=query-secret&ref=v1", http.StatusFound)
		case "/signed/a.zip":
			w.Header().Set("Content-Length", fmt.Sprint(len(archive)))
			w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var out backendtest.Buffer
	c := &Client{HTTP: srv.Client(), Debug: &out, RetryBackoff: time.Millisecond}
	base, _ := url.Parse(srv.URL)
	auth := &Auth{Host: HostKey(base), Token: token}
	ctx := context.Background()
	at := func(p string) *url.URL { return base.ResolveReference(&url.URL{Path: p}) }

	var v map[string]any
	for _, p := range []string{"/doc.json", "/flaky.json", "/old.json"} {
		if _, err := c.JSON(ctx, at(p), auth, &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	// The sync engine's third try of a job: the download says so.
	d, err := c.Open(backends.WithAttempt(ctx, 3), at("/a.zip"), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	headers := out.String()
	if _, err := io.Copy(io.Discard, d); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	log := out.String()

	u := srv.URL
	took := `(<1ms|\d+ms|\d+(\.\d+)?s)`
	for _, want := range []string{
		`debug: GET ` + u + `/doc.json -> 200, 12 B, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + `/flaky.json -> 503, 5 B, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + `/flaky.json -> 200, 2 B, ` + took + ` \(attempt 2\)`,
		`debug: GET ` + u + `/old.json -> 302 to ` + u + `/doc.json, \d+ B, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + `/a.zip -> 302 to ` + u + `/signed/a.zip\?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&token=REDACTED&ref=v1, \d+ B, ` + took + ` \(attempt 3\)`,
		`debug: GET ` + u + `/signed/a.zip\?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&token=REDACTED&ref=v1 -> 200, body done, 5.0 kB in ` + took + ` \(attempt 3\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(log) {
			t.Errorf("no line matching\n%s\nin\n%s", want, log)
		}
	}
	// The archive's headers were logged before its body was read.
	wantHeaders := `(?m)^debug: GET ` + u + `/signed/a.zip\?\S+ -> 200, headers after ` + took + `, 5.0 kB to come \(attempt 3\)$`
	if !regexp.MustCompile(wantHeaders).MatchString(headers) {
		t.Errorf("no headers line before the body was read:\n%s", headers)
	}
	if strings.Contains(log, "secret") {
		t.Errorf("a credential in the log:\n%s", log)
	}
	if n := strings.Count(log, "\n"); n != 8 {
		t.Errorf("%d lines, want 8:\n%s", n, log)
	}
}

func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://h/p?archive=zip&ref=v1": "https://h/p?archive=zip&ref=v1",
		"https://user:pass@h/p":          "https://REDACTED@h/p",
		"https://h/p?sig=s&se=2025&sv=1&access_token=t&X-Amz-Signature=s&Key-Pair-Id=k": "https://h/p?sig=REDACTED&se=2025&sv=1&access_token=REDACTED&X-Amz-Signature=REDACTED&Key-Pair-Id=REDACTED",
		"https://h/p?X-Goog-Signature=s&x-amz-security-token=t":                         "https://h/p?X-Goog-Signature=REDACTED&x-amz-security-token=REDACTED",
	} {
		u, _ := url.Parse(raw)
		if got := RedactURL(u); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", raw, got, want)
		}
	}
}

// A certificate for other names says so, and that trusting another CA
// would not help; one that is not trusted gives the hint every kind of
// place gives. Both are permanent.
func TestCertErrors(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	port := srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	for _, tc := range []struct {
		name   string
		client *http.Client
		url    string
		want   string
	}{
		{"not trusted", nil, srv.URL + "/x", "the TLS certificate of 127.0.0.1:" + port + " is not trusted (x509: certificate signed by unknown authority): " + CertHint},
		// httptest's certificate is for 127.0.0.1, ::1 and example.com.
		{"another name", srv.Client(), "https://localhost:" + port + "/x", "the TLS certificate of localhost:" + port + " does not name it (x509: certificate is valid for example.com, *.example.com, not localhost): reach the server by a name its certificate holds, or have it serve one issued for localhost (trusting another CA does not help)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{HTTP: tc.client, RetryBackoff: time.Millisecond}
			u, _ := url.Parse(tc.url)
			_, err := c.Get(context.Background(), u, nil, "")
			var ce *CertError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a CertError saying %q", err, tc.want)
			}
			if backends.IsTransient(err) || strings.Contains(err.Error(), "attempts") {
				t.Errorf("retried, or transient: %v", err)
			}
		})
	}
}

// Errors name URLs as the debug log does: a presigned URL's signature is a
// credential for as long as it lasts.
func TestErrorsRedactURLs(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a.zip" {
			http.Redirect(w, r, "/signed/a.zip?X-Amz-Signature=sig-secret&ref=v1", http.StatusFound)
			return
		}
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Retries: -1}
	for _, p := range []string{"/doc.json?token=tok-secret", "/a.zip"} {
		u, _ := url.Parse(srv.URL + p)
		_, err := c.Get(context.Background(), u, nil, "")
		if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "=REDACTED") {
			t.Errorf("%s: %v", p, err)
		}
	}
}
