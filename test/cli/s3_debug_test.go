package cli

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// --debug reaches object storage: every request attempt the S3 SDK makes
// gets its line (method, URL, status, bytes, time, attempt), a request the
// SDK retries included, and neither the secret key nor a request's
// signature is ever written. A proxy in front of the store (versitygw)
// records each request's signature and answers the first read of a version
// document 503 SlowDown, as S3 does under load.
func TestCLIDebugLogsS3RequestsWithoutCredentials(t *testing.T) {
	w := newS3World(t)
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	w.must(t, "sync", sourceMirror(t, seeds), w.place("tf"))

	target, err := url.Parse(w.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	forward.Transport = w.srv.HTTPClient().Transport
	var mu gosync.Mutex
	var signatures []string
	var slowedDown atomic.Bool
	proxy := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if _, sig, ok := strings.Cut(r.Header.Get("Authorization"), "Signature="); ok {
			mu.Lock()
			signatures = append(signatures, sig)
			mu.Unlock()
		}
		if strings.HasSuffix(r.URL.Path, "/1.0.0.json") && slowedDown.CompareAndSwap(false, true) {
			rw.Header().Set("Content-Type", "application/xml")
			rw.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(rw, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		forward.ServeHTTP(rw, r)
	}))
	defer proxy.Close()
	ca := filepath.Join(t.TempDir(), "proxy-ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw}), 0o644)
	env := append(cleanEnv(t), w.srv.Env()...)
	args := []string{"ls", w.place("tf"), "--s3-endpoint", proxy.URL, "--ca-cert", ca}

	r := run(t, env, append(args, "--debug")...)
	if r.code != 0 || !strings.Contains(r.stdout, "example.com/acme/alpha") {
		t.Fatalf("ls --debug: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	u := regexp.QuoteMeta(proxy.URL + "/" + w.bucket)
	took := `(<1ms|\d+ms|\d+(\.\d+)?s)`
	size := `\d+(\.\d)? (B|kB|MB)`
	doc := u + regexp.QuoteMeta("/tf/example.com/acme/alpha/1.0.0.json") + `(\?x-id=GetObject)?`
	for _, want := range []string{
		`debug: GET ` + u + `\?\S*list-type=2\S*prefix=tf%2F\S* -> 200, ` + size + `, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + u + regexp.QuoteMeta("/tf/example.com/acme/alpha/index.json") + `(\?x-id=GetObject)? -> 200, ` + size + `, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + doc + ` -> 503, ` + size + `, ` + took + ` \(attempt 1\)`,
		`debug: GET ` + doc + ` -> 200, ` + size + `, ` + took + ` \(attempt 2\)`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(r.stderr) {
			t.Errorf("ls --debug: no line matching\n%s\nin\n%s", want, r.stderr)
		}
	}
	mu.Lock()
	secrets := append([]string{s3test.SecretKey, "Signature=", "Authorization"}, signatures...)
	mu.Unlock()
	if len(secrets) == 3 {
		t.Fatal("the proxy saw no signed request")
	}
	for _, secret := range secrets {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("ls --debug printed %q:\n%s", secret, r.stderr)
		}
	}
	if r := run(t, env, args...); r.code != 0 || strings.Contains(r.stderr, "debug:") {
		t.Errorf("ls without --debug: exit %d\n%s", r.code, r.stderr)
	}
}
