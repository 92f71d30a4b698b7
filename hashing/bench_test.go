package hashing_test

import (
	"archive/zip"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/hashing"
	"golang.org/x/mod/sumdb/dirhash"
)

// benchZip writes a zip whose single entry is 50 MB of real Go binary bytes
// (the terraform executable where present, else this test binary), which
// deflate about as well as real provider binaries do.
func benchZip(b *testing.B) (path string, unpacked int64) {
	b.Helper()
	src, err := exec.LookPath("terraform")
	if err != nil {
		src, _ = os.Executable()
	}
	seed, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	const size = 50 << 20
	body := make([]byte, 0, size)
	for len(body) < size {
		body = append(body, seed[:min(len(seed), size-len(body))]...)
	}
	path = filepath.Join(b.TempDir(), "terraform-provider-bench_1.0.0_linux_amd64.zip")
	f, _ := os.Create(path)
	zw := zip.NewWriter(f)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "terraform-provider-bench_v1.0.0", Method: zip.Deflate})
	if _, err := w.Write(body); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, size
}

func BenchmarkHash(b *testing.B) {
	path, unpacked := benchZip(b)
	info, _ := os.Stat(path)
	b.Logf("zip %d bytes, unpacked %d bytes (ratio %.2f)", info.Size(), unpacked, float64(unpacked)/float64(info.Size()))

	b.Run("sha256-zip-bytes", func(b *testing.B) { // the physical limit on one core
		b.SetBytes(info.Size())
		for b.Loop() {
			f, _ := os.Open(path)
			h := sha256.New()
			if _, err := io.Copy(h, f); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("zh", func(b *testing.B) {
		b.SetBytes(info.Size())
		for b.Loop() {
			if _, err := hashing.ZipZH(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sha256-unpacked-bytes", func(b *testing.B) {
		body := make([]byte, unpacked)
		b.SetBytes(unpacked)
		for b.Loop() {
			sha256.Sum256(body)
		}
	})
	b.Run("h1", func(b *testing.B) {
		b.SetBytes(info.Size())
		for b.Loop() {
			if _, err := hashing.ZipH1(path, hashing.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What verify, lock and a sync's --hashes all compute: zh: and h1:
	// in one read, each entry inflated as the bytes go by (the stream's
	// own inflater; ZipH1 above is its fallback).
	b.Run("zh+h1-stream", func(b *testing.B) {
		b.SetBytes(info.Size())
		for b.Loop() {
			if _, err := hashing.HashZipSums(path, true, hashing.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("h1-dirhash-stdlib", func(b *testing.B) {
		b.SetBytes(info.Size())
		for b.Loop() {
			if _, err := dirhash.HashZip(path, dirhash.Hash1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
