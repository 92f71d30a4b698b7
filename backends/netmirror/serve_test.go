package netmirror_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/tlscert"
)

func TestServe(t *testing.T) {
	dir := t.TempDir()
	writeMirror(t, dir, pkg{"example.com", "acme", "alpha", "1.0.0", "linux_amd64"})
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	certOut := filepath.Join(t.TempDir(), "cert.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan netmirror.Serving, 1)
	done := make(chan error, 1)
	logs := &backendtest.Buffer{}
	go func() {
		done <- netmirror.Serve(ctx, m, netmirror.ServeOptions{
			Addr: "127.0.0.1:0", CertOut: certOut, Logger: log.New(logs, "", 0),
			Ready: func(s netmirror.Serving) { ready <- s },
		})
	}()
	var s netmirror.Serving
	select {
	case s = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	if s.CertOut != certOut || !strings.HasPrefix(s.URL, "https://127.0.0.1:") || !strings.HasSuffix(s.URL, "/") || strings.Join(s.Hosts, " ") != "127.0.0.1 ::1 localhost" {
		t.Fatalf("serving %+v", s)
	}
	pemBytes, err := os.ReadFile(certOut)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("cert-out holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(s.URL + "example.com/acme/alpha/index.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "1.0.0") {
		t.Fatalf("index: %s %s", resp.Status, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not shut down")
	}
	if !strings.Contains(logs.String(), "GET /example.com/acme/alpha/index.json 200") {
		t.Errorf("log: %s", logs)
	}
}

func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	m, _ := fs.Open(dir, dir, fs.Options{})
	certPEM, keyPEM, _ := tlscert.SelfSigned([]string{"127.0.0.1"}, time.Now())
	certFile := filepath.Join(dir, "c.pem")
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "k.pem")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		opts netmirror.ServeOptions
		want string
	}{
		{netmirror.ServeOptions{Addr: "nonsense"}, `--addr "nonsense": want HOST:PORT`},
		{netmirror.ServeOptions{Addr: "127.0.0.1:0", CertFile: certFile}, "give both --tls-cert and --tls-key"},
		{netmirror.ServeOptions{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: certFile}, "--tls-cert " + certFile},
		{netmirror.ServeOptions{Addr: "127.0.0.1:0", CertOut: filepath.Join(dir, "no", "such", "dir", "c.pem")}, "writing the certificate"},
	}
	for _, tc := range cases {
		err := netmirror.Serve(context.Background(), m, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	// A given certificate is used as is and nothing is written.
	ctx, cancel := context.WithCancel(context.Background())
	var got netmirror.Serving
	err := netmirror.Serve(ctx, m, netmirror.ServeOptions{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile, Ready: func(s netmirror.Serving) { got = s; cancel() }})
	if err != nil || got.CertOut != "" {
		t.Fatalf("with a given certificate: %v, %+v", err, got)
	}
}
