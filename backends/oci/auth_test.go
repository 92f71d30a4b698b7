package oci_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// isolateCredentials points every place container tools keep credentials
// at an empty temp directory, so the test sees only what it writes.
func isolateCredentials(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	t.Setenv("REGISTRY_AUTH_FILE", "")
	return home
}

func writeJSON(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func authEntry(host, user, pass string) string {
	return fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

// openAmbient opens a Mirror that finds credentials as container tools do.
func openAmbient(t *testing.T, reg *ocitest.Registry) *oci.Mirror {
	t.Helper()
	m, err := oci.Open("oci://"+reg.Host()+testTemplate, reg.Host()+testTemplate, oci.Options{RootCAs: reg.RootCAs()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCredentials(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{Users: map[string]string{"alice": "s3cret"}})
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := providerZip(t, pkg, "")

	t.Run("none", func(t *testing.T) {
		isolateCredentials(t)
		ctx := testCtx(t)
		m := openAmbient(t, reg)
		_, err := m.Versions(ctx, pkg.Provider)
		if !errors.Is(err, backends.ErrUnauthorized) {
			t.Fatalf("anonymous read: %v, want ErrUnauthorized", err)
		}
		for _, want := range []string{"repository " + reg.Host() + "/providers/example.com/acme/alpha", "HTTP 401", "docker login " + reg.Host()} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}
		_, err = put(ctx, t, m, pkg, z, false)
		if !errors.Is(err, backends.ErrUnauthorized) || !strings.Contains(err.Error(), pkg.String()) {
			t.Fatalf("anonymous push: %v", err)
		}
	})

	t.Run("docker config", func(t *testing.T) {
		home := isolateCredentials(t)
		writeJSON(t, filepath.Join(home, ".docker", "config.json"), authEntry(reg.Host(), "alice", "s3cret"))
		ctx := testCtx(t)
		m := openAmbient(t, reg)
		mustPut(ctx, t, m, pkg, z)
		if err := m.Flush(ctx, pkg.Provider); err != nil {
			t.Fatal(err)
		}
		as, err := openAmbient(t, reg).Archives(ctx, pkg.Provider, pkg.Version)
		if err != nil || len(as) != 1 {
			t.Fatalf("read with docker credentials: %v %v", as, err)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		home := isolateCredentials(t)
		writeJSON(t, filepath.Join(home, ".docker", "config.json"), authEntry(reg.Host(), "alice", "wrong"))
		_, err := openAmbient(t, reg).Versions(testCtx(t), pkg.Provider)
		if !errors.Is(err, backends.ErrUnauthorized) {
			t.Fatalf("wrong password: %v", err)
		}
	})

	t.Run("podman auth file wins over docker", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("XDG_RUNTIME_DIR is searched on Linux only")
		}
		home := isolateCredentials(t)
		writeJSON(t, filepath.Join(home, ".docker", "config.json"), authEntry(reg.Host(), "alice", "wrong"))
		writeJSON(t, filepath.Join(home, "run", "containers", "auth.json"), authEntry(reg.Host(), "alice", "s3cret"))
		if _, err := openAmbient(t, reg).Versions(testCtx(t), pkg.Provider); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("REGISTRY_AUTH_FILE", func(t *testing.T) {
		home := isolateCredentials(t)
		f := filepath.Join(home, "elsewhere.json")
		writeJSON(t, f, authEntry(reg.Host(), "alice", "s3cret"))
		t.Setenv("REGISTRY_AUTH_FILE", f)
		if _, err := openAmbient(t, reg).Versions(testCtx(t), pkg.Provider); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("credential helper", func(t *testing.T) {
		home := isolateCredentials(t)
		bin := filepath.Join(home, "bin")
		// A credential helper speaks the Docker protocol: "get" reads the
		// server address on stdin and prints JSON.
		writeJSON(t, filepath.Join(bin, "docker-credential-tfmtest"), "#!/bin/sh\n"+
			"read server\n"+
			"[ \"$1\" = get ] && [ \"$server\" = \""+reg.Host()+"\" ] || exit 1\n"+
			"echo '{\"ServerURL\":\""+reg.Host()+"\",\"Username\":\"alice\",\"Secret\":\"s3cret\"}'\n")
		if err := os.Chmod(filepath.Join(bin, "docker-credential-tfmtest"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		writeJSON(t, filepath.Join(home, ".docker", "config.json"), fmt.Sprintf(`{"credHelpers":{%q:"tfmtest"}}`, reg.Host()))
		if _, err := openAmbient(t, reg).Versions(testCtx(t), pkg.Provider); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTLSAndPlainHTTP(t *testing.T) {
	t.Parallel()
	tlsReg := ocitest.New(t)
	plainReg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	p := mustProvider(t, "example.com/acme/alpha")
	open := func(reg *ocitest.Registry, o oci.Options) *oci.Mirror {
		o.Credentials = credentials.NewMemoryStore()
		m, err := oci.Open("oci://"+reg.Host()+testTemplate, reg.Host()+testTemplate, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name string
		reg  *ocitest.Registry
		o    oci.Options
		want string // "" means the repository is reached (and is not there)
	}{
		{"untrusted certificate", tlsReg, oci.Options{}, "is not trusted (x509: certificate signed by unknown authority): trust the CA that issued it with --ca-cert FILE"},
		{"insecure", tlsReg, oci.Options{Insecure: true}, ""},
		{"trusted", tlsReg, oci.Options{RootCAs: tlsReg.RootCAs()}, ""},
		{"https to a plain registry", plainReg, oci.Options{}, "--plain-http"},
		{"plain http", plainReg, oci.Options{PlainHTTP: true}, ""},
		{"plain http to a TLS registry", tlsReg, oci.Options{PlainHTTP: true}, "HTTP 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := open(tt.reg, tt.o).Versions(testCtx(t), p)
			if tt.want == "" {
				if !errors.Is(err, backends.ErrNotFound) {
					t.Fatalf("%v, want the registry to answer NAME_UNKNOWN", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v, want %q", err, tt.want)
			}
		})
	}
}

func TestRegistryRefusals(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := providerZip(t, pkg, "")
	answer := func(status int, code, msg string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"errors":[{"code":%q,"message":%q}]}`, code, msg)
		}
	}
	tests := []struct {
		name     string
		method   string
		fragment string
		reply    func(http.ResponseWriter, *http.Request)
		sentinel error
		want     []string
		notWant  []string
	}{
		{"manifest invalid", http.MethodPut, "/manifests/sha256:", answer(400, "MANIFEST_INVALID", "unknown field artifactType"), oci.ErrRejected,
			[]string{"MANIFEST_INVALID", "unknown field artifactType", "push manifest", "may not support OCI 1.1 artifacts"}, nil},
		{"denied", http.MethodPost, "/blobs/uploads/", answer(403, "DENIED", "requested access to the resource is denied"), backends.ErrUnauthorized,
			[]string{"DENIED, HTTP 403", "access denied", "push blob"}, nil},
		{"index rejected", http.MethodPut, "/manifests/1.0.0", answer(400, "MANIFEST_BLOB_UNKNOWN", "blob unknown to registry"), oci.ErrRejected,
			[]string{"MANIFEST_BLOB_UNKNOWN", `push index`, `as tag "1.0.0"`, "another push into the same repository"}, []string{"OCI 1.1"}},
		// What distribution 2.8 answers while another push rewrites the
		// config blob's link: not a matter of OCI 1.1 support.
		{"manifest blob unknown", http.MethodPut, "/manifests/sha256:", answer(400, "MANIFEST_BLOB_UNKNOWN", "blob unknown to registry"), oci.ErrRejected,
			[]string{"MANIFEST_BLOB_UNKNOWN", "push manifest", "another push into the same repository", "retried"}, []string{"OCI 1.1"}},
		{"digest invalid", http.MethodPut, "/blobs/uploads/", answer(400, "DIGEST_INVALID", "provided digest did not match uploaded content"), oci.ErrRejected,
			[]string{"DIGEST_INVALID", "push blob", "another push into the same repository"}, []string{"OCI 1.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method == tt.method && strings.Contains(r.URL.Path, tt.fragment) {
					tt.reply(w, r)
					return true
				}
				return false
			})
			defer reg.Intercept(nil)
			m := openTest(t, reg, "/refusals/"+strings.ReplaceAll(tt.name, " ", "-")+"/${type}")
			_, err := put(ctx, t, m, pkg, z, false)
			if err == nil {
				err = m.Flush(ctx, pkg.Provider)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("%v, want %v", err, tt.sentinel)
			}
			for _, want := range append(tt.want, "refusals/") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
			for _, bad := range tt.notWant {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("message %q says %q", err, bad)
				}
			}
			if tt.name != "index rejected" && !strings.Contains(err.Error(), pkg.String()) {
				t.Errorf("message %q does not name the package", err)
			}
			var oe *oci.Error
			if !errors.As(err, &oe) || oe.Transient() {
				t.Errorf("not a permanent *oci.Error: %#v", err)
			}
		})
	}
}
