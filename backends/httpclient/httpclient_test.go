package httpclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

func TestHostKey(t *testing.T) {
	for raw, want := range map[string]string{
		"https://Example.COM/x":      "example.com",
		"https://example.com:443/x":  "example.com",
		"https://example.com:8443/x": "example.com:8443",
		"http://example.com:80/":     "example.com",
		"http://example.com:443/":    "example.com:443",
		"https://[::1]:8443/":        "[::1]:8443",
		"https://127.0.0.1/":         "127.0.0.1",
	} {
		u, _ := url.Parse(raw)
		if got := HostKey(u); got != want {
			t.Errorf("HostKey(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestTokenStaysOnItsHost: the token is sent to its host over https only,
// and dropped for good once a redirect leaves the host, even if a later
// redirect comes back.
func TestTokenStaysOnItsHost(t *testing.T) {
	var seen []string
	var other *httptest.Server
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "main "+r.URL.Path+" "+r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/same-host", http.StatusFound)
		case "/same-host":
			http.Redirect(w, r, other.URL+"/away", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	other = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "other "+r.URL.Path+" "+r.Header.Get("Authorization"))
		http.Redirect(w, r, srv.URL+"/back", http.StatusFound)
	}))
	defer other.Close()
	u, _ := url.Parse(srv.URL + "/start")
	c := &Client{HTTP: srv.Client()}
	var v map[string]any
	if _, err := c.JSON(context.Background(), u, &Auth{Host: HostKey(u), Token: "t"}, &v); err != nil {
		t.Fatal(err)
	}
	want := []string{"main /start Bearer t", "main /same-host Bearer t", "other /away ", "main /back "}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

func TestStatusErrors(t *testing.T) {
	for code, want := range map[int]error{404: backends.ErrNotFound, 401: backends.ErrUnauthorized, 403: backends.ErrUnauthorized} {
		e := &StatusError{URL: "https://x/", Status: code}
		if !errors.Is(e, want) || e.Transient() {
			t.Errorf("%d: wraps %v? transient %v", code, errors.Unwrap(e), e.Transient())
		}
	}
	for _, code := range []int{500, 502, 503, 429, 408} {
		if !(&StatusError{Status: code}).Transient() {
			t.Errorf("%d not transient", code)
		}
	}
}
