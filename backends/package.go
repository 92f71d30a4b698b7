package backends

import (
	"fmt"
	"slices"

	"github.com/tfmirror/tfmirror/hashing"
)

// Package is one provider release for one platform: the unit every place
// stores and every sync job moves.
type Package struct {
	Provider Provider
	Version  Version
	Platform Platform
}

func (p Package) String() string {
	return fmt.Sprintf("%s %s %s", p.Provider, p.Version, p.Platform)
}

// Key identifies a package in maps.
func (p Package) Key() PackageKey {
	return PackageKey{Provider: p.Provider, Version: p.Version.String(), Platform: p.Platform}
}

// PackageKey is a comparable form of Package.
type PackageKey struct {
	Provider Provider
	Version  string
	Platform Platform
}

// Filename is the standard release archive name,
// terraform-provider-TYPE_VERSION_OS_ARCH.zip.
func (p Package) Filename() string {
	return fmt.Sprintf("terraform-provider-%s_%s_%s.zip", p.Provider.Type, p.Version, p.Platform)
}

// Layout says how a place holds a package.
type Layout int

const (
	// Packed is a release zip, as the origin registry serves it.
	Packed Layout = iota
	// Unpacked is an extracted directory (filesystem mirrors only).
	Unpacked
)

func (l Layout) String() string {
	if l == Unpacked {
		return "unpacked"
	}
	return "packed"
}

// Archive is a package as one place holds it, with what that place states
// about it.
type Archive struct {
	Package
	Layout Layout
	// Size in bytes of the zip, or -1 where the place does not say.
	Size int64
	// Evidence is what the place states about the archive's hashes (its
	// index, an OCI digest, signed checksums), labelled with the source.
	Evidence []hashing.Evidence
	// Location is a path or URL for messages.
	Location string
}

// Hashes returns every hash the place states for the archive, sorted and
// without duplicates. Callers do not change the slice: where one piece of
// evidence states them in that order already (a mirror's document), it is
// that evidence's own, capped, and not a copy for each of 100,000
// archives.
func (a Archive) Hashes() []hashing.Hash {
	if len(a.Evidence) == 1 && len(a.Evidence[0].Hashes) > 0 && sortedUnique(a.Evidence[0].Hashes) {
		return slices.Clip(a.Evidence[0].Hashes)
	}
	var hs []hashing.Hash
	for _, e := range a.Evidence {
		hs = append(hs, e.Hashes...)
	}
	return hashing.SortUnique(hs)
}

func sortedUnique(hs []hashing.Hash) bool {
	for i := 1; i < len(hs); i++ {
		if hs[i-1] >= hs[i] {
			return false
		}
	}
	return true
}
