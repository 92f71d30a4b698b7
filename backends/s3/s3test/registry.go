package s3test

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/tlscert"
)

// Registry is an OCI registry on object storage: Debian's docker-registry
// (the CNCF distribution registry 2.8) with its s3 storage driver writing
// into a bucket of a Server, over TLS on 127.0.0.1. It stops when the test
// ends.
type Registry struct {
	// Host is 127.0.0.1:PORT.
	Host string
	// Root is the key prefix its storage driver writes under.
	Root string

	caFile string
	caPEM  []byte
}

// CAFile is the PEM file of the registry's certificate (its own CA).
func (r *Registry) CAFile() string { return r.caFile }

// CertPEM is the registry's certificate.
func (r *Registry) CertPEM() []byte { return r.caPEM }

// Registry starts docker-registry storing into bucket; it skips the test
// when docker-registry is not installed.
func (s *Server) Registry(t testing.TB, bucket string) *Registry {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("docker-registry is not installed (apt-get install -y docker-registry): skipping the OCI registry on object storage")
	}
	dir := t.TempDir()
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	r := &Registry{Root: "/registry", caFile: filepath.Join(dir, "registry.pem"), caPEM: certPEM}
	keyFile := filepath.Join(dir, "registry-key.pem")
	for name, b := range map[string][]byte{r.caFile: certPEM, keyFile: keyPEM} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatalf("s3test: %v", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	r.Host = l.Addr().String()
	_ = l.Close() // only asked for a free port
	cfgFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgFile, []byte(s.registryConfig(bucket, r, keyFile)), 0o600); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	defer func() { _ = logFile.Close() }() // the child writes its own copy
	cmd := exec.Command(bin, "serve", cfgFile)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+s.caFile, "SSL_CERT_DIR="+filepath.Dir(s.caFile), "AWS_CA_BUNDLE=")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("s3test: docker-registry: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // killed by the cleanup
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	if err := awaitTLS("docker-registry", r.Host, roots, done, logFile.Name()); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	return r
}

// registryConfig is docker-registry's configuration: its s3 driver storing
// into bucket on s (which it trusts through SSL_CERT_FILE), blobs served by
// the registry itself rather than by redirects to the store, TLS with the
// registry's own certificate.
func (s *Server) registryConfig(bucket string, r *Registry, keyFile string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  s3:
    accesskey: %s
    secretkey: %s
    region: %s
    regionendpoint: %s
    bucket: %s
    secure: true
    v4auth: true
    rootdirectory: %s
  delete:
    enabled: true
  redirect:
    disable: true
http:
  addr: %s
  secret: s3test-not-a-secret
  tls:
    certificate: %s
    key: %s
`, AccessKey, SecretKey, Region, s.URL, bucket, r.Root, r.Host, r.caFile, keyFile)
}
