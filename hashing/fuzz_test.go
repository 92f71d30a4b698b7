package hashing_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

func FuzzParseHash(f *testing.F) {
	for _, s := range []string{"h1:qjsREM4DqEWECD43FcPqddZ9oxCG+IaMTxvWPciS05g=", "zh:00", "foo:bar", ":", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := hashing.ParseHash(s)
		if err != nil {
			return
		}
		if h.String() != s || string(h.Scheme())+h.Value() != s {
			t.Fatalf("%q does not round-trip", s)
		}
	})
}

// FuzzHashZip hashes arbitrary bytes as a zip: an error or a hash, never a
// panic or a hang (the unpacked size is capped).
func FuzzHashZip(f *testing.F) {
	f.Add(backendtest.Zip(f, backendtest.Entry{Name: "terraform-provider-x", Body: []byte("hello")}))
	f.Add(backendtest.Zip(f, backendtest.Entry{Name: "../evil", Body: []byte("x")}, backendtest.Entry{Name: "../evil", Body: []byte("y")}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f.zip")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		hashing.ZipH1(p, hashing.Options{MaxUnpacked: 16 << 20})
	})
}
