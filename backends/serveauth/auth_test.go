package serveauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/serveauth"
)

func writeTokens(t *testing.T, file string, entries ...string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(strings.Join(entries, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadedAuth is an Auth whose tokens file holds entries, loaded.
func loadedAuth(t *testing.T, entries ...string) *serveauth.Auth {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens.hcl")
	writeTokens(t, file, entries...)
	a := &serveauth.Auth{Path: file}
	if _, err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	return a
}

func entry(name, token string, provs ...string) string {
	b, _ := json.Marshal(provs)
	return "token \"" + name + "\" {\n  sha256 = \"" + serveauth.HashToken(token) + "\"\n  providers = " + string(b) + "\n}\n"
}

// The served handler: a version document listing a relative archive URL,
// the archive, and anything else; each names the client it was served to.
func served() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Client", backends.ClientOf(r.Context()))
		if strings.HasSuffix(r.URL.Path, "1.0.0.json") {
			io.WriteString(w, `{"archives":{"linux_amd64":{"hashes":["zh:00"],"url":"terraform-provider-alpha_1.0.0_linux_amd64.zip"}}}`)
			return
		}
		io.WriteString(w, "ok")
	})
}

func do(h http.Handler, path, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Tokens are checked by hash; a token reads what its patterns name (403
// otherwise), nothing without one (401 with WWW-Authenticate); the
// version document's archive URLs are signed for the token, and a signed
// URL reads that zip alone, not once tampered with; a reload (SIGHUP)
// takes a token away, and a broken file keeps the tokens in use.
func TestTokensPatternsSignedURLsAndReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.hcl")
	writeTokens(t, file, entry("ci", "s3cret", "example.com/acme/*"), entry("ops", "other", "*/*/*"))
	var denied []string
	a := &serveauth.Auth{Path: file, Denied: func(r *http.Request, status int, client string) {
		denied = append(denied, r.URL.Path+" "+client)
	}}
	if n, err := a.Reload(); err != nil || n != 2 {
		t.Fatalf("Reload: %d %v", n, err)
	}
	h := a.Handler(served())
	doc := "/example.com/acme/alpha/1.0.0.json"
	for _, c := range []struct {
		path, token string
		code        int
		client      string
	}{
		{doc, "s3cret", 200, "ci"},
		{"/EXAMPLE.com/acme/alpha/index.json", "s3cret", 200, "ci"},
		{"/example.com/other/alpha/index.json", "s3cret", 403, ""},
		{"/v1/providers/example.com/other/alpha/versions", "s3cret", 403, ""},
		{doc, "", 401, ""},
		{doc, "wrong", 401, ""},
		{"/healthz", "", 200, ""},
		{"/metrics", "other", 200, "ops"},
	} {
		rec := do(h, c.path, c.token)
		if rec.Code != c.code || rec.Header().Get("X-Client") != c.client {
			t.Errorf("%s with %q: %d client %q, want %d %q (%s)", c.path, c.token, rec.Code, rec.Header().Get("X-Client"), c.code, c.client, rec.Body)
		}
		if rec.Code == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: a 401 without WWW-Authenticate: Bearer", c.path)
		}
		if strings.Contains(rec.Body.String(), "s3cret") {
			t.Errorf("%s: the answer holds the token: %s", c.path, rec.Body)
		}
	}
	if len(denied) != 4 {
		t.Errorf("denied %v, want the 4 refusals", denied)
	}

	var got struct {
		Archives map[string]struct{ URL string }
	}
	if err := json.Unmarshal(do(h, doc, "s3cret").Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding got: %v", err)
	}
	signed := got.Archives["linux_amd64"].URL
	if !strings.Contains(signed, "tfmirror-sig=") {
		t.Fatalf("the archive URL is not signed: %q", signed)
	}
	zip := "/example.com/acme/alpha/" + signed
	if rec := do(h, zip, ""); rec.Code != 200 || rec.Header().Get("X-Client") != "ci" {
		t.Errorf("the signed URL without a token: %d client %q", rec.Code, rec.Header().Get("X-Client"))
	}
	u, _ := url.Parse(zip)
	q := u.Query()
	q.Set("tfmirror-client", "ops")
	for name, p := range map[string]string{
		"another zip":    strings.Replace(zip, "linux_amd64.zip", "darwin_arm64.zip", 1),
		"another client": u.Path + "?" + q.Encode(),
		"no signature":   u.Path,
	} {
		if rec := do(h, p, ""); rec.Code != 401 {
			t.Errorf("%s: %d, want 401", name, rec.Code)
		}
	}

	writeTokens(t, file, entry("ops", "other", "*/*/*"))
	if _, err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if rec := do(h, doc, "s3cret"); rec.Code != 401 {
		t.Errorf("a token taken away by the reload: %d", rec.Code)
	}
	writeTokens(t, file, "token {")
	if _, err := a.Reload(); err == nil || !strings.Contains(err.Error(), "tokens.hcl") {
		t.Errorf("a broken file: %v", err)
	}
	if rec := do(h, doc, "other"); rec.Code != 200 {
		t.Errorf("the tokens in use after a failed reload: %d", rec.Code)
	}
}

