package netmirror_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

func TestReadsAServedMirror(t *testing.T) {
	dir := t.TempDir()
	zips := writeMirror(t, dir,
		pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"},
		pkg{"example.com", "acme", "alpha", "1.0.0", "darwin_arm64"},
		pkg{"example.com", "acme", "alpha", "1.1.0", "linux_amd64"},
		pkg{"example.com", "acme", "beta", "2.0.0", "linux_amd64"},
	)
	srv, _, _ := serveDir(t, dir)
	m := openMirror(t, srv, srv.URL+"/", nil)
	if _, ok := any(m).(backends.Writer); ok {
		t.Fatal("a network mirror must not be writable")
	}
	if _, err := m.Providers(bg); !errors.Is(err, backends.ErrNoCatalogue) {
		t.Fatalf("Providers: %v, want ErrNoCatalogue", err)
	}
	alpha := mustProvider(t, "example.com/acme/alpha")
	vs, err := m.Versions(bg, alpha)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(vs) != "[1.1.0 1.0.0]" {
		t.Fatalf("versions = %v", vs)
	}
	as, err := m.AllArchives(bg, alpha)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 3 {
		t.Fatalf("archives = %v, want 3", as)
	}
	for _, a := range as {
		p := pkg{"example.com", "acme", "alpha", a.Version.String(), a.Platform.String()}
		sums := sumsOf(t, zips[p])
		wantDoc := srv.URL + "/example.com/acme/alpha/" + a.Version.String() + ".json"
		if len(a.Evidence) != 1 || a.Evidence[0].Source != (hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: wantDoc}) {
			t.Errorf("%s: evidence %v, want one from %s", a.Package, a.Evidence, wantDoc)
		}
		if !slices.Equal(a.Hashes(), sums.List()) {
			t.Errorf("%s: hashes %v, want %v", a.Package, a.Hashes(), sums.List())
		}
		if want := srv.URL + "/example.com/acme/alpha/" + a.Filename(); a.Location != want {
			t.Errorf("%s: location %s, want %s", a.Package, a.Location, want)
		}
		if a.Size != -1 {
			t.Errorf("%s: size %d, want -1 (the protocol does not say)", a.Package, a.Size)
		}
		f := sync.VerifyArchive(bg, m, a, hashing.Options{})
		if f.Status != sync.StatusOK || !f.Result.Verified() {
			t.Errorf("%s: verify %s: %s", a.Package, f.Status, f.Detail)
		}
	}

	// The selection names providers, as a mirror cannot list them.
	f, _ := backends.ParseProviderFilter("example.com/acme/beta")
	got, err := sync.Selection{Providers: []backends.ProviderFilter{f}}.Resolve(bg, m)
	if err != nil || len(got) != 1 || got[0].Version.String() != "2.0.0" {
		t.Fatalf("resolve beta: %v, %v", got, err)
	}
	f, _ = backends.ParseProviderFilter("acme/beta")
	if _, err := (sync.Selection{Providers: []backends.ProviderFilter{f}}).Resolve(bg, m); err == nil || !strings.Contains(err.Error(), "write the full address") || !errors.Is(err, backends.ErrUsage) {
		t.Fatalf("NAMESPACE/TYPE on a network mirror: %v, want a request for the hostname", err)
	}
}

