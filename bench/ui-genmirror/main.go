package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/dirhash"
)

func main() {
	allPlatforms := []string{"darwin_amd64", "darwin_arm64", "freebsd_amd64", "linux_386", "linux_amd64", "linux_arm", "linux_arm64", "openbsd_amd64", "solaris_amd64", "windows_386", "windows_amd64", "windows_arm64"}
	dir := flag.String("dir", "", "the mirror directory to write (must not exist)")
	nProviders := flag.Int("providers", 20, "providers (bench/p000 … )")
	nVersions := flag.Int("versions", 1000, "versions of each provider")
	nPlatforms := flag.Int("platforms", 5, "platforms of each version (at most 12)")
	host := flag.String("host", "registry.terraform.io", "the providers' hostname")
	flag.Parse()
	if *dir == "" || *nPlatforms < 1 || *nPlatforms > len(allPlatforms) {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat(*dir); err == nil {
		fmt.Fprintf(os.Stderr, "ui-genmirror: %s exists; remove it or choose another\n", *dir)
		os.Exit(2)
	}
	if err := generate(*dir, *host, *nProviders, *nVersions, allPlatforms[:*nPlatforms]); err != nil {
		fmt.Fprintln(os.Stderr, "ui-genmirror:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d archives\n", *dir, *nProviders**nVersions**nPlatforms)
}

// archive is a tiny but valid release zip and its hashes. Every archive of
// a provider has the same bytes: the benchmark measures listing, and the
// clients' hashes do not depend on the file name.
type archive struct {
	zip    []byte
	hashes []string
}

func makeArchive(typ string) (archive, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "terraform-provider-" + typ, Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return archive{}, err
	}
	fmt.Fprintf(w, "#!/bin/sh\necho 'not a real provider: %s'\nexit 1\n", typ)
	if err := zw.Close(); err != nil {
		return archive{}, err
	}
	tmp, err := os.CreateTemp("", "ui-genmirror-*.zip")
	if err != nil {
		return archive{}, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		return archive{}, err
	}
	if err := tmp.Close(); err != nil {
		return archive{}, err
	}
	h1, err := dirhash.HashZip(tmp.Name(), dirhash.Hash1)
	if err != nil {
		return archive{}, err
	}
	return archive{zip: buf.Bytes(), hashes: []string{h1, fmt.Sprintf("zh:%x", sha256.Sum256(buf.Bytes()))}}, nil
}

func version(i int) string { return fmt.Sprintf("%d.%d.0", i/100, i%100) }

func generate(dir, host string, nProviders, nVersions int, platforms []string) error {
	for p := range nProviders {
		typ := fmt.Sprintf("p%03d", p)
		pdir := filepath.Join(dir, host, "bench", typ)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return err
		}
		a, err := makeArchive(typ)
		if err != nil {
			return err
		}
		index := map[string]map[string]struct{}{"versions": {}}
		for v := 1; v <= nVersions; v++ {
			ver := version(v)
			type entry struct {
				Hashes []string `json:"hashes"`
				URL    string   `json:"url"`
			}
			doc := map[string]map[string]entry{"archives": {}}
			for _, plat := range platforms {
				name := fmt.Sprintf("terraform-provider-%s_%s_%s.zip", typ, ver, plat)
				if err := os.WriteFile(filepath.Join(pdir, name), a.zip, 0o644); err != nil {
					return err
				}
				doc["archives"][plat] = entry{Hashes: a.hashes, URL: name}
			}
			if err := writeJSON(filepath.Join(pdir, ver+".json"), doc); err != nil {
				return err
			}
			index["versions"][ver] = struct{}{}
		}
		if err := writeJSON(filepath.Join(pdir, "index.json"), index); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
