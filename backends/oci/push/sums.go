package push

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

// SumsFile is a release's SHA256SUMS given among push's arguments: the
// zh: of each zip it lists, which is the layer's digest, so the zips it
// lists are uploaded without being read first (the registry checks the
// digest as it receives them).
type SumsFile struct {
	Path string
	// Type and Version, when the name is goreleaser's
	// terraform-provider-TYPE_VERSION_SHA256SUMS, are the only zips it
	// speaks for; otherwise it speaks for every zip given.
	Type, Version string
	sums          map[string]string // file name -> lower-case hex
}

// IsSumsFile reports whether path names a SHA256SUMS file, or (sig) its
// detached signature, by its name.
func IsSumsFile(path string) (sums, sig bool) {
	base := strings.ToLower(filepath.Base(path))
	if strings.HasSuffix(base, "sha256sums") {
		return true, false
	}
	return false, strings.HasSuffix(base, "sha256sums.sig")
}

// ReadSums reads a SHA256SUMS file.
func ReadSums(path string) (SumsFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return SumsFile{}, err
	}
	sums, err := provenance.ParseSums(b)
	if err != nil {
		return SumsFile{}, fmt.Errorf("%s: not a SHA256SUMS file: %v", path, err)
	}
	sf := SumsFile{Path: path, sums: sums}
	base := filepath.Base(path)
	if rest, ok := cutPrefixFold(base, "terraform-provider-"); ok {
		if rest, ok := cutSuffixFold(rest, "_SHA256SUMS"); ok {
			if i := strings.LastIndexByte(rest, '_'); i > 0 {
				sf.Type, sf.Version = strings.ToLower(rest[:i]), rest[i+1:]
			}
		}
	}
	return sf, nil
}

// speaksFor reports whether the file states the zips of pkg's version.
func (sf SumsFile) speaksFor(pkg backends.Package) bool {
	return sf.Type == "" || sf.Type == pkg.Provider.Type && sf.Version == pkg.Version.String()
}

// evidence returns what the SHA256SUMS files that speak for f state about
// it; a zip one of them does not list is an error naming both, as is a
// file name listed twice with different sums.
func evidence(f ZipFile, sums []SumsFile) ([]hashing.Evidence, error) {
	var out []hashing.Evidence
	for _, sf := range sums {
		if !sf.speaksFor(f.Package) {
			continue
		}
		sum, ok := sf.sums[filepath.Base(f.Path)]
		if !ok {
			return nil, fmt.Errorf("%s is not listed in %s, which states the zips of %s %s: give the SHA256SUMS of its release, or its own zips", f.Path, sf.Path, f.Package.Provider, f.Package.Version)
		}
		out = append(out, hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceReleaseSums, Detail: sf.Path}, Hashes: []hashing.Hash{hashing.Hash("zh:" + sum)}})
	}
	return out, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
