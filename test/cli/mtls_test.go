package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// clientCA makes a CA and a client certificate it signed for name,
// written as PEM files: the CA's certificate, the client's certificate
// and key.
func clientCA(t *testing.T, name string) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test client CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600)
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("client.pem", "CERTIFICATE", der), write("client.key", "EC PRIVATE KEY", keyDER)
}

// The corporate setting neither client supports (opentofu#2308): a mirror
// that requires a client certificate. tfmirror reaches it with
// --client-cert/--client-key (ls, sync), and bridges the clients to it: a
// pull-through on loopback whose upstream is that mirror serves terraform
// init and tofu init. Without the certificate, tfmirror is refused.
func TestClientCertificateMirrorBridgedForTheClients(t *testing.T) {
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host}))
	ca, cert, key := clientCA(t, "ci-bridge")
	upURL, upCert, stopUp := startServeWith(t, cleanEnv(t), src, "--client-ca", ca)
	mtls := []string{"--ca-cert", upCert, "--client-cert", cert, "--client-key", key}

	if r := run(t, nil, append([]string{"ls", upURL, "-p", "example.com/acme/alpha", "--ca-cert", upCert}, "--json")...); r.code == 0 {
		t.Errorf("ls without the client certificate: exit 0\n%s", r.stdout)
	}
	if r := run(t, nil, append([]string{"ls", upURL, "-p", "example.com/acme/alpha", "--json"}, mtls...)...); r.code != 0 || !strings.Contains(r.stdout, host) {
		t.Errorf("ls with the client certificate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dst := t.TempDir()
	if r := run(t, nil, append([]string{"sync", upURL, dst, "-p", "example.com/acme/alpha"}, mtls...)...); r.code != 0 {
		t.Errorf("sync with the client certificate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "sync", upURL, t.TempDir(), "-p", "example.com/acme/alpha", "--client-cert", cert); r.code != 2 || !strings.Contains(r.stderr, "--client-key") {
		t.Errorf("--client-cert without --client-key: exit %d\n%s", r.code, r.stderr)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	url, pemFile, stop := startServeWith(t, cleanEnv(t), append([]string{cache, "--upstream", upURL}, mtls...)...)
	caPEM, _ := os.ReadFile(pemFile)
	for name, bin := range pullClients(t) {
		out, _, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") {
			t.Errorf("%s init through the bridge: %v\n%s", name, err, out)
		}
	}
	stop()
	if log := stopUp(); !strings.Contains(log, "client=cert:ci-bridge") {
		t.Errorf("the upstream's access log does not name the certificate:\n%s", log)
	}
}

// The UI reaches a mirror that requires a client certificate with the
// same global flags as ls and sync: the provider, its version and
// platform are listed, and the mirror's access log names the certificate.
func TestUIListsAClientCertificateMirror(t *testing.T) {
	host := runtime.GOOS + "_" + runtime.GOARCH
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host}))
	ca, cert, key := clientCA(t, "ui-desk")
	upURL, upCert, stopUp := startServeWith(t, cleanEnv(t), src, "--client-ca", ca)
	s := newTmux(t, 120, 36, append(cleanEnv(t), "NO_COLOR=1"), "ui", upURL, "-p", "example.com/acme/alpha",
		"--ca-cert", upCert, "--client-cert", cert, "--client-key", key)
	scr := s.waitLoaded("example.com/acme/alpha", "1.0.0", host)
	if strings.Contains(scr, "certificate required") || strings.Contains(scr, "cannot list") {
		t.Errorf("the UI shows an error:\n%s", scr)
	}
	s.keys("q")
	s.waitGone()
	if log := stopUp(); !strings.Contains(log, "client=cert:ui-desk") {
		t.Errorf("the mirror's access log does not name the certificate:\n%s", log)
	}
}
