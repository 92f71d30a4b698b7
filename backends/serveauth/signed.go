package serveauth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/backends/modules"
)

// Neither client sends its token when it downloads an archive (only for
// the documents), so a version document answered to a token lists its
// archives at signed URLs: the zip's path, a deadline and the token's
// name, under an HMAC whose key is derived from the tokens file (replicas
// reading the same file accept each other's URLs). A signed URL reads
// that one zip until its deadline.
const (
	// SignedFor is how long a signed archive URL stays valid.
	SignedFor = time.Hour

	paramExp    = "tfmirror-exp"
	paramClient = "tfmirror-client"
	paramSig    = "tfmirror-sig"
)

func (a *Auth) sign(zipPath, client string, exp int64) string {
	a.mu.RLock()
	key := a.key
	a.mu.RUnlock()
	m := hmac.New(sha256.New, key)
	m.Write([]byte(zipPath + "\x00" + client + "\x00" + strconv.FormatInt(exp, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// signedClient returns the client a request's signed URL was made for,
// when its signature holds and its deadline has not passed.
func (a *Auth) signedClient(r *http.Request) (string, bool) {
	q := r.URL.Query()
	sig, client := q.Get(paramSig), q.Get(paramClient)
	exp, err := strconv.ParseInt(q.Get(paramExp), 10, 64)
	if sig == "" || err != nil || time.Now().Unix() > exp {
		return "", false
	}
	want := a.sign(r.URL.Path, client, exp)
	return client, hmac.Equal([]byte(sig), []byte(want))
}

// providersV1 is where serve answers the Provider Registry Protocol
// (regserve.ProvidersPrefix).
const providersV1 = "/v1/providers/"

// signable reports whether a signed URL may read p: an archive, or the
// SHA256SUMS and its signature providers.v1 names in a download document
// (which the clients fetch without their token too).
func signable(p string) bool {
	return strings.HasSuffix(p, ".zip") ||
		strings.HasPrefix(p, providersV1) && (strings.HasSuffix(p, "/SHA256SUMS") || strings.HasSuffix(p, "/SHA256SUMS.sig"))
}

// downloadDoc reports whether p is a providers.v1 download document
// (/v1/providers/HOST/NS/TYPE/VERSION/download/OS/ARCH).
func downloadDoc(p string) bool {
	rest, ok := strings.CutPrefix(p, providersV1)
	parts := strings.Split(rest, "/")
	return ok && len(parts) == 7 && parts[4] == "download"
}

// moduleDownload reports whether p is a modules.v1 download request
// (/v1/modules/HOST/NS/NAME/SYSTEM/VERSION/download), whose answer names
// the package in X-Terraform-Get.
func moduleDownload(p string) bool {
	rest, ok := strings.CutPrefix(p, "/v1/modules/")
	parts := strings.Split(rest, "/")
	return ok && len(parts) == 6 && parts[5] == "download"
}

// signPackage signs X-Terraform-Get where it names a package zip this
// server serves (https://HOST/...zip, HOST the request's, a //subdir
// kept after it): neither client sends its token for the package.
func (a *Auth) signPackage(h http.Header, r *http.Request, client string, exp int64) {
	get := h.Get("X-Terraform-Get")
	pkg, sub := modules.SplitSubdir(get)
	u, err := url.Parse(pkg)
	if get == "" || err != nil || u.Host != r.Host || u.RawQuery != "" || !strings.HasSuffix(u.Path, ".zip") {
		return
	}
	q := url.Values{paramExp: {strconv.FormatInt(exp, 10)}, paramClient: {client}, paramSig: {a.sign(u.Path, client, exp)}}
	h.Set("X-Terraform-Get", modules.JoinSubdir(pkg+"?"+q.Encode(), sub))
}

// versionDoc reports whether path is a network mirror's version document
// (/HOST/NS/TYPE/VERSION.json).
func versionDoc(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return len(parts) == 4 && strings.HasSuffix(p, ".json") && parts[3] != "index.json"
}

// signing holds a version document back, to list its archives at signed
// URLs for client.
type signing struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (s *signing) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

func (s *signing) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.body.Write(b)
}

// signURL returns u, a URL of this server relative to the request r
// answers, signed for client until exp; other URLs are left as they are.
func (a *Auth) signURL(r *http.Request, u any, client string, exp int64) any {
	s, ok := u.(string)
	ref, err := url.Parse(s)
	if !ok || err != nil || ref.IsAbs() || ref.Host != "" || ref.RawQuery != "" {
		return u
	}
	p := path.Clean(r.URL.ResolveReference(ref).Path)
	q := url.Values{paramExp: {strconv.FormatInt(exp, 10)}, paramClient: {client}, paramSig: {a.sign(p, client, exp)}}
	return s + "?" + q.Encode()
}

// serveSigned answers a network mirror's version document with its
// relative archive URLs signed for client, a providers.v1 download
// document with its archive, SHA256SUMS and signature URLs signed, and a
// modules.v1 download with the package it names signed.
func (a *Auth) serveSigned(next http.Handler, w http.ResponseWriter, r *http.Request, client string) {
	s := &signing{ResponseWriter: w}
	next.ServeHTTP(s, r)
	body := s.body.Bytes()
	exp := time.Now().Add(SignedFor).Unix()
	if moduleDownload(r.URL.Path) {
		a.signPackage(w.Header(), r, client, exp)
	}
	var doc map[string]any
	if s.status == http.StatusOK && json.Unmarshal(body, &doc) == nil {
		if archives, ok := doc["archives"].(map[string]any); ok {
			for _, arch := range archives {
				if m, ok := arch.(map[string]any); ok {
					m["url"] = a.signURL(r, m["url"], client, exp)
				}
			}
		}
		if downloadDoc(r.URL.Path) {
			for _, k := range []string{"download_url", "shasums_url", "shasums_signature_url"} {
				doc[k] = a.signURL(r, doc[k], client, exp)
			}
		}
		if b, err := json.MarshalIndent(doc, "", "  "); err == nil {
			body = append(b, '\n')
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if s.status == 0 {
		s.status = http.StatusOK
	}
	w.WriteHeader(s.status)
	_, _ = w.Write(body) // a client gone: no one left to tell
}
