package hashing_test

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/hashing"
)

// Extract never writes outside its directory, whatever the zip names.
func TestExtractRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "/abs/evil", "a/../../evil"} {
		z := backendtest.Zip(t, backendtest.Entry{Name: name, Body: []byte("x")})
		p := filepath.Join(t.TempDir(), "z.zip")
		if err := os.WriteFile(p, z, 0o644); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "out")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		err := hashing.Extract(p, dst, hashing.Options{})
		if err == nil || !strings.Contains(err.Error(), "refusing to extract outside") {
			t.Errorf("%s: err = %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "evil")); err == nil {
			t.Errorf("%s: escaped", name)
		}
	}
}

func TestCheckExecutable(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		entry, typ string
		ok         bool
	}{
		{"terraform-provider-google_v5.0.0_x5", "google", true},
		{"terraform-provider-google", "google", true},
		{"terraform-provider-google.exe", "google", true},
		{"terraform-provider-google-beta_v5.0.0_x5", "google", false}, // another provider's
		{"terraform-provider-google_v5.0.0_x5", "google-beta", false},
		{"bin/terraform-provider-google", "google", false}, // not at the root
		{"README.md", "google", false},
	} {
		p := filepath.Join(dir, "z.zip")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		w, _ := zw.Create(c.entry)
		if _, err := w.Write([]byte("#!/bin/sh\n")); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		err = hashing.CheckExecutable(p, c.typ)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, hashing.ErrNoExecutable) {
			t.Errorf("%s as %s: %v, want ok %v", c.entry, c.typ, err, c.ok)
		}
	}
}
