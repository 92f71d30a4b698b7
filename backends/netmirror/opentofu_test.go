package netmirror_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// openTofuMirrorHandler is OpenTofu's own network mirror fixture,
// testHTTPMirrorSourceHandler in internal/getproviders/
// http_mirror_source_test.go (v1.12), as it is: a bearer token required,
// media types with parameters, placeholder hashes and an unknown scheme,
// redirects whose targets relative URLs resolve against, a redirect loop,
// and a failing provider.
func openTofuMirrorHandler(resp http.ResponseWriter, req *http.Request) {
	if auth := req.Header.Get("authorization"); auth != "Bearer placeholder-token" {
		resp.WriteHeader(401)
		fmt.Fprintln(resp, "incorrect auth token")
		return
	}
	switch req.URL.Path {
	case "/terraform.io/test/exists/index.json":
		resp.Header().Add("Content-Type", "application/json; ignored=yes")
		fmt.Fprint(resp, `{"versions": {"1.0.0": {}, "1.0.1": {}, "1.0.2-beta.1": {}}}`)
	case "/terraform.io/test/fails/index.json", "/terraform.io/test/fails/1.0.0.json":
		resp.WriteHeader(500)
		fmt.Fprint(resp, "server error")
	case "/terraform.io/test/exists/1.0.0.json":
		resp.Header().Add("Content-Type", "application/json; ignored=yes")
		fmt.Fprint(resp, `{"archives": {"tos_m68k": {"url": "terraform-provider-test_v1.0.0_tos_m68k.zip",
			"hashes": ["h1:placeholder-hash", "h0:unacceptable-hash"]}}}`)
	case "/terraform.io/test/exists/1.0.1.json":
		resp.Header().Add("Content-Type", "application/json; ignored=yes")
		fmt.Fprint(resp, `{"archives": {"tos_m68k": {"url": "terraform-provider-test_v1.0.1_tos_m68k.zip"}}}`)
	case "/terraform.io/test/exists/1.0.2-beta.1.json":
		resp.Header().Add("Content-Type", "application/json; ignored=yes")
		fmt.Fprint(resp, `{"archives": {}}`)
	case "/terraform.io/test/redirects/index.json":
		resp.Header().Add("location", "/redirect-target/index.json")
		resp.WriteHeader(301)
	case "/redirect-target/index.json":
		resp.Header().Add("Content-Type", "application/json")
		fmt.Fprint(resp, `{"versions": {"1.0.0": {}}}`)
	case "/terraform.io/test/redirects/1.0.0.json":
		resp.Header().Add("location", "/redirect-target/1.0.0.json")
		resp.WriteHeader(301)
	case "/redirect-target/1.0.0.json":
		resp.Header().Add("Content-Type", "application/json")
		fmt.Fprint(resp, `{"archives": {"tos_m68k": {"url": "terraform-provider-test.zip"}}}`)
	case "/terraform.io/test/redirect-loop/index.json":
		resp.Header().Add("location", req.URL.Path)
		resp.WriteHeader(301)
	default:
		resp.WriteHeader(404)
		fmt.Fprintln(resp, "not found")
	}
}

// TestOpenTofuMirrorFixture reads OpenTofu's fixture and gets what
// OpenTofu's TestHTTPMirrorSource gets: the same versions, the same
// packages at the same URLs with the same hashes (placeholders and unknown
// schemes kept: they are what the mirror states, and simply never match),
// and errors where OpenTofu errs.
func TestOpenTofuMirrorFixture(t *testing.T) {
	srv := tlsServer(t, openTofuMirrorHandler)
	host := strings.TrimPrefix(srv.URL, "https://")
	m := openMirror(t, srv, srv.URL+"/", backends.TokenMap{host: "placeholder-token"})
	exists := mustProvider(t, "terraform.io/test/exists")

	vs, err := m.Versions(bg, exists)
	if got := fmt.Sprint(vs); err != nil || got != "[1.0.2-beta.1 1.0.1 1.0.0]" {
		t.Errorf("Versions(exists) = %s, %v", got, err)
	}
	for _, c := range []struct {
		provider, version string
		url               string
		hashes            []hashing.Hash
	}{
		{"terraform.io/test/exists", "1.0.0", srv.URL + "/terraform.io/test/exists/terraform-provider-test_v1.0.0_tos_m68k.zip", []hashing.Hash{"h1:placeholder-hash", "h0:unacceptable-hash"}},
		{"terraform.io/test/exists", "1.0.1", srv.URL + "/terraform.io/test/exists/terraform-provider-test_v1.0.1_tos_m68k.zip", nil},
		{"terraform.io/test/redirects", "1.0.0", srv.URL + "/redirect-target/terraform-provider-test.zip", nil},
	} {
		p := mustProvider(t, c.provider)
		v, _ := backends.ParseVersion(c.version)
		as, err := m.Archives(bg, p, v)
		if err != nil || len(as) != 1 {
			t.Errorf("Archives(%s %s) = %v, %v", p, v, as, err)
			continue
		}
		a := as[0]
		var stated []hashing.Hash
		for _, ev := range a.Evidence {
			stated = append(stated, ev.Hashes...)
		}
		if a.Platform.String() != "tos_m68k" || a.Location != c.url || fmt.Sprint(stated) != fmt.Sprint(c.hashes) {
			t.Errorf("%s %s: got %s at %s stating %v; want tos_m68k at %s stating %v", p, v, a.Platform, a.Location, stated, c.url, c.hashes)
		}
	}
	v, _ := backends.ParseVersion("1.0.2-beta.1")
	if as, err := m.Archives(bg, exists, v); err != nil || len(as) != 0 {
		t.Errorf("Archives(1.0.2-beta.1) = %v, %v; want none (OpenTofu: platform not supported)", as, err)
	}
	if vs, err := m.Versions(bg, mustProvider(t, "terraform.io/test/redirects")); err != nil || fmt.Sprint(vs) != "[1.0.0]" {
		t.Errorf("Versions(redirects) = %v, %v", vs, err)
	}
	if _, err := m.Versions(bg, mustProvider(t, "terraform.io/test/missing")); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("Versions(missing) = %v, want not found", err)
	}
	for _, p := range []string{"terraform.io/test/fails", "terraform.io/test/redirect-loop"} {
		if _, err := m.Versions(bg, mustProvider(t, p)); err == nil || !strings.Contains(err.Error(), host) {
			t.Errorf("Versions(%s) = %v, want an error naming the mirror", p, err)
		}
	}
	anon := openMirror(t, srv, srv.URL+"/", nil)
	if _, err := anon.Versions(bg, exists); !errors.Is(err, backends.ErrUnauthorized) {
		t.Errorf("Versions without the token = %v, want unauthorized", err)
	}
}
