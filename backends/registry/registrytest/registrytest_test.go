package registrytest

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"
)

func TestZipIsDeterministic(t *testing.T) {
	a, b := ProviderZip("alpha", "1.0.0", "x"), ProviderZip("alpha", "1.0.0", "x")
	if !bytes.Equal(a, b) {
		t.Fatal("equal inputs gave different zips")
	}
	if bytes.Equal(a, ProviderZip("alpha", "1.0.0", "y")) {
		t.Fatal("different inputs gave equal zips")
	}
}

func TestTamperKeepsAValidZipOfTheSameSize(t *testing.T) {
	orig := ProviderZip("alpha", "1.0.0", "x")
	bad := Tamper(orig)
	if len(bad) != len(orig) || bytes.Equal(bad, orig) {
		t.Fatalf("tampered: %d bytes (orig %d), equal=%v; want same size, different bytes", len(bad), len(orig), bytes.Equal(bad, orig))
	}
	zr, err := zip.NewReader(bytes.NewReader(bad), int64(len(bad)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rc); err != nil {
		t.Fatalf("tampered zip does not read cleanly: %v", err)
	}
	if got := Tamper([]byte("not a zip")); string(got) == "not a zip" || len(got) != 9 {
		t.Fatalf("Tamper(non-zip) = %q", got)
	}
}