func TestRelativeURLsResolveAgainstTheFinalURL(t *testing.T) {
	zb := registrytest.ProviderZip("alpha", "1.0.0", "x")
	sums := sumsOf(t, zb)
	var srv *httptest.Server
	srv = tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/m/example.com/acme/alpha/index.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"versions":{"1.0.0":{},"2.0.0":{}}}`)
		case "/m/example.com/acme/alpha/1.0.0.json":
			http.Redirect(w, r, "/elsewhere/docs/1.0.0.json", http.StatusFound)
		case "/elsewhere/docs/1.0.0.json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprintf(w, `{"archives":{"linux_amd64":{"url":"zips/a.zip","hashes":[%q,%q]},"darwin_arm64":{"url":"%s/abs/b.zip"}}}`, sums.H1, sums.ZH, srv.URL)
		case "/elsewhere/docs/zips/a.zip":
			w.Write(zb)
		case "/m/example.com/acme/alpha/2.0.0.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"archives":{"linux_amd64":{"url":"../../../top.zip"}}}`)
		default:
			http.NotFound(w, r)
		}
	})
	m := openMirror(t, srv, srv.URL+"/m/", nil)
	p := mustProvider(t, "example.com/acme/alpha")
	as, err := m.Archives(bg, p, mustVersion(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 {
		t.Fatalf("archives %v", as)
	}
	if want := srv.URL + "/abs/b.zip"; as[0].Platform.String() != "darwin_arm64" || as[0].Location != want {
		t.Errorf("absolute url: %s %s, want %s", as[0].Platform, as[0].Location, want)
	}
	if want := srv.URL + "/elsewhere/docs/zips/a.zip"; as[1].Location != want {
		t.Errorf("relative url resolved to %s, want %s (against the redirected document)", as[1].Location, want)
	}
	if f := sync.VerifyArchive(bg, m, as[1], hashing.Options{}); f.Status != sync.StatusOK || !f.Result.Verified() {
		t.Errorf("verify: %s: %s", f.Status, f.Detail)
	}
	as, err = m.Archives(bg, p, mustVersion(t, "2.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/m/top.zip"; as[0].Location != want {
		t.Errorf("dot-dot url resolved to %s, want %s", as[0].Location, want)
	}
}

// TestErrors: each way a mirror can fail gives an error that names the
// document and says what is wrong.
func TestErrors(t *testing.T) {
	json := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}
	}
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", code) }
	}
	redirects := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var hop int
			fmt.Sscanf(r.URL.Query().Get("hop"), "%d", &hop)
			if hop < n {
				http.Redirect(w, r, fmt.Sprintf("%s?hop=%d", r.URL.Path, hop+1), http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"versions":{"1.0.0":{}}}`)
		}
	}
	cases := []struct {
		name    string
		index   http.HandlerFunc // index.json
		version http.HandlerFunc // 1.0.0.json; nil: not requested
		opts    func(*netmirror.Options)
		want    string
		is      error
	}{
		{name: "no such provider", index: status(404), want: "example.com/acme/alpha: no such provider: GET", is: backends.ErrNotFound},
		{name: "unauthorized", index: status(401), want: "HTTP 401 Unauthorized: nope (no token for 127.0.0.1:", is: backends.ErrUnauthorized},
		{name: "forbidden with a token", index: status(403), opts: func(o *netmirror.Options) { o.Credentials = tokenForAnyHost("t") },
			want: "HTTP 403 Forbidden: nope (the token for 127.0.0.1:", is: backends.ErrUnauthorized},
		{name: "server error", index: status(500), want: "/example.com/acme/alpha/index.json: HTTP 500 Internal Server Error"},
		{name: "wrong content type", index: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `{"versions":{}}`)
		}, want: `/example.com/acme/alpha/index.json: served as "text/html", want application/json`},
		{name: "no content type", index: func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			io.WriteString(w, `{"versions":{}}`)
		}, want: `served as "no Content-Type", want application/json`},
		{name: "endless redirects", index: redirects(1000), want: "/example.com/acme/alpha/index.json: more than 10 redirects"},
		{name: "eleven redirects", index: redirects(11), want: "more than 10 redirects"},
		{name: "redirect loop", index: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.Path, http.StatusFound) },
			want: "/example.com/acme/alpha/index.json: redirect loop: ", is: httpclient.ErrRedirectLoop},
		{name: "oversized document", index: json(`{"versions":{` + strings.Repeat(`"1.0.0":{},`, 200) + `"1.0.1":{}}}`),
			opts: func(o *netmirror.Options) { o.HTTP.MaxDocument = 1024 }, want: "index.json: document larger than 1024 bytes"},
		{name: "invalid json", index: json(`{"versions":`), want: "index.json: not a valid document"},
		{name: "not an index", index: json(`{}`), want: `index.json: not an index document (no "versions" object)`},
		{name: "version document missing", index: json(`{"versions":{"1.0.0":{}}}`), version: status(404),
			want: "version 1.0.0: the mirror lists it but has no archive index for it", is: backends.ErrNotFound},
		{name: "not a version document", index: json(`{"versions":{"1.0.0":{}}}`), version: json(`{"versions":{}}`),
			want: `1.0.0.json: not a version document (no "archives" object)`},
		{name: "bad hash", index: json(`{"versions":{"1.0.0":{}}}`), version: json(`{"archives":{"linux_amd64":{"url":"a.zip","hashes":["deadbeef"]}}}`),
			want: `example.com/acme/alpha 1.0.0 linux_amd64: https://`},
		{name: "slow server", index: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, opts: func(o *netmirror.Options) { o.HTTP.Timeout = 200 * time.Millisecond }, want: "index.json: no answer within 200ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/example.com/acme/alpha/index.json":
					tc.index(w, r)
				case "/example.com/acme/alpha/1.0.0.json":
					tc.version(w, r)
				default:
					http.NotFound(w, r)
				}
			})
			o := netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client(), Timeout: 5 * time.Second}}
			if tc.opts != nil {
				tc.opts(&o)
			}
			m, err := netmirror.Open(srv.URL+"/", o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.AllArchives(bg, mustProvider(t, "example.com/acme/alpha"))
			t.Logf("error: %v", err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "mirror "+srv.URL+"/: ") {
				t.Errorf("error does not start by naming the mirror: %v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error does not wrap %v", tc.is)
			}
		})
	}
}

