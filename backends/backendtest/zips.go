package backendtest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

// Entry is one file in a zip.
type Entry struct {
	Name string
	Body []byte
	Mode os.FileMode // zero: 0755 for the executable, as release zips have it
}

// Zip builds a zip with the entries in the given order, deflated.
func Zip(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		mode := e.Mode
		if mode == 0 {
			mode = 0o755
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ProviderZip is a release zip for pkg holding a tiny executable script
// named as the clients expect, terraform-provider-TYPE_vVERSION. salt makes
// otherwise equal packages differ.
func ProviderZip(t testing.TB, pkg backends.Package, salt string) []byte {
	t.Helper()
	name := fmt.Sprintf("terraform-provider-%s_v%s", pkg.Provider.Type, pkg.Version)
	body := fmt.Sprintf("#!/bin/sh\n# %s %s\necho 'not a real provider: %s'\nexit 1\n", pkg, salt, pkg.Provider.Type)
	return Zip(t, Entry{Name: name, Body: []byte(body)})
}

// Pkg builds a package from strings, failing the test on bad input.
func Pkg(t testing.TB, provider, version, platform string) backends.Package {
	t.Helper()
	p, v := Provider(t, provider), Version(t, version)
	plat, err := backends.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	return backends.Package{Provider: p, Version: v, Platform: plat}
}

// Provider parses s, failing the test on bad input.
func Provider(t testing.TB, s string) backends.Provider {
	t.Helper()
	p, err := backends.ParseProvider(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Version parses s, failing the test on bad input.
func Version(t testing.TB, s string) backends.Version {
	t.Helper()
	v, err := backends.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Seed is a package and its zip, to put into a place under test.
type Seed struct {
	Package backends.Package
	Zip     []byte
}

// Seeds makes a seed for every combination, each with its own zip.
func Seeds(t testing.TB, providers, versions, platforms []string) []Seed {
	t.Helper()
	var out []Seed
	for _, p := range providers {
		for _, v := range versions {
			for _, plat := range platforms {
				pkg := Pkg(t, p, v, plat)
				out = append(out, Seed{Package: pkg, Zip: ProviderZip(t, pkg, "")})
			}
		}
	}
	return out
}

// WritePacked writes seeds into dir in the packed layout, with no index
// documents (as a hand-made filesystem mirror has them).
func WritePacked(t testing.TB, dir string, seeds []Seed) {
	t.Helper()
	for _, s := range seeds {
		p := filepath.Join(dir, s.Package.Provider.HostnameForDisplay(), s.Package.Provider.Namespace, s.Package.Provider.Type, s.Package.Filename())
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, s.Zip, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
