package oci_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

// testTemplate is the template most tests use: every symbol, so the
// registry catalogue can be read back.
const testTemplate = "/providers/${hostname}/${namespace}/${type}"

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openTest opens a oci.Mirror on reg with the template (appended to the
// registry's host) and no ambient credentials.
func openTest(t testing.TB, reg *ocitest.Registry, tmpl string) *oci.Mirror {
	t.Helper()
	m, err := oci.Open("oci://"+reg.Host()+tmpl, reg.Host()+tmpl, oci.Options{
		PlainHTTP:   reg.PlainHTTP,
		RootCAs:     reg.RootCAs(),
		Credentials: credentials.NewMemoryStore(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustProvider and mustPkg parse, failing the test on bad input.
var (
	mustProvider = backendtest.Provider
	mustPkg      = backendtest.Pkg
)

// providerZip builds a real release zip: a tiny executable named as the
// clients expect, whose content names the package (so every package's zip
// differs) plus salt.
func providerZip(t testing.TB, pkg backends.Package, salt string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "terraform-provider-" + pkg.Provider.Type + "_v" + pkg.Version.String(), Method: zip.Deflate}
	h.SetMode(0o755)
	h.Modified = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	w, err := zw.CreateHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, "#!/bin/sh\n# %s %s\n", pkg, salt)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sumsOf hashes zip bytes as the clients do.
func sumsOf(t testing.TB, b []byte) hashing.Sums {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := hashing.HashPath(p, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// put writes one archive through the Writer interface, as the sync engine
// does: stage, hash the staged file, commit.
func put(ctx context.Context, t testing.TB, w backends.Writer, pkg backends.Package, zipBytes []byte, force bool) (oci.Outcome, error) {
	t.Helper()
	st, err := w.Stage(ctx, pkg)
	if err != nil {
		return 0, err
	}
	if _, err := st.Write(zipBytes); err != nil {
		t.Fatal(err)
	}
	sums, err := hashing.HashPath(st.Path(), hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, sums, force); err != nil {
		return 0, err
	}
	return st.(*oci.Staged).Outcome(), nil
}

func mustPut(ctx context.Context, t testing.TB, w backends.Writer, pkg backends.Package, zipBytes []byte) oci.Outcome {
	t.Helper()
	o, err := put(ctx, t, w, pkg, zipBytes, false)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func readAll(t testing.TB, rc io.ReadCloser) ([]byte, error) {
	t.Helper()
	defer rc.Close()
	return io.ReadAll(rc)
}
