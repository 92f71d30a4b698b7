package cli

import (
	"bufio"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// metricSum adds the values of the /metrics lines of the mirror at url
// that start with prefix (a name, or a name and the start of its labels).
func metricSum(t *testing.T, c *http.Client, url, prefix string) float64 {
	t.Helper()
	resp, err := c.Get(url + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			f := strings.Fields(sc.Text())
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += v
		}
	}
	return n
}

// A pull-through mirror whose CACHE is a bucket, with --redirect: the first
// install of a zip is fetched and streamed through the process; once the
// zip has landed, terraform and tofu install it through a redirect to a
// presigned URL of the bucket's object, and /metrics show that the process
// sent no archive bytes for them. A plain serve of the bucket redirects
// the same way (its access log: 302, no bytes).
func TestClientsInstallThroughPresignedRedirects(t *testing.T) {
	w := newS3World(t)
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host}))
	clients := pullClients(t)
	url, cert, _ := startServeWith(t, w.srv.Env(), append([]string{w.place("cache"), "--upstream", src, "--redirect"}, w.srv.Args()...)...)
	servePEM := []byte(readFile(t, cert))
	caPEM := append(append([]byte{}, servePEM...), w.srv.CertPEM()...) // the mirror's and the store's
	c := pullClient(servePEM)
	first := true
	for name, bin := range clients {
		if first { // a miss: fetched, streamed, landed
			out, _, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
			if err != nil {
				t.Fatalf("%s init through the pull-through mirror %s: %v\n%s", name, url, err, out)
			}
			waitLanded(t, url, servePEM)
			first = false
		}
		redirects := metricSum(t, c, url, `tfmirror_pull_requests_total{code="302",kind="archive"}`)
		bytes := metricSum(t, c, url, `tfmirror_pull_served_bytes_total{kind="archive"}`)
		out, lock, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") || !strings.Contains(lock, "h1:") {
			t.Fatalf("%s init of a zip the bucket holds, through %s: %v\n%s", name, url, err, out)
		}
		if n := metricSum(t, c, url, `tfmirror_pull_requests_total{code="302",kind="archive"}`) - redirects; n < 1 {
			t.Errorf("%s's download was not redirected (%v redirects)", name, n)
		}
		if n := metricSum(t, c, url, `tfmirror_pull_served_bytes_total{kind="archive"}`) - bytes; n != 0 {
			t.Errorf("%s's download through a redirect: the process sent %v archive bytes, want 0", name, n)
		}
	}

	url, cert, stop := startServeWith(t, w.srv.Env(), append([]string{w.place("cache"), "--redirect"}, w.srv.Args()...)...)
	caPEM = append([]byte(readFile(t, cert)), w.srv.CertPEM()...)
	for name, bin := range clients {
		out, _, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") {
			t.Errorf("%s init from serve %s --redirect: %v\n%s", name, w.place("cache"), err, out)
		}
	}
	if log := stop(); !strings.Contains(log, ".zip 302 0 ") || strings.Contains(log, ".zip 200") {
		t.Errorf("serve --redirect's log shows no redirect, or a zip served whole:\n%s", log)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", t.TempDir(), "--redirect"}, "it needs an s3:// PLACE or CACHE"},
		{[]string{"serve", w.place("cache"), "--redirect", "--redirect-ttl", "200h"}, "--redirect-ttl 200h0m0s"},
	} {
		if r := w.run(t, c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
