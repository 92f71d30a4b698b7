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

// serveSigned answers a version document with its relative archive URLs
// signed for client.
func (a *Auth) serveSigned(next http.Handler, w http.ResponseWriter, r *http.Request, client string) {
	s := &signing{ResponseWriter: w}
	next.ServeHTTP(s, r)
	body := s.body.Bytes()
	var doc struct {
		Archives map[string]map[string]any `json:"archives"`
	}
	if s.status == http.StatusOK && json.Unmarshal(body, &doc) == nil && doc.Archives != nil {
		exp := time.Now().Add(SignedFor).Unix()
		for _, arch := range doc.Archives {
			u, ok := arch["url"].(string)
			ref, err := url.Parse(u)
			if !ok || err != nil || ref.IsAbs() || ref.Host != "" || ref.RawQuery != "" {
				continue
			}
			zipPath := path.Join(path.Dir(r.URL.Path), ref.Path)
			q := url.Values{paramExp: {strconv.FormatInt(exp, 10)}, paramClient: {client}, paramSig: {a.sign(zipPath, client, exp)}}
			arch["url"] = u + "?" + q.Encode()
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
