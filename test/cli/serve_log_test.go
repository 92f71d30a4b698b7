package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCLIServeLogFormat: every serve mode logs a request in one format:
// an RFC 3339 time, the remote address, the method, the path, the status,
// the bytes and the duration, as text or (--log-format json) as a JSON
// object with those fields; the other lines (a pull-through mirror's
// landed and error lines) carry the same time stamp.
func TestCLIServeLogFormat(t *testing.T) {
	dir, _ := fsMirror(t)
	text := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1:\d+ GET /example\.com/acme/alpha/index\.json 200 \d+ \S+s$`)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"plain", []string{dir}},
		{"plain json", []string{dir, "--log-format", "json"}},
		{"pull-through", []string{dir, "--offline"}},
		{"pull-through json", []string{dir, "--offline", "--log-format", "json"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			url, cert, stop := startServeWith(t, nil, mode.args...)
			get(t, cert, url+"example.com/acme/alpha/index.json")
			var access []string
			for _, l := range strings.Split(strings.TrimSpace(stop()), "\n") {
				if strings.Contains(l, "index.json") {
					access = append(access, l)
				} else if l != "" && !regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ |\{"time":)`).MatchString(l) {
					t.Errorf("a log line not in the access log's format: %q", l)
				}
			}
			if len(access) != 1 {
				t.Fatalf("access log lines %q, want one", access)
			}
			if !strings.HasSuffix(mode.name, "json") {
				if !text.MatchString(access[0]) {
					t.Errorf("access log line %q, want TIME REMOTE METHOD PATH STATUS BYTES DURATION", access[0])
				}
				return
			}
			var a map[string]any
			if err := json.Unmarshal([]byte(access[0]), &a); err != nil {
				t.Fatalf("%q: %v", access[0], err)
			}
			for _, k := range []string{"time", "remote", "method", "path", "status", "bytes", "seconds"} {
				if _, ok := a[k]; !ok {
					t.Errorf("access log object %q lacks %q", access[0], k)
				}
			}
			if !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(a["remote"].(string)) || a["status"] != float64(200) {
				t.Errorf("access log object %q", access[0])
			}
		})
	}
}

// get fetches url trusting the certificate in cert.
func get(t *testing.T, cert, url string) {
	t.Helper()
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
}
