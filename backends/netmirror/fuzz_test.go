package netmirror_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/hashing"
)

// docServer is one TLS server per fuzz target (per worker process) that
// answers every request with the document the current input holds, so the
// fuzzer drives the client's real request, size, type and parsing code.
type docServer struct {
	srv *httptest.Server
	mu  gosync.Mutex
	doc []byte
}

func newDocServer(f *testing.F) *docServer {
	d := &docServer{}
	d.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		doc := d.doc
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	f.Cleanup(d.srv.Close)
	return d
}

func (d *docServer) serve(doc []byte) {
	d.mu.Lock()
	d.doc = doc
	d.mu.Unlock()
}

func (d *docServer) mirror(t testing.TB) *netmirror.Mirror {
	m, err := netmirror.Open(d.srv.URL+"/", netmirror.Options{HTTP: httpclient.Client{
		HTTP: d.srv.Client(), Timeout: 10 * time.Second, Retries: -1, MaxDocument: 1 << 20,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var fuzzProvider = backends.Provider{Hostname: "example.com", Namespace: "acme", Type: "alpha"}

// FuzzIndexDocument: whatever index.json holds, Versions returns valid
// versions or an error naming the mirror, and never panics.
func FuzzIndexDocument(f *testing.F) {
	for _, seed := range []string{
		`{"versions":{"1.0.0":{},"2.0.0-beta.1":{},"3.0.0+build.5":{}}}`,
		`{"versions":{"v1.0.0":{},"1.0":{},"../../x":{},"1.0.0":true}}`,
		`{"versions":{}}`, `{"versions":null}`, `{}`, `[]`, `null`, ``, `{"versions":{"1.0.0":{}}`,
		`{"versions":{"1.0.0":{"x":[1,2,{"y":null}]}}, "extra": 1}`,
		"{\"versions\":{\"1.0.0\\u0000\":{}}}",
	} {
		f.Add([]byte(seed))
	}
	d := newDocServer(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		d.serve(doc)
		m := d.mirror(t)
		vs, err := m.Versions(context.Background(), fuzzProvider)
		if err != nil {
			if vs != nil {
				t.Fatalf("versions %v with error %v", vs, err)
			}
			return
		}
		for _, v := range vs {
			if _, err := backends.ParseVersion(v.String()); err != nil {
				t.Fatalf("listed version %q does not parse: %v", v, err)
			}
		}
		for i := 1; i < len(vs); i++ {
			if backends.CompareVersions(vs[i-1], vs[i]) < 0 {
				t.Fatalf("versions not newest first: %v", vs)
			}
		}
	})
}

// FuzzVersionDocument: whatever <version>.json holds, Archives returns
// packages with valid platforms, absolute http(s) URLs and parsed hashes,
// or an error; it never panics.
func FuzzVersionDocument(f *testing.F) {
	h1 := "h1:" + "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	zh := "zh:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	for _, seed := range []string{
		`{"archives":{"linux_amd64":{"url":"terraform-provider-alpha_1.0.0_linux_amd64.zip","hashes":["` + h1 + `","` + zh + `"]}}}`,
		`{"archives":{"darwin_arm64":{"url":"https://cdn.example.com/a.zip"},"windows_386":{"url":"//other.example/x.zip","hashes":[]}}}`,
		`{"archives":{"linux_amd64":{"url":"ftp://x/a.zip"},"linux":{"url":"a.zip"},"../../x_y":{"url":"a.zip"}}}`,
		`{"archives":{"linux_amd64":{"url":"a.zip","hashes":["deadbeef"]}}}`,
		`{"archives":{"linux_amd64":{"url":"%zz"}}}`, `{"archives":{"linux_amd64":{}}}`,
		`{"archives":null}`, `{}`, `{"archives":{"linux_amd64":{"url":"a.zip","hashes":"h1:x"}}}`,
	} {
		f.Add([]byte(seed))
	}
	d := newDocServer(f)
	v, err := backends.ParseVersion("1.0.0")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		d.serve(doc)
		m := d.mirror(t)
		as, err := m.Archives(context.Background(), fuzzProvider, v)
		if err != nil {
			return
		}
		seen := map[backends.Platform]bool{}
		for _, a := range as {
			if p, err := backends.ParsePlatform(a.Platform.String()); err != nil || p != a.Platform {
				t.Fatalf("listed platform %q does not parse back: %v", a.Platform, err)
			}
			if seen[a.Platform] {
				t.Fatalf("platform %s listed twice", a.Platform)
			}
			seen[a.Platform] = true
			if a.Provider != fuzzProvider || a.Version.String() != "1.0.0" || a.Layout != backends.Packed {
				t.Fatalf("archive %+v is not the package asked for", a.Package)
			}
			u, err := url.Parse(a.Location)
			if err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") {
				t.Fatalf("location %q is not an absolute http(s) URL", a.Location)
			}
			for _, ev := range a.Evidence {
				for _, h := range ev.Hashes {
					if _, err := hashing.ParseHash(string(h)); err != nil {
						t.Fatalf("hash %q does not parse: %v", h, err)
					}
				}
			}
		}
	})
}
