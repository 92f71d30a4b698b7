package place_test

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// certHint is what every kind of place says to do about a certificate it
// does not trust.
const certHint = "trust the CA that issued it with --ca-cert FILE (tfmirror) and SSL_CERT_FILE (Terraform, OpenTofu)"

// A server whose certificate is not trusted is tried once, not again as if
// it were a network glitch (the certificate will be the same), and every
// kind of place says the same thing about it: the host, that the
// certificate is not trusted, and what to do for tfmirror and the clients.
func TestUntrustedCertificateTriedOnceWithOneHint(t *testing.T) {
	ctx := context.Background()
	addr, _ := backends.ParseProvider("example.com/acme/alpha")

	// A network mirror serving a real directory.
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip")
	if err := os.MkdirAll(filepath.Dir(zipPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zipPath, registrytest.ProviderZip("alpha", "1.0.0", ""), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mirrorHandshakes atomic.Int32
	mirror := httptest.NewUnstartedServer(netmirror.NewHandler(m, nil, hashing.Options{}))
	mirror.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		mirrorHandshakes.Add(1)
		return nil, nil
	}}
	mirror.Config.ErrorLog = log.New(io.Discard, "", 0)
	mirror.StartTLS()
	defer mirror.Close()

	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{
		{Version: "1.0.0", Archives: map[string][]byte{"linux_amd64": registrytest.ProviderZip("alpha", "1.0.0", "")}},
	}})
	regAddr, _ := backends.NewProvider(reg.Host(), "acme", "alpha")
	oci := ocitest.New(t)

	for _, tc := range []struct {
		kind       string
		place      string
		host       string
		provider   backends.Provider
		handshakes func() int
	}{
		{"network mirror", mirror.URL + "/", mirror.Listener.Addr().String(), addr, func() int { return int(mirrorHandshakes.Load()) }},
		{"registry", "registry://" + reg.Host(), reg.Host(), regAddr, reg.Handshakes},
		{"oci", "oci://" + oci.Host() + "/tf/${namespace}/${type}", oci.Host(), addr, oci.Handshakes},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			r, err := place.Open(ctx, tc.place, place.Options{OCICredentials: credentials.NewMemoryStore()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Versions(ctx, tc.provider)
			if err == nil {
				t.Fatal("the certificate was trusted")
			}
			want := "the TLS certificate of " + tc.host + " is not trusted (x509: certificate signed by unknown authority): " + certHint
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n%v\nwant it to say:\n%s", err, want)
			}
			if backends.IsTransient(err) {
				t.Errorf("IsTransient: true for %v", err)
			}
			if n := tc.handshakes(); n != 1 {
				t.Errorf("%d TLS handshakes, want 1 (no retries)", n)
			}
		})
	}
}
