package cli

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/tlscert"
)

// startNginx runs Debian's nginx serving root over TLS with the
// configuration docs/publish.md gives (skipping the test where nginx is not
// installed) and returns its URL and the certificate that signs it.
func startNginx(t *testing.T, root string) (string, []byte) {
	t.Helper()
	d := t.TempDir()
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, key := writeFile(t, d, "cert.pem", string(certPEM)), writeFile(t, d, "key.pem", string(keyPEM))
	return backendtest.Nginx(t, root, cert, key, backendtest.NginxStatic), certPEM
}

// A published directory, served by nginx with the configuration
// docs/publish.md gives and no tfmirror process, installs with terraform
// init and tofu init as a network mirror; the headers are what a CDN
// needs; a second publish copies nothing.
func TestPublishedTreeInstallsThroughNginx(t *testing.T) {
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host, "windows_386"}))
	site := t.TempDir()
	if r := run(t, nil, "publish", src, site); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "2 synced") {
		t.Fatalf("publish: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	url, caPEM := startNginx(t, site)
	c := pullClient(caPEM)
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", host)
	for path, want := range map[string][2]string{
		"example.com/acme/alpha/index.json":        {"application/json", "public, max-age=60"},
		"example.com/acme/alpha/1.0.0.json":        {"application/json", "public, max-age=60"},
		"example.com/acme/alpha/" + pkg.Filename(): {"application/zip", "public, max-age=31536000, immutable"},
		"example.com/acme/alpha/.tfmirror-lock":    {"", ""},
	} {
		resp, err := c.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want[0] == "" {
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: %d, want 404 (a hidden file)", path, resp.StatusCode)
			}
			continue
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want[0] || resp.Header.Get("Cache-Control") != want[1] {
			t.Errorf("%s: %d, Content-Type %q, Cache-Control %q; want 200, %q, %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), want[0], want[1])
		}
	}
	for name, bin := range pullClients(t) {
		out, lock, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") || !strings.Contains(lock, "h1:") {
			t.Errorf("%s init from the published tree at %s: %v\n%s\n%s", name, url, err, out, lock)
		}
	}
	if r := run(t, nil, "publish", src, site); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "0 synced") || !strings.Contains(r.stdout+r.stderr, "2 already present") {
		t.Errorf("publish again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Publishing into a bucket gives every object the Content-Type and
// Cache-Control a CDN needs: archives immutable, documents for
// --index-max-age.
func TestPublishToS3SetsCacheHeaders(t *testing.T) {
	w := newS3World(t)
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host}))
	w.must(t, "publish", src, w.place("site"), "--index-max-age", "5m")
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", host)
	for key, want := range map[string][2]string{
		"site/example.com/acme/alpha/index.json":        {"application/json", "public, max-age=300"},
		"site/example.com/acme/alpha/1.0.0.json":        {"application/json", "public, max-age=300"},
		"site/example.com/acme/alpha/" + pkg.Filename(): {"application/zip", "public, max-age=31536000, immutable"},
	} {
		out, err := w.srv.Client().HeadObject(context.Background(), &s3api.HeadObjectInput{Bucket: &w.bucket, Key: aws.String(key)})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if aws.ToString(out.ContentType) != want[0] || aws.ToString(out.CacheControl) != want[1] {
			t.Errorf("%s: Content-Type %q, Cache-Control %q; want %q, %q", key, aws.ToString(out.ContentType), aws.ToString(out.CacheControl), want[0], want[1])
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"publish", src, "oci://reg.example/x"}, "want a directory or s3://"},
		{[]string{"publish", src, "https://mirror.example/"}, "want a directory or s3://"},
		{[]string{"publish", src, w.place("site"), "--index-max-age", "-1s"}, "--index-max-age -1s"},
		{[]string{"publish", src}, "publish takes PLACE and DEST"},
	} {
		if r := w.run(t, c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
