package tlscert_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/tlscert"
)

func TestSelfSigned(t *testing.T) {
	now := time.Now()
	certPEM, keyPEM, err := tlscert.SelfSigned([]string{"127.0.0.1", "::1", "localhost", "mirror.internal", "localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("the pair does not match: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	for _, name := range []string{"127.0.0.1", "::1", "localhost", "mirror.internal"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: pool, CurrentTime: now}); err == nil {
		t.Error("valid for a name it was not made for")
	}
	if len(cert.DNSNames) != 2 {
		t.Errorf("DNS names %v: duplicates not dropped", cert.DNSNames)
	}
}
