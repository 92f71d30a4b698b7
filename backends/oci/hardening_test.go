package oci_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// pushed puts one package into reg (with creds, if any) and returns a
// reader with options o and its archive.
func pushed(t *testing.T, reg *ocitest.Registry, creds credentials.Store, o oci.Options) (*oci.Mirror, backends.Archive, []byte) {
	t.Helper()
	ctx := testCtx(t)
	if creds == nil {
		creds = credentials.NewMemoryStore()
	}
	open := func(o oci.Options) *oci.Mirror {
		o.RootCAs, o.Credentials = reg.RootCAs(), creds
		m, err := oci.Open("oci://"+reg.Host()+testTemplate, reg.Host()+testTemplate, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := providerZip(t, pkg, "")
	w := open(oci.Options{})
	mustPut(ctx, t, w, pkg, z)
	if err := w.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	r := open(o)
	as, err := r.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 {
		t.Fatalf("archives: %v %v", as, err)
	}
	return r, as[0], z
}

func isBlobGet(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:")
}

// TestCredentialsStayOnTheirRegistry: a registry that answers a blob GET
// with a redirect to another server (as registries redirect to object
// storage) must not get its credentials forwarded there, even when the
// other server is on the same IP address (Go keeps the Authorization header
// across ports of one host) and even when a later hop comes back.
func TestCredentialsStayOnTheirRegistry(t *testing.T) {
	t.Parallel()
	reg := ocitest.NewWithOptions(t, ocitest.Options{Users: map[string]string{"alice": "s3cret"}})
	creds := credentials.NewMemoryStore()
	if err := creds.Put(testCtx(t), reg.Host(), auth.Credential{Username: "alice", Password: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	r, a, z := pushed(t, reg, creds, oci.Options{})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))

	var mu gosync.Mutex
	var seen []string
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		seen = append(seen, req.URL.Path+" "+req.Header.Get("Authorization"))
		mu.Unlock()
		if strings.HasPrefix(req.URL.Path, "/bounce/") {
			// Back to the registry: the header must stay dropped.
			http.Redirect(w, req, reg.URL()+strings.TrimPrefix(req.URL.Path, "/bounce")+"?redirected=1", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(z)))
		w.Write(z)
	}))
	defer other.Close()

	for _, tc := range []struct {
		name, prefix string
		back         bool
	}{
		{"to another port of the same host", "/store", false},
		{"away and back", "/bounce", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var registryAuth []string
			reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
				if !isBlobGet(req) {
					return false
				}
				mu.Lock()
				registryAuth = append(registryAuth, req.Header.Get("Authorization"))
				mu.Unlock()
				if req.URL.Query().Get("redirected") != "" {
					return false // the registry serves the bounced request
				}
				http.Redirect(w, req, other.URL+tc.prefix+req.URL.Path+"?redirected=1", http.StatusTemporaryRedirect)
				return true
			})
			defer reg.Intercept(nil)
			mu.Lock()
			seen = nil
			mu.Unlock()
			rc, err := r.Open(testCtx(t), a)
			var got []byte
			if err == nil {
				got, err = readAll(t, rc)
			}
			switch {
			case tc.back && !errors.Is(err, backends.ErrUnauthorized):
				// The bounced request reaches the registry without
				// credentials, which then answers 401.
				t.Errorf("bounced back: %d bytes, %v; want the registry's 401", len(got), err)
			case !tc.back && (err != nil || !bytes.Equal(got, z)):
				t.Fatalf("read through the redirect: %d bytes, %v", len(got), err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 {
				t.Fatal("the redirect was not followed")
			}
			for _, s := range seen {
				if strings.Contains(s, "Basic") {
					t.Errorf("the other server got the registry's credentials: %s", s)
				}
			}
			if len(registryAuth) == 0 || registryAuth[0] != basic {
				t.Errorf("the registry itself did not get them: %q", registryAuth)
			}
			if tc.back && (len(registryAuth) < 2 || registryAuth[len(registryAuth)-1] != "") {
				t.Errorf("credentials came back after leaving the registry: %q", registryAuth)
			}
		})
	}
}

