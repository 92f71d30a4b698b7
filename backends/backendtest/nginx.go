package backendtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NginxStatic is the part of an nginx server block that serves a
// published network-mirror tree (docs/publish.md): the Content-Type and
// Cache-Control a CDN in front needs, hidden files (tfmirror's lock and
// temp files) not served.
const NginxStatic = `    location ~ /\. { return 404; }
    location ~ \.zip$ { add_header Cache-Control "public, max-age=31536000, immutable"; }
    location ~ \.json$ { add_header Cache-Control "public, max-age=60"; }
`

const nginxConf = `user root;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  types { application/zip zip; application/json json; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:%[2]d ssl;
    ssl_certificate %[3]s;
    ssl_certificate_key %[4]s;
    root %[5]s;
%[6]s  }
}
`

// Nginx runs Debian's nginx in the foreground, serving root over TLS with
// the certificate and key files on a free loopback port, with extra in its
// server block (NginxStatic, or ""), and returns its URL (ending in "/").
// It skips the test, saying why, where nginx is not installed; it is
// stopped by its PID when the test ends.
func Nginx(t testing.TB, root, cert, key, extra string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (apt-get install -y nginx): skipping what compares with it or serves through it")
	}
	d := t.TempDir()
	conf := filepath.Join(d, "nginx.conf")
	// The port is found free, then taken by nginx: another process may
	// take it between, so a start that fails is tried on another port.
	for attempt := 1; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close() // only asked for a free port
		if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, d, port, cert, key, root, extra), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-c", conf, "-g", "daemon off;")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }() // stopped by us, or awaitListening says
		stop := func() { _ = cmd.Process.Signal(os.Interrupt); <-exited }
		if awaitListening(fmt.Sprintf("127.0.0.1:%d", port), exited) {
			t.Cleanup(stop)
			return fmt.Sprintf("https://127.0.0.1:%d/", port)
		}
		stop()
		if attempt == 5 {
			log, _ := os.ReadFile(filepath.Join(d, "error.log"))
			t.Fatalf("nginx did not start: %s\n%s", stderr.String(), log)
		}
	}
}

// awaitListening waits until addr accepts a connection (true), or the
// process exits (false); a minute bounds a loaded machine.
func awaitListening(addr string, exited <-chan struct{}) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close() // only a probe
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}