func TestFiveRedirectsAreFine(t *testing.T) {
	srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		var hop int
		fmt.Sscanf(r.URL.Query().Get("hop"), "%d", &hop)
		if hop < 5 {
			http.Redirect(w, r, fmt.Sprintf("%s?hop=%d", r.URL.Path, hop+1), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"versions":{"1.0.0":{}}}`)
	})
	if _, err := openMirror(t, srv, srv.URL+"/", nil).Versions(bg, mustProvider(t, "example.com/acme/alpha")); err != nil {
		t.Fatal(err)
	}
}

func TestSkipsWhatTheClientsSkip(t *testing.T) {
	srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/example.com/acme/alpha/index.json":
			io.WriteString(w, `{"versions":{"1.0.0":{},"v2.0.0":{},"3.0.0":true}}`)
		case "/example.com/acme/alpha/1.0.0.json":
			io.WriteString(w, `{"archives":{"linux_amd64":{"url":"a.zip"},"linux":{"url":"b.zip"},"darwin_arm64":{"url":""}}}`)
		}
	})
	m := openMirror(t, srv, srv.URL+"/", nil)
	as, err := m.AllArchives(bg, mustProvider(t, "example.com/acme/alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].Platform.String() != "linux_amd64" || len(as[0].Hashes()) != 0 {
		t.Fatalf("archives %v, want only linux_amd64 without hashes", as)
	}
	warnings := strings.Join(m.Warnings(), "\n")
	for _, want := range []string{`version "v2.0.0": must not start with "v"`, "version 3.0.0: skipped: its value is not an object", `platform "linux"`, "darwin_arm64: https://", "skipped: no url"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
}

// tokenForAnyHost gives the same token for every host.
type tokenForAnyHost string

func (t tokenForAnyHost) Token(string) (string, bool) { return string(t), true }

// TestCredentials: the token goes with the mirror's JSON requests to the
// mirror's host only; not with archive downloads, not to the host a
// redirect points to.
func TestCredentials(t *testing.T) {
	const token = "s3cret"
	zb := registrytest.ProviderZip("alpha", "1.0.0", "x")
	type seen struct{ server, path, auth string }
	var mu gosync.Mutex
	var requests []seen
	record := func(server string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, seen{server, r.URL.Path, r.Header.Get("Authorization")})
	}
	var a, b *httptest.Server
	b = tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		record("B", r)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"archives":{"linux_amd64":{"url":"%s/zips/a.zip"}}}`, a.URL)
	})
	a = tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		record("A", r)
		if strings.HasSuffix(r.URL.Path, ".json") && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "token required", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/example.com/acme/alpha/index.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"versions":{"1.0.0":{},"1.1.0":{}}}`)
		case "/example.com/acme/alpha/1.0.0.json":
			http.Redirect(w, r, b.URL+"/docs/1.0.0.json", http.StatusFound)
		case "/example.com/acme/alpha/1.1.0.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"archives":{"linux_amd64":{"url":"/zips/a.zip"}}}`)
		case "/zips/a.zip":
			w.Write(zb)
		default:
			http.NotFound(w, r)
		}
	})
	host := strings.TrimPrefix(a.URL, "https://")
	m := openMirror(t, a, a.URL+"/", backends.TokenMap{host: token})
	as, err := m.AllArchives(bg, mustProvider(t, "example.com/acme/alpha"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arc := range as {
		if f := sync.VerifyArchive(bg, m, arc, hashing.Options{}); f.Status != sync.StatusOK {
			t.Fatalf("%s: %s: %s", arc.Package, f.Status, f.Detail)
		}
	}
	want := map[seen]bool{
		{"A", "/example.com/acme/alpha/index.json", "Bearer " + token}: true,
		{"A", "/example.com/acme/alpha/1.0.0.json", "Bearer " + token}: true,
		{"A", "/example.com/acme/alpha/1.1.0.json", "Bearer " + token}: true,
		{"B", "/docs/1.0.0.json", ""}:                                  true,
		{"A", "/zips/a.zip", ""}:                                       true,
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range requests {
		if _, ok := want[r]; !ok {
			t.Errorf("unexpected request %+v (a token where none belongs?)", r)
		}
		want[r] = false
	}
	for r, missing := range want {
		if missing {
			t.Errorf("missing request %+v", r)
		}
	}
}

// A URL with no path at all means HOST/ to the clients as to tfmirror:
// nothing to warn about. A path without its slash still warns, since the
// clients then read its parent.
func TestOpenTrailingSlashWarning(t *testing.T) {
	for raw, want := range map[string]string{
		"https://mirror.example.com":          "",
		"https://mirror.example.com:8443":     "",
		"https://mirror.example.com/tf":       "would read https://mirror.example.com/ instead",
		"https://mirror.example.com/a/b":      "would read https://mirror.example.com/a/ instead",
		"https://mirror.example.com:8443/tf/": "",
	} {
		m, err := netmirror.Open(raw, netmirror.Options{})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !strings.HasSuffix(m.BaseURL(), "/") {
			t.Errorf("%s: base %s, want a trailing slash", raw, m.BaseURL())
		}
		w := strings.Join(m.Warnings(), "\n")
		switch {
		case want == "" && w != "":
			t.Errorf("%s: warned %q", raw, w)
		case want != "" && !strings.Contains(w, want):
			t.Errorf("%s: warnings %q, want %q", raw, w, want)
		}
	}
}

func TestOpenURLs(t *testing.T) {
	m, err := netmirror.Open("https://mirror.example.com/tf", netmirror.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.BaseURL() != "https://mirror.example.com/tf/" {
		t.Errorf("base %s, want the slash added", m.BaseURL())
	}
	if w := strings.Join(m.Warnings(), "\n"); !strings.Contains(w, "lacks a trailing slash") || !strings.Contains(w, "would read https://mirror.example.com/ instead") {
		t.Errorf("warnings: %q", w)
	}
	m, _ = netmirror.Open("https://mirror.example.com/tf/", netmirror.Options{})
	if len(m.Warnings()) != 0 {
		t.Errorf("warnings for a good URL: %v", m.Warnings())
	}
	for raw, want := range map[string]string{
		"http://mirror.example.com/":        "must be at an https: URL",
		"https:///path/":                    "has no host",
		"https://u:p@mirror.example.com/":   "credentials in the URL are not supported",
		"https://mirror.example.com/?a=b":   "no query or fragment",
		"https://mirror.example.com/%zz/":   "not a URL",
		"mirror.example.com/":               "must be at an https: URL",
		"https://mirror.example.com/#frag/": "no query or fragment",
	} {
		if _, err := netmirror.Open(raw, netmirror.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q): %v, want %q", raw, err, want)
		}
	}
}

func TestVersionDocumentsAreFetchedConcurrently(t *testing.T) {
	const versions = 24
	var inflight, peak atomic.Int32
	srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "index.json") {
			var vs []string
			for i := range versions {
				vs = append(vs, fmt.Sprintf(`"1.0.%d":{}`, i))
			}
			io.WriteString(w, `{"versions":{`+strings.Join(vs, ",")+`}}`)
			return
		}
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		io.WriteString(w, `{"archives":{"linux_amd64":{"url":"a.zip"}}}`)
	})
	m := openMirror(t, srv, srv.URL+"/", nil)
	start := time.Now()
	as, err := m.AllArchives(bg, mustProvider(t, "example.com/acme/alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != versions {
		t.Fatalf("%d archives, want %d", len(as), versions)
	}
	if p := peak.Load(); p < 2 || p > netmirror.DefaultConcurrency {
		t.Errorf("peak concurrency %d, want 2..%d", p, netmirror.DefaultConcurrency)
	}
	t.Logf("%d version documents in %s (one at a time: at least %s)", versions, time.Since(start), versions*30*time.Millisecond)
	if as[0].Version.String() != "1.0.23" {
		t.Errorf("first archive %s, want newest version first", as[0].Package)
	}
}

