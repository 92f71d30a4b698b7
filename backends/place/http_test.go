package place_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

func TestOpenRegistryWithCACertFileAndEnvToken(t *testing.T) {
	ctx := context.Background()
	const token = "tok"
	srv := registrytest.NewWithOptions(t, registrytest.Options{Token: token}, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{
		{Version: "1.0.0", Archives: map[string][]byte{"linux_amd64": registrytest.ProviderZip("alpha", "1.0.0", "")}},
	}})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(backends.TokenEnvName(srv.Host()), token)

	r, err := place.Open(ctx, "registry://"+srv.Host()+"/", place.Options{CACertFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	reg, ok := r.(*registry.Registry)
	if !ok {
		t.Fatalf("registry:// opened a %T", r)
	}
	if reg.DefaultHost() != srv.Host() || reg.String() != "registry://"+srv.Host()+"/" {
		t.Errorf("host %q, name %q", reg.DefaultHost(), reg.String())
	}
	p, _ := backends.NewProvider(srv.Host(), "acme", "alpha")
	v, _ := backends.ParseVersion("1.0.0")
	if _, err := r.Archives(ctx, p, v); err != nil {
		t.Fatalf("through --ca-cert and TF_TOKEN_: %v", err)
	}
	if _, err := place.OpenWriter(ctx, "registry://"+srv.Host(), place.Options{CACertFile: ca}); err == nil || !strings.Contains(err.Error(), "cannot be written to") {
		t.Errorf("OpenWriter(registry://): %v", err)
	}
}

func TestOpenNetworkMirror(t *testing.T) {
	ctx := context.Background()
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
	srv := httptest.NewTLSServer(netmirror.NewHandler(m, nil, hashing.Options{}))
	defer srv.Close()

	r, err := place.Open(ctx, srv.URL+"/", place.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*netmirror.Mirror); !ok {
		t.Fatalf("https:// opened a %T", r)
	}
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	if vs, err := r.Versions(ctx, p); err != nil || len(vs) != 1 {
		t.Fatalf("versions %v, %v", vs, err)
	}
	if _, err := place.OpenWriter(ctx, srv.URL+"/", place.Options{HTTPClient: srv.Client()}); err == nil || !strings.Contains(err.Error(), "network mirrors and origin registries are read-only") {
		t.Errorf("OpenWriter(https://): %v", err)
	}
	// Without the test's client the certificate is not trusted.
	r, err = place.Open(ctx, srv.URL+"/", place.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Versions(ctx, p); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
}

func TestBadCACertFile(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		filepath.Join(t.TempDir(), "missing.pem"): "--ca-cert: open",
		notPEM: "no PEM certificate in it",
	} {
		for _, arg := range []string{"https://mirror.example.com/", "registry://registry.example.com"} {
			_, err := place.Open(context.Background(), arg, place.Options{CACertFile: file})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s with --ca-cert %s: %v, want %q", arg, file, err, want)
			}
		}
	}
}
