package oci_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

// TestProvenanceReferrer: a version's provenance is an OCI 1.1 referrer of
// its index (in the real distribution registry, which has no referrers
// API, through the referrers tag oras-go keeps); it is read back as
// written, written again without a push, follows the index when a flush
// adds a platform and when prune removes one, and its tag is no version.
func TestProvenanceReferrer(t *testing.T) {
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	linux := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	darwin := mustPkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	windows := mustPkg(t, "example.com/acme/alpha", "1.0.0", "windows_amd64")
	seeds := []backendtest.Seed{{Package: linux, Zip: providerZip(t, linux, "")}, {Package: darwin, Zip: providerZip(t, darwin, "")}, {Package: windows, Zip: providerZip(t, windows, "")}}
	key := backendtest.NewSigner(t, "acme")
	pr := key.Provenance(t, seeds)
	p, v := linux.Provider, linux.Version

	mustPut(ctx, t, m, linux, seeds[0].Zip)
	if err := m.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Provenance(ctx, p, v); !errors.Is(err, backends.ErrNotFound) {
		t.Fatalf("before any was written: %v, want ErrNotFound", err)
	}
	if err := m.WriteProvenance(ctx, p, v, pr); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := openTest(t, reg, testTemplate).Provenance(ctx, p, v)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if s, err := got.Check(provenance.Options{}); !got.Equal(pr) || err != nil || s.Fingerprint != key.Fingerprint() {
			t.Fatalf("%s: read back %+v, signer %+v, %v", when, got, s, err)
		}
	}
	check("written")

	reg.ResetRequests()
	if err := m.WriteProvenance(ctx, p, v, pr); err != nil {
		t.Fatal(err)
	}
	if n := reg.Count(http.MethodPut, "/manifests/"); n != 0 {
		t.Fatalf("writing the same provenance again pushed %d manifests", n)
	}

	// A second platform makes a new index; the provenance follows it.
	mustPut(ctx, t, m, darwin, seeds[1].Zip)
	mustPut(ctx, t, m, windows, seeds[2].Zip)
	if err := m.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	check("after a flush added platforms")

	// So does the index prune leaves.
	as, err := m.Archives(ctx, p, v)
	if err != nil || len(as) != 3 {
		t.Fatalf("archives %v, %v", as, err)
	}
	if _, err := m.Remove(ctx, p, as[:1]); err != nil {
		t.Fatal(err)
	}
	check("after prune removed a platform")

	vs, err := m.Versions(ctx, p)
	if err != nil || len(vs) != 1 || vs[0].String() != "1.0.0" {
		t.Fatalf("versions %v, %v: the referrers tag is no version", vs, err)
	}
	if w := m.Warnings(); len(w) > 0 {
		t.Fatalf("warnings: %v", w)
	}
}

// Provenance written over a different one replaces it (the earlier
// referrer deleted), and reads back as written: before, the index kept
// both referrers and Provenance refused it.
func TestProvenanceReplaced(t *testing.T) {
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	linux := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	seeds := []backendtest.Seed{{Package: linux, Zip: providerZip(t, linux, "")}}
	mustPut(ctx, t, m, linux, seeds[0].Zip)
	if err := m.Flush(ctx, linux.Provider); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first", "second"} {
		pr := backendtest.NewSigner(t, name).Provenance(t, seeds)
		if err := m.WriteProvenance(ctx, linux.Provider, linux.Version, pr); err != nil {
			t.Fatal(err)
		}
		got, err := openTest(t, reg, testTemplate).Provenance(ctx, linux.Provider, linux.Version)
		if err != nil || !got.Equal(pr) {
			t.Fatalf("after the %s was written: %+v, %v", name, got, err)
		}
	}
}