func TestLoadRefusesWhatIsNotAHash(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.hcl")
	writeTokens(t, file, "token \"ci\" {\n  sha256 = \"my-plain-token\"\n}\n")
	if _, err := serveauth.Load(file); err == nil || strings.Contains(err.Error(), "my-plain-token") || !strings.Contains(err.Error(), "sha256sum") {
		t.Errorf("a token in place of its hash: %v", err)
	}
}

// providers.v1's download document answered to a token names its archive,
// SHA256SUMS and signature at URLs signed for the token (neither client
// sends its token for them); each reads its own path alone.
func TestDownloadDocumentURLsAreSigned(t *testing.T) {
	a := loadedAuth(t, entry("ci", "s3cret", "example.com/acme/*"))
	base := "/v1/providers/example.com/acme/alpha/1.0.0/"
	h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Client", backends.ClientOf(r.Context()))
		if strings.Contains(r.URL.Path, "/download/") {
			io.WriteString(w, `{"os":"linux","arch":"amd64","download_url":"/example.com/acme/alpha/terraform-provider-alpha_1.0.0_linux_amd64.zip",`+
				`"shasums_url":"`+base+`SHA256SUMS","shasums_signature_url":"`+base+`SHA256SUMS.sig","shasum":"00"}`)
			return
		}
		io.WriteString(w, "ok")
	}))
	rec := do(h, base+"download/linux/amd64", "s3cret")
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != 200 || doc["shasum"] != "00" {
		t.Fatalf("download document: %d %v %s", rec.Code, err, rec.Body)
	}
	for _, k := range []string{"download_url", "shasums_url", "shasums_signature_url"} {
		u, _ := doc[k].(string)
		if !strings.Contains(u, "tfmirror-sig=") {
			t.Errorf("%s is not signed: %q", k, u)
			continue
		}
		if rec := do(h, u, ""); rec.Code != 200 || rec.Header().Get("X-Client") != "ci" {
			t.Errorf("%s without a token: %d client %q", k, rec.Code, rec.Header().Get("X-Client"))
		}
	}
	sums, _ := doc["shasums_url"].(string)
	if rec := do(h, strings.Replace(sums, "/SHA256SUMS?", "/SHA256SUMS.sig?", 1), ""); rec.Code != 401 {
		t.Errorf("the SHA256SUMS URL's signature reads another file: %d", rec.Code)
	}
	if rec := do(h, base+"versions?"+strings.SplitN(sums, "?", 2)[1], ""); rec.Code != 401 {
		t.Errorf("a signature on a path that is no archive or SHA256SUMS: %d", rec.Code)
	}
}

// modules.v1's download answered to a token names the package this
// server serves at a URL signed for the token, its //subdir kept; an
// oci:// location or another host's URL is left as it is.
func TestModulePackageURLIsSigned(t *testing.T) {
	a := loadedAuth(t, "token \"ci\" {\n  sha256 = \""+serveauth.HashToken("s3cret")+"\"\n  modules = [\"example.com/acme/*/*\"]\n}\n")
	get := ""
	h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Client", backends.ClientOf(r.Context()))
		if strings.HasSuffix(r.URL.Path, "/download") {
			w.Header().Set("X-Terraform-Get", get)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		io.WriteString(w, "zip")
	}))
	dl := "/v1/modules/example.com/acme/net/aws/1.0.0/download"
	pkg := "/v1/modules/example.com/acme/net/aws/1.0.0/package.zip"
	get = "https://example.com" + pkg + "//modules/sub" // httptest's requests are for example.com
	rec := do(h, dl, "s3cret")
	signed := rec.Header().Get("X-Terraform-Get")
	u, err := url.Parse(signed)
	if rec.Code != 204 || err != nil || u.Path != pkg+"//modules/sub" || u.Query().Get("tfmirror-sig") == "" {
		t.Fatalf("download: %d, X-Terraform-Get %q", rec.Code, signed)
	}
	if rec := do(h, pkg+"?"+u.RawQuery, ""); rec.Code != 200 || rec.Header().Get("X-Client") != "ci" {
		t.Errorf("the signed package URL without a token: %d client %q", rec.Code, rec.Header().Get("X-Client"))
	}
	if rec := do(h, strings.Replace(pkg, "net", "vpc", 1)+"?"+u.RawQuery, ""); rec.Code != 401 {
		t.Errorf("the signature read another module's package: %d", rec.Code)
	}
	for _, other := range []string{"oci://reg.example.com/mods/net?digest=sha256:00", "https://elsewhere.example.com" + pkg} {
		get = other
		if got := do(h, dl, "s3cret").Header().Get("X-Terraform-Get"); got != other {
			t.Errorf("X-Terraform-Get %q became %q", other, got)
		}
	}
}
