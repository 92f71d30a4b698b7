package netmirror_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// ociTemplate leaves out ${hostname}: every hostname maps to one repository
// per namespace and type.
const ociTemplate = "/tf/${namespace}/${type}"

// land writes seeds into w as the sync engine does: each archive committed,
// then each provider flushed.
func land(t *testing.T, w backends.Writer, seeds []backendtest.Seed) {
	t.Helper()
	flushed := map[backends.Provider]bool{}
	for _, s := range seeds {
		if err := backendtest.Commit(bg, t, w, s.Package, s.Zip, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range seeds {
		if p := s.Package.Provider; !flushed[p] {
			flushed[p] = true
			if err := w.Flush(bg, p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ociMirror opens an OCI mirror on a fresh registry holding seeds.
func ociMirror(t *testing.T, seeds []backendtest.Seed) (*ocitest.Registry, *oci.Mirror) {
	t.Helper()
	reg := ocitest.New(t)
	open := func() *oci.Mirror {
		m, err := oci.Open("oci://"+reg.Host()+ociTemplate, reg.Host()+ociTemplate, oci.Options{RootCAs: reg.RootCAs(), Credentials: credentials.NewMemoryStore()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	land(t, open(), seeds)
	return reg, open()
}

// s3Mirror opens a fresh bucket on srv holding seeds, written by tfmirror's
// own store (its documents list each zip's h1: and zh:).
func s3Mirror(t *testing.T, srv *s3test.Server, seeds []backendtest.Seed) (string, *s3.Store) {
	t.Helper()
	bucket := srv.Bucket(t)
	open := func() *s3.Store {
		st, err := s3.Open(bg, "s3://"+bucket+"/tf", bucket+"/tf", srv.Options())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	land(t, open(), seeds)
	return bucket, open()
}

// bigSeed is a seed whose zip spans several of the chunks the handler
// streams (a random, incompressible file inside).
func bigSeed(t *testing.T, provider, version, platform string) backendtest.Seed {
	t.Helper()
	pkg := backendtest.Pkg(t, provider, version, platform)
	filler := make([]byte, 300_000)
	rand.Read(filler)
	return backendtest.Seed{Package: pkg, Zip: backendtest.Zip(t,
		backendtest.Entry{Name: "terraform-provider-" + pkg.Provider.Type + "_v" + pkg.Version.String(), Body: []byte("#!/bin/sh\nexit 1\n")},
		backendtest.Entry{Name: "filler", Body: filler, Mode: 0o644})}
}

// TestReaderSuiteOverServedPlaces runs the shared Reader contract against
// network mirrors the handler serves from an OCI registry and from a
// bucket: what a client reads through `serve` is what the place holds.
func TestReaderSuiteOverServedPlaces(t *testing.T) {
	t.Run("OCI", func(t *testing.T) {
		backendtest.ReaderSuite(t, func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
			_, m := ociMirror(t, seeds)
			srv, _, _ := servePlace(t, m)
			return openMirror(t, srv, srv.URL+"/", nil)
		})
	})
	t.Run("S3", func(t *testing.T) {
		s3srv := s3test.Start(t)
		backendtest.ReaderSuite(t, func(t *testing.T, seeds []backendtest.Seed) backends.Reader {
			_, st := s3Mirror(t, s3srv, seeds)
			srv, _, _ := servePlace(t, st)
			return openMirror(t, srv, srv.URL+"/", nil)
		})
	})
}

// zhOf is the zh: of a zip.
func zhOf(zip []byte) hashing.Hash {
	z := hashing.NewZipHasher()
	z.Write(zip)
	return z.Sum()
}

// A served OCI mirror lists exactly what the registry vouches for, the
// layer digest as zh: (no h1: nobody computed), and names each zip by its
// release name. The template leaves out ${hostname}, so every hostname
// reads the same repository; the version's index names the provider
// tfmirror wrote it for, and no other provider's document lists it.
func TestServedOCIMirrorListsTheLayerDigest(t *testing.T) {
	seeds := []backendtest.Seed{bigSeed(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")}
	seeds = append(seeds, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"darwin_arm64"})...)
	_, m := ociMirror(t, seeds)
	srv, _, _ := servePlace(t, m)
	if resp, body := get(t, srv, "/registry.opentofu.org/acme/alpha/1.0.0.json"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another hostname's version document: %s\n%s", resp.Status, body)
	}
	host := "example.com"
	client := openMirror(t, srv, srv.URL+"/", nil)
	p := mustProvider(t, host+"/acme/alpha")
	as, err := client.Archives(bg, p, mustVersion(t, "1.0.0"))
	if err != nil || len(as) != 2 {
		t.Fatalf("%s: %d archives, %v", host, len(as), err)
	}
	for _, a := range as {
		var zip []byte
		for _, s := range seeds {
			if s.Package.Platform == a.Platform {
				zip = s.Zip
			}
		}
		if want := []hashing.Hash{zhOf(zip)}; !slices.Equal(a.Hashes(), want) {
			t.Errorf("%s %s: served %v, want only the layer digest %v", host, a.Platform, a.Hashes(), want)
		}
		if !strings.HasSuffix(a.Location, "/"+a.Filename()) {
			t.Errorf("%s %s: url %s, want the release name %s", host, a.Platform, a.Location, a.Filename())
		}
		if f := sync.VerifyArchive(bg, client, a, hashing.Options{}); f.Status != sync.StatusOK || !strings.Contains(f.Detail, "zh matches mirror index") {
			t.Errorf("%s %s: verify: %s: %s", host, a.Platform, f.Status, f.Detail)
		}
	}
}

// A bucket whose objects carry no documents (uploaded by hand) is served
// with the sums of each zip, computed from it once. A zip replaced by
// another of the same size is refused against the sums of the first, then
// listed and served with its own.
func TestServedBucketWithoutDocumentsListsComputedSums(t *testing.T) {
	s3srv := s3test.Start(t)
	dir := t.TempDir()
	first := bigSeed(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	backendtest.WritePacked(t, dir, []backendtest.Seed{first})
	bucket := s3srv.Bucket(t)
	s3srv.Upload(t, bucket, "tf/", dir)
	st, err := s3.Open(bg, "s3://"+bucket+"/tf", bucket+"/tf", s3srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	srv, _, _ := servePlace(t, st)
	client := openMirror(t, srv, srv.URL+"/", nil)
	served := func(zip []byte) {
		t.Helper()
		as, err := client.Archives(bg, first.Package.Provider, first.Package.Version)
		if err != nil || len(as) != 1 {
			t.Fatalf("%d archives, %v", len(as), err)
		}
		if want := sumsOf(t, zip).List(); !slices.Equal(as[0].Hashes(), want) {
			t.Errorf("served %v, want the computed %v", as[0].Hashes(), want)
		}
		if f := sync.VerifyArchive(bg, client, as[0], hashing.Options{}); f.Status != sync.StatusOK {
			t.Errorf("verify: %s: %s", f.Status, f.Detail)
		}
	}
	served(first.Zip)

	second := bigSeed(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	if len(second.Zip) != len(first.Zip) {
		t.Fatalf("the replacement is %d bytes, the first %d: want the same size", len(second.Zip), len(first.Zip))
	}
	key := "tf/example.com/acme/alpha/" + first.Package.Filename()
	if _, err := s3srv.Client().PutObject(bg, &s3api.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(second.Zip)}); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/example.com/acme/alpha/" + first.Package.Filename()
	if status, got, err := fetch(t, srv.Client(), url); err == nil || len(got) >= len(second.Zip) {
		t.Errorf("the replaced zip against the first's sums: %d, %d bytes, %v: want it cut short", status, len(got), err)
	}
	served(second.Zip)
}

// fetch GETs a path and returns the status, the bytes received and how
// reading the body ended.
func fetch(t *testing.T, c *http.Client, url string) (int, []byte, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// A zip whose bytes disagree with what the place states is never delivered
// whole: a large one is cut short (the client's read fails before the end),
// one that fits in the bytes held back is refused with 502; the log says
// why. Both for an OCI blob corrupted in the registry's storage and for an
// object swapped behind a bucket's documents.
func TestServeCutsShortAZipThatDisagrees(t *testing.T) {
	big := bigSeed(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	small := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"darwin_arm64"})[0]
	check := func(t *testing.T, r backends.Reader, want string) {
		t.Helper()
		srv, _, logs := servePlace(t, r)
		base := srv.URL + "/example.com/acme/alpha/"
		status, got, err := fetch(t, srv.Client(), base+big.Package.Filename())
		if err == nil || status != http.StatusOK || len(got) >= len(big.Zip) {
			t.Errorf("large zip: %d, %d of %d bytes, read error %v: want a transfer cut short", status, len(got), len(big.Zip), err)
		}
		if status, body, err := fetch(t, srv.Client(), base+small.Package.Filename()); err != nil || status != http.StatusBadGateway || bytes.Contains(body, []byte("PK")) {
			t.Errorf("small zip: %d, %v: want 502\n%s", status, err, body)
		}
		if l := logs.String(); !strings.Contains(l, want) || !strings.Contains(l, "cut short") {
			t.Errorf("log:\n%s\nwant it to say %q and that the response was cut short", l, want)
		}
	}
	t.Run("OCI", func(t *testing.T) {
		reg, m := ociMirror(t, []backendtest.Seed{big, small})
		reg.CorruptBlob(t, "sha256:"+zhOf(big.Zip).Value())
		reg.CorruptBlob(t, "sha256:"+zhOf(small.Zip).Value())
		check(t, m, "does not match its digest")
	})
	t.Run("S3", func(t *testing.T) {
		s3srv := s3test.Start(t)
		bucket, st := s3Mirror(t, s3srv, []backendtest.Seed{big, small})
		// Other release zips, of the same sizes as far as the listing
		// goes: only their hashes tell them apart.
		swaps := map[backends.Package][]byte{
			big.Package:   bigSeed(t, "example.com/acme/alpha", "1.0.0", "linux_amd64").Zip,
			small.Package: backendtest.ProviderZip(t, small.Package, "swapped"),
		}
		for pkg, zip := range swaps {
			key := "tf/example.com/acme/alpha/" + pkg.Filename()
			if _, err := s3srv.Client().PutObject(context.Background(), &s3api.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(zip)}); err != nil {
				t.Fatal(err)
			}
		}
		check(t, st, "mismatch against mirror index")
	})
}
