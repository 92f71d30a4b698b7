package netmirror_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestHandlerDocuments(t *testing.T) {
	dir := t.TempDir()
	zips := writeMirror(t, dir,
		pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"},
		pkg{"example.com", "acme", "alpha", "1.0.0", "darwin_arm64"},
		pkg{"example.com", "acme", "alpha", "1.1.0", "linux_amd64"},
	)
	// An unpacked-only version is not served: the protocol serves zips.
	unpacked := filepath.Join(dir, "example.com", "acme", "alpha", "2.0.0", "linux_amd64")
	if err := os.MkdirAll(unpacked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unpacked, "terraform-provider-alpha"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv, _, logs := serveDir(t, dir)

	resp, body := get(t, srv, "/example.com/acme/alpha/index.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("index.json: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	if want := "{\n  \"versions\": {\n    \"1.0.0\": {},\n    \"1.1.0\": {}\n  }\n}"; body != want {
		t.Fatalf("index.json =\n%s\nwant\n%s", body, want)
	}

	resp, body = get(t, srv, "/example.com/acme/alpha/1.0.0.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("1.0.0.json: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	var doc struct {
		Archives map[string]struct {
			Hashes []string `json:"hashes"`
			URL    string   `json:"url"`
		} `json:"archives"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Archives) != 2 {
		t.Fatalf("1.0.0.json lists %d platforms, want 2:\n%s", len(doc.Archives), body)
	}
	for plat, a := range doc.Archives {
		p := pkg{"example.com", "acme", "alpha", "1.0.0", plat}
		sums := sumsOf(t, zips[p])
		if want := []string{string(sums.H1), string(sums.ZH)}; !slices.Equal(a.Hashes, want) {
			t.Errorf("%s: hashes %v, want %v", plat, a.Hashes, want)
		}
		if want := filepath.Base(p.path(dir)); a.URL != want {
			t.Errorf("%s: url %q, want %q", plat, a.URL, want)
		}
		resp, zb := get(t, srv, "/example.com/acme/alpha/"+a.URL)
		if resp.StatusCode != 200 || zb != string(zips[p]) || resp.Header.Get("Content-Type") != "application/zip" {
			t.Errorf("%s: GET %s: %s, %d bytes, %q", plat, a.URL, resp.Status, len(zb), resp.Header.Get("Content-Type"))
		}
	}
	if resp, _ := get(t, srv, "/example.com/acme/alpha/2.0.0.json"); resp.StatusCode != 404 {
		t.Errorf("unpacked-only version: %s, want 404", resp.Status)
	}

	// A Range request works (clients may resume).
	req, _ := http.NewRequest("GET", srv.URL+"/example.com/acme/alpha/terraform-provider-alpha_1.1.0_linux_amd64.zip", nil)
	req.Header.Set("Range", "bytes=0-1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(b) != "PK" {
		t.Errorf("range: %s %q", resp.Status, b)
	}

	line := regexp.MustCompile(`(?m)^GET /example.com/acme/alpha/index.json 200 \d+ \S+$`)
	if !line.MatchString(logs.String()) {
		t.Errorf("no log line for the index request:\n%s", logs)
	}
	if !regexp.MustCompile(`(?m)^GET /example.com/acme/alpha/2.0.0.json 404 \d+ \S+$`).MatchString(logs.String()) {
		t.Errorf("no log line for the 404:\n%s", logs)
	}
}

func TestHandlerHonoursTheDirectorysOwnIndex(t *testing.T) {
	dir := t.TempDir()
	good := pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"}
	bad := pkg{"example.com", "acme", "alpha", "1.1.0", "linux_amd64"}
	zips := writeMirror(t, dir, good, bad)
	goodSums := sumsOf(t, zips[good])
	provDir := filepath.Dir(good.path(dir))
	if err := os.WriteFile(filepath.Join(provDir, "index.json"), []byte(`{"versions":{"1.0.0":{},"1.1.0":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// providers mirror (<= 1.11) wrote only h1; it agrees with the zip.
	if err := os.WriteFile(filepath.Join(provDir, "1.0.0.json"), []byte(`{"archives":{"linux_amd64":{"hashes":["`+string(goodSums.H1)+`"],"url":"`+filepath.Base(good.path(dir))+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The 1.1.0 zip was swapped after its index was written.
	stated := sumsOf(t, registrytest.ProviderZip("alpha", "1.1.0", "the original"))
	if err := os.WriteFile(filepath.Join(provDir, "1.1.0.json"), []byte(`{"archives":{"linux_amd64":{"hashes":["`+string(stated.H1)+`","`+string(stated.ZH)+`"],"url":"`+filepath.Base(bad.path(dir))+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}

	srv, _, logs := serveDir(t, dir)
	m := openMirror(t, srv, srv.URL+"/", nil)
	p := mustProvider(t, "example.com/acme/alpha")

	as, err := m.Archives(bg, p, mustVersion(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(as[0].Hashes(), goodSums.List()) {
		t.Errorf("agreeing index: served %v, want the stated h1 with the computed zh %v", as[0].Hashes(), goodSums.List())
	}
	as, err = m.Archives(bg, p, mustVersion(t, "1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(as[0].Hashes(), stated.List()) {
		t.Errorf("contradicted index: served %v, want only the stated %v", as[0].Hashes(), stated.List())
	}
	if !strings.Contains(logs.String(), "does not match the mirror's own index") {
		t.Errorf("no warning logged:\n%s", logs)
	}
	// So a client (here, verify) refuses the swapped zip.
	if f := sync.VerifyArchive(bg, m, as[0], hashing.Options{}); f.Status != sync.StatusMismatch {
		t.Errorf("verify of the swapped zip: %s: %s, want mismatch", f.Status, f.Detail)
	}
}

func TestHandlerRecomputesChangedZips(t *testing.T) {
	dir := t.TempDir()
	p := pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"}
	writeMirror(t, dir, p)
	srv, _, _ := serveDir(t, dir)
	m := openMirror(t, srv, srv.URL+"/", nil)
	prov, v := mustProvider(t, "example.com/acme/alpha"), mustVersion(t, "1.0.0")
	first, err := m.Archives(bg, prov, v)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := m.Archives(bg, prov, v)
	if !slices.Equal(first[0].Hashes(), again[0].Hashes()) {
		t.Fatal("hashes changed without the zip changing")
	}
	replacement := registrytest.ProviderZip("alpha", "1.0.0", "a rebuilt release")
	if err := os.WriteFile(p.path(dir), replacement, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(p.path(dir), later, later); err != nil {
		t.Fatal(err)
	}
	after, _ := m.Archives(bg, prov, v)
	if want := sumsOf(t, replacement).List(); !slices.Equal(after[0].Hashes(), want) {
		t.Fatalf("after replacing the zip: %v, want %v", after[0].Hashes(), want)
	}
}

func TestHandlerRefusesWhatItShouldNotServe(t *testing.T) {
	dir := t.TempDir()
	writeMirror(t, dir, pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"})
	// A secret beside the mirror, and a symlink in the mirror pointing at it
	// under an archive's name.
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.zip")
	if err := os.WriteFile(secret, registrytest.ProviderZip("alpha", "9.0.0", "secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "example.com", "acme", "alpha", "terraform-provider-alpha_9.0.0_linux_amd64.zip")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "example.com", "acme", "alpha", "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "example.com", "acme", "alpha", ".terraform-provider-alpha_1.0.0_linux_amd64.zip"), []byte("staging"), 0o644); err != nil {
		t.Fatal(err)
	}

	srv, h, _ := serveDir(t, dir)
	cases := []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 404},
		{"GET", "/example.com", 404},
		{"GET", "/example.com/acme/alpha", 404},
		{"GET", "/example.com/acme/alpha/", 404},
		{"GET", "/example.com/acme/alpha/9.9.9.json", 404},
		{"GET", "/example.com/acme/alpha/v1.0.0.json", 404},
		{"GET", "/example.com/acme/nope/index.json", 404},
		{"GET", "/other.example/acme/alpha/index.json", 404},
		{"GET", "/example.com/acme/alpha/notes.txt", 404},
		{"GET", "/example.com/acme/alpha/.terraform-provider-alpha_1.0.0_linux_amd64.zip", 404},
		{"GET", "/example.com/acme/alpha/terraform-provider-alpha_9.0.0_linux_amd64.zip", 404},
		{"GET", "/example.com/acme/alpha/9.0.0.json", 404},
		{"GET", "/example.com/acme/alpha/../../../../etc/passwd", 404},
		{"GET", "/example.com/acme/alpha/..%2f..%2f..%2fsecret.zip", 404},
		{"GET", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", 404},
		{"GET", "/example.com/acme/..%2falpha/index.json", 404},
		{"GET", "/example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip%00", 404},
		{"GET", "/example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip/..", 404},
		{"GET", "//example.com/acme/alpha/index.json", 404},
		{"POST", "/example.com/acme/alpha/index.json", 405},
		{"DELETE", "/example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip", 405},
		{"HEAD", "/example.com/acme/alpha/index.json", 200},
		{"GET", "/example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip", 200},
	}
	for _, tc := range cases {
		// Straight to the handler: http.Server passes paths through
		// uncleaned, so this is what a hostile client can make it see.
		req := httptest.NewRequest(tc.method, "https://127.0.0.1"+tc.path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
		if rec.Code == 200 && tc.method == "GET" && strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s %s: served the secret", tc.method, tc.path)
		}
	}
	// The index does not offer the version behind the symlink.
	_, body := get(t, srv, "/example.com/acme/alpha/index.json")
	if strings.Contains(body, "9.0.0") {
		t.Errorf("index lists the symlinked version:\n%s", body)
	}
}