func TestStalledDownloadTimesOut(t *testing.T) {
	srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("PK"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	m, err := netmirror.Open(srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{HTTP: srv.Client(), Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	p := mustProvider(t, "example.com/acme/alpha")
	rc, err := m.Open(bg, backends.Archive{Package: backends.Package{Provider: p, Version: mustVersion(t, "1.0.0")}, Location: srv.URL + "/a.zip"})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	start := time.Now()
	_, err = io.ReadAll(rc)
	if err == nil || !strings.Contains(err.Error(), "no data for 200ms") || !isTransient(err) {
		t.Fatalf("stalled download: %v, want a transient 'no data for 200ms'", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("the stall was not cut short")
	}
}

func isTransient(err error) bool {
	var t interface{ Transient() bool }
	return errors.As(err, &t) && t.Transient()
}

// TestSelectedVersionsOnly: a version constraint reads only the documents of
// the versions it selects.
func TestSelectedVersionsOnly(t *testing.T) {
	var docs atomic.Int32
	srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "index.json") {
			io.WriteString(w, `{"versions":{"1.0.0":{},"1.1.0":{},"1.2.0":{},"2.0.0":{}}}`)
			return
		}
		docs.Add(1)
		io.WriteString(w, `{"archives":{"linux_amd64":{"url":"a.zip"}}}`)
	})
	m := openMirror(t, srv, srv.URL+"/", nil)
	c, _ := backends.ParseVersionConstraint("~> 1.1")
	as, err := sync.Selection{Versions: c}.ArchivesOf(bg, m, mustProvider(t, "example.com/acme/alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Version.String() != "1.2.0" || as[1].Version.String() != "1.1.0" {
		t.Fatalf("archives %v", as)
	}
	if n := docs.Load(); n != 2 {
		t.Errorf("%d version documents read, want 2", n)
	}
}

// TestTrustDataStaysOnHTTPS: an index or version document, or an archive,
// that a redirect sends from https to plain http is refused, with an error
// naming both URLs; the plain server, which would serve a perfectly good
// document, is never asked.
func TestTrustDataStaysOnHTTPS(t *testing.T) {
	zb := registrytest.ProviderZip("alpha", "1.0.0", "x")
	var plainHits gosync.Map
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Store(r.URL.Path, true)
		switch path.Base(r.URL.Path) {
		case "index.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"versions":{"1.0.0":{}}}`)
		case "1.0.0.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"archives":{"linux_amd64":{"url":"/zips/a.zip"}}}`)
		default:
			w.Write(zb)
		}
	}))
	t.Cleanup(plain.Close)
	for _, name := range []string{"index.json", "1.0.0.json", "a.zip"} {
		t.Run(name, func(t *testing.T) {
			srv := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
				if path.Base(r.URL.Path) == name {
					http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
					return
				}
				switch path.Base(r.URL.Path) {
				case "index.json":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"versions":{"1.0.0":{}}}`)
				case "1.0.0.json":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"archives":{"linux_amd64":{"url":"/zips/a.zip"}}}`)
				default:
					w.Write(zb)
				}
			})
			m := openMirror(t, srv, srv.URL+"/", nil)
			as, err := m.AllArchives(bg, mustProvider(t, "example.com/acme/alpha"))
			detail := ""
			if err == nil {
				f := sync.VerifyArchive(bg, m, as[0], hashing.Options{})
				if f.Status == sync.StatusOK {
					t.Fatalf("%s over plain http was used", name)
				}
				detail = f.Detail
			} else {
				detail = err.Error()
			}
			want := "redirects to " + plain.URL + "/"
			if !strings.Contains(detail, want) || !strings.Contains(detail, "refusing to leave https for plain http") || !strings.Contains(detail, srv.URL+"/") {
				t.Errorf("error %q, want it to name both URLs and refuse", detail)
			}
			plainHits.Range(func(k, _ any) bool {
				t.Errorf("the plain server was asked for %s", k)
				plainHits.Delete(k)
				return true
			})
		})
	}
}
