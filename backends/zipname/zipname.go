// Package zipname is the provider protocols' naming of release archives:
// terraform-provider-TYPE_VERSION_OS_ARCH.zip, which the filesystem layout,
// the network mirror protocol, release directories and the object store
// layout share. It parses a name the way the clients do; the name of a
// package is backends.Package.Filename.
package zipname

import (
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
)

// Prefix is the start of p's archive names, before VERSION_OS_ARCH.zip.
func Prefix(p backends.Provider) string { return "terraform-provider-" + p.Type + "_" }

// Parse parses a packed archive file name the way the clients do:
// lowercased, prefix terraform-provider-TYPE_, suffix .zip, then
// VERSION_OS_ARCH (extra _parts ignored).
func Parse(p backends.Provider, filename string) (backends.Package, error) {
	return (*Parser)(nil).Parse(p, filename)
}

// Parser parses many names, reusing what it has parsed, by their text: a
// provider's platforms share one parsed version and its versions a few
// platforms, so a scan of 100,000 archives parses each once. A nil
// *Parser parses as Parse does. A Parser is not safe for concurrent use.
type Parser struct {
	versions  map[string]backends.Version
	platforms map[string]backends.Platform
	prefix    string // the file names' prefix, for typ
	typ       string
}

// NewParser returns a Parser with nothing parsed yet.
func NewParser() *Parser {
	return &Parser{versions: map[string]backends.Version{}, platforms: map[string]backends.Platform{}}
}

// prefixOf returns the prefix of p's packed file names.
func (s *Parser) prefixOf(p backends.Provider) string {
	if s == nil {
		return Prefix(p)
	}
	if s.prefix == "" || s.typ != p.Type {
		s.prefix, s.typ = Prefix(p), p.Type
	}
	return s.prefix
}

// Parse is the package's Parse, reusing what s holds.
func (s *Parser) Parse(p backends.Provider, filename string) (backends.Package, error) {
	norm := strings.ToLower(filename)
	prefix := s.prefixOf(p)
	if !strings.HasPrefix(norm, prefix) {
		return backends.Package{}, fmt.Errorf("file name lacks the prefix %q", prefix)
	}
	if !strings.HasSuffix(norm, ".zip") {
		return backends.Package{}, fmt.Errorf("file name lacks the suffix %q", ".zip")
	}
	// VERSION_OS_ARCH[_...]: the parts strings.Split would give, without
	// its slice; plat is OS_ARCH.
	rest := norm[len(prefix) : len(norm)-len(".zip")]
	verText, platText, ok := strings.Cut(rest, "_")
	if ok {
		var os, more, arch string
		if os, more, ok = strings.Cut(platText, "_"); ok {
			arch, _, _ = strings.Cut(more, "_")
			platText = platText[:len(os)+1+len(arch)]
		}
	}
	if !ok {
		return backends.Package{}, fmt.Errorf("file name does not include version, OS and architecture")
	}
	v, ok := s.version(verText)
	if !ok {
		var err error
		if v, err = backends.ParseVersion(verText); err != nil {
			return backends.Package{}, err
		}
		if s != nil {
			s.versions[strings.Clone(verText)] = v
		}
	}
	plat, ok := s.platform(platText)
	if !ok {
		var err error
		if plat, err = backends.ParsePlatform(strings.Clone(platText)); err != nil {
			return backends.Package{}, err
		}
		if s != nil {
			s.platforms[plat.String()] = plat
		}
	}
	return backends.Package{Provider: p, Version: v, Platform: plat}, nil
}

func (s *Parser) version(text string) (backends.Version, bool) {
	if s == nil {
		return nil, false
	}
	v, ok := s.versions[text]
	return v, ok
}

func (s *Parser) platform(text string) (backends.Platform, bool) {
	if s == nil {
		return backends.Platform{}, false
	}
	plat, ok := s.platforms[text]
	return plat, ok
}
