package oci_test

import (
	"archive/zip"
	"bytes"
	"context"
	"math/rand"
	"strconv"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// bigZip is a release zip of n incompressible bytes, like a real provider
// binary (tens of MB).
func bigZip(b *testing.B, pkg backends.Package, n int) []byte {
	b.Helper()
	body := make([]byte, n)
	rand.New(rand.NewSource(1)).Read(body)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "terraform-provider-" + pkg.Provider.Type, Method: zip.Store})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkPush pushes a 64 MB zip to a local registry: stage, hash, upload,
// manifest, index.
func BenchmarkPush(b *testing.B) {
	reg := ocitest.New(b)
	ctx := context.Background()
	pkg := benchPkg(b, "linux_amd64")
	z := bigZip(b, pkg, 64<<20)
	b.SetBytes(int64(len(z)))
	for i := 0; b.Loop(); i++ {
		// A new repository each time, so the blob is really uploaded.
		m := openTest(b, reg, "/bench/${namespace}/${type}"+strconv.Itoa(i))
		benchPut(ctx, b, m, pkg, z)
		if err := m.Flush(ctx, pkg.Provider); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkArchives lists a version of 14 platforms: tag, index, 14
// manifests.
func BenchmarkArchives(b *testing.B) {
	reg := ocitest.New(b)
	ctx := context.Background()
	m := openTest(b, reg, testTemplate)
	var p backends.Package
	for _, plat := range []string{"linux_amd64", "linux_arm64", "linux_386", "linux_arm", "darwin_amd64", "darwin_arm64", "windows_amd64",
		"windows_386", "windows_arm64", "freebsd_amd64", "freebsd_386", "freebsd_arm", "openbsd_amd64", "solaris_amd64"} {
		p = benchPkg(b, plat)
		benchPut(ctx, b, m, p, providerZip(b, p, ""))
	}
	if err := m.Flush(ctx, p.Provider); err != nil {
		b.Fatal(err)
	}
	r := openTest(b, reg, testTemplate)
	for b.Loop() {
		as, err := r.Archives(ctx, p.Provider, p.Version)
		if err != nil || len(as) != 14 {
			b.Fatal(as, err)
		}
	}
}

func benchPkg(b *testing.B, plat string) backends.Package {
	return mustPkg(b, "example.com/acme/alpha", "1.0.0", plat)
}

func benchPut(ctx context.Context, b *testing.B, m backends.Writer, pkg backends.Package, z []byte) {
	b.Helper()
	if _, err := put(ctx, b, m, pkg, z, false); err != nil {
		b.Fatal(err)
	}
}