// A registry that stops sending a blob, or never answers, ends in a
// transient timeout error within the configured time.
func TestRegistryTimeouts(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	r, a, z := pushed(t, reg, nil, oci.Options{Timeout: 200 * time.Millisecond, Retries: -1})
	cases := []struct {
		name  string
		serve func(w http.ResponseWriter, req *http.Request)
		want  string
	}{
		{"headers then a trickle", func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(z)))
			for _, b := range z {
				w.Write([]byte{b})
				w.(http.Flusher).Flush()
				select {
				case <-req.Context().Done():
					return
				case <-time.After(time.Second):
				}
			}
		}, "no data for 200ms"},
		{"no headers", func(w http.ResponseWriter, req *http.Request) {
			<-req.Context().Done()
			panic(http.ErrAbortHandler) // never a late 200 that a slow client could read
		}, "no answer within 200ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
				if !isBlobGet(req) {
					return false
				}
				tc.serve(w, req)
				return true
			})
			defer reg.Intercept(nil)
			start := time.Now()
			rc, err := r.Open(testCtx(t), a)
			if err == nil {
				_, err = readAll(t, rc)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !backends.IsTransient(err) {
				t.Fatalf("%v: want a transient %q", err, tc.want)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %s", el)
			}
		})
	}
}

// Transient failures are retried the configured number of times, and a
// blob cut short is a transient error, never a short archive.
func TestRetriesAndShortBlobs(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	for _, retries := range []int{-1, 2} {
		t.Run(fmt.Sprint("retries ", retries), func(t *testing.T) {
			r, a, z := pushed(t, reg, nil, oci.Options{Retries: retries, RetryBackoff: time.Millisecond})
			var gets atomic.Int32
			reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
				if !isBlobGet(req) {
					return false
				}
				gets.Add(1)
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return true
			})
			_, err := r.Open(testCtx(t), a)
			reg.Intercept(nil)
			want := int32(1 + max(retries, 0))
			if err == nil || gets.Load() != want || !backends.IsTransient(err) {
				t.Fatalf("%v after %d requests; want a transient error after %d", err, gets.Load(), want)
			}

			reg.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
				if !isBlobGet(req) {
					return false
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(z)))
				w.Write(z[:len(z)/2])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			})
			defer reg.Intercept(nil)
			rc, err := r.Open(testCtx(t), a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, rc)
			if err == nil || !backends.IsTransient(err) || !strings.Contains(err.Error(), fmt.Sprintf("the stream ended after %d of the layer's %d bytes", len(z)/2, len(z))) {
				t.Fatalf("cut blob: %d bytes, %v", len(got), err)
			}
			if errors.Is(err, oci.ErrDigestMismatch) {
				t.Errorf("a dropped connection is not a digest mismatch: %v", err)
			}
		})
	}
}

// An index entry whose size disagrees with its manifest skips that platform
// (OpenTofu could not install it), with a warning and an audit problem; the
// rest of the version is still listed.
func TestIndexEntryWithWrongSizeIsSkipped(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	b := &badLayout{t: t, ctx: ctx, reg: reg, repo: "providers/example.com/acme/alpha"}
	b.cfg = pushRawConfig(ctx, t, reg, b.repo)
	lying := entry(b.manifest(b.zipLayer("linux_amd64")), "linux", "amd64")
	lying.Size += 5
	b.index("1.0.0", oci.ArtifactTypeProvider, lying, entry(b.manifest(b.zipLayer("darwin_amd64")), "darwin", "amd64"))
	r := openTest(t, reg, testTemplate)
	p := mustProvider(t, "example.com/acme/alpha")
	as, err := r.Archives(ctx, p, mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64").Version)
	if err != nil {
		t.Fatalf("one lying entry failed the whole version: %v", err)
	}
	if len(as) != 1 || as[0].Platform.String() != "darwin_amd64" {
		t.Fatalf("listed %v, want darwin_amd64 only", as)
	}
	w := strings.Join(r.Warnings(), "\n")
	if !strings.Contains(w, "linux_amd64: skipped: manifest "+lying.Digest.String()+": content does not match its digest") {
		t.Errorf("warnings: %s", w)
	}
	if probs := r.Audit(ctx, p); len(probs) != 1 || !strings.Contains(probs[0].Detail, "mismatch Content-Length") || probs[0].Package.Platform.String() != "linux_amd64" {
		t.Errorf("audit: %+v", probs)
	}
}
