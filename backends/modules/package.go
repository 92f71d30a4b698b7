package modules

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// Annotation keys tfmirror records on the OCI manifests and sidecar
// documents it writes, so a mirror says where each package came from
// (OpenTofu records no module checksums itself).
const (
	// AnnotationH1 is the h1: hash of the package contents, which stays the
	// same when only the zip's encoding changes.
	AnnotationH1 = "dev.tfmirror.module.h1"
	// AnnotationAddress is the registry address, HOST/NAMESPACE/NAME/SYSTEM.
	AnnotationAddress = "dev.tfmirror.module.address"
	// AnnotationSubdir is the module's directory inside the package, to be
	// kept in the source addresses that use it.
	AnnotationSubdir = "dev.tfmirror.module.subdir"
	// AnnotationSource, AnnotationRevision and AnnotationVersion are the
	// standard OCI keys for where the package was fetched from, the git
	// commit it was built from, and the module version.
	AnnotationSource   = "org.opencontainers.image.source"
	AnnotationRevision = "org.opencontainers.image.revision"
	AnnotationVersion  = "org.opencontainers.image.version"
	// AnnotationTitle names the layer's file, as `oras push` does.
	AnnotationTitle = "org.opencontainers.image.title"
)

// Listing is one version of a module as a place holds or offers it.
type Listing struct {
	Module  Module
	Version Version
	// Listed is the version as the place lists it: the registry's string
	// (perhaps "v1.2"), an OCI tag, a file name.
	Listed string
	// Location is where the package lives, as a configuration would name it:
	// the registry's location, an oci://...?digest= address, a file path.
	Location string
	// Source is the registry's location, parsed (registries only).
	Source *Location
	// Digest is the OCI manifest digest (OCI places only).
	Digest string
	// SHA256 (hex) of the package zip and Revision, the git commit it was
	// built from, are its provenance, where a mirror keeps them (a
	// directory's record, an OCI manifest's layer and annotations).
	SHA256   string
	Revision string
	// Err is why the location could not be found; the listing still names
	// the version.
	Err error
}

// Listings is what ListModule returns.
type Listings struct {
	Items []Listing
	// Warnings are things the place offered that were skipped (versions
	// that do not parse, stray tags or files).
	Warnings []string
}

// Lister is what every module place offers (registries, OCI and
// filesystem mirrors): the versions of one module and where each package
// lives. Front ends (ls --module, the UI's modules view) call it.
type Lister interface {
	// String names the place as the user wrote it.
	String() string
	// ListModule lists the versions of m that c selects, newest first.
	// A module the place does not hold is an error wrapping
	// backends.ErrNotFound.
	ListModule(ctx context.Context, m Module, c backends.VersionConstraint) (Listings, error)
}

// Package is a module package built as a zip in a local file, ready to be
// stored.
type Package struct {
	Module  Module
	Version Version
	// Path is the zip; Remove deletes it.
	Path  string
	Size  int64
	Files int
	// Sums: H1 over the contents (as dirhash reads the zip), ZH the SHA-256
	// of the zip itself, which is also its OCI blob digest.
	Sums hashing.Sums
	// Source is the location the package was fetched from (without subdir)
	// and Subdir the module's directory inside it.
	Source string
	Subdir string
	// Revision is the git commit the package was built from, if any.
	Revision string
}

// Record is what a mirror that keeps packages as files (a directory, a
// bucket) writes beside each zip, as VERSION.json: the package's
// provenance (where it came from, its commit) and sums, and the module's
// directory inside it.
type Record struct {
	Address  string `json:"address"`
	Version  string `json:"version"`
	H1       string `json:"h1"`
	ZH       string `json:"zh"`
	Size     int64  `json:"size"`
	Source   string `json:"source,omitempty"`
	Revision string `json:"revision,omitempty"`
	Subdir   string `json:"subdir,omitempty"`
}

// Record is the record kept of p.
func (p *Package) Record() Record {
	return Record{
		Address: p.Module.String(), Version: p.Version.String(), H1: string(p.Sums.H1), ZH: string(p.Sums.ZH),
		Size: p.Size, Source: p.Source, Revision: p.Revision, Subdir: p.Subdir,
	}
}

// Marshal is r as its file holds it: indented JSON and a newline.
func (r Record) Marshal() []byte {
	b, _ := json.MarshalIndent(r, "", "  ") // strings and an integer: no error
	return append(b, '\n')
}

// Label names the package in messages: HOST/NAMESPACE/NAME/SYSTEM VERSION.
func (p *Package) Label() string { return p.Module.String() + " " + p.Version.String() }

// Digest is the zip's OCI digest, "sha256:HEX".
func (p *Package) Digest() string {
	return "sha256:" + strings.TrimPrefix(string(p.Sums.ZH), "zh:")
}

// Remove deletes the zip file.
func (p *Package) Remove() error {
	if p == nil || p.Path == "" {
		return nil
	}
	return os.Remove(p.Path)
}

// Builder fetches a package from a registry location and packs it as a
// zip, reporting bytes received to progress (which may be nil).
type Builder interface {
	Build(ctx context.Context, m Module, v Version, loc Location, progress func(n int64)) (*Package, error)
}

// Stored is what a Writer did with a package.
type Stored struct {
	// Address is the source address configurations use for the stored
	// package: oci://REGISTRY/REPO//SUBDIR?digest=sha256:... for OCI, the
	// zip's path for a directory.
	Address string
	// TagAddress is the same with ?tag= instead of the digest (OCI only).
	TagAddress string
	// Present: the place already held a package with the same contents;
	// nothing was written.
	Present bool
	// Bytes written to the place (0 when Present).
	Bytes int64
	// Checks are the verifications made of what the place holds after the
	// write (or of what it already held).
	Checks []hashing.Check
}

// Writer is a module place that can store packages (OCI registries,
// directories).
type Writer interface {
	Lister
	// Put stores pkg under its module and version. When the place already
	// holds the same contents it writes nothing (Present). When it holds
	// different contents it returns an error wrapping backends.ErrConflict,
	// unless force. progress (may be nil) receives bytes written.
	Put(ctx context.Context, pkg *Package, force bool, progress func(n int64)) (Stored, error)
}

// Resolved is a mirrored package chosen for a configuration.
type Resolved struct {
	Version Version
	// Registry and Repository locate the package in OCI.
	Registry   string
	Repository string
	Digest     string // manifest digest
	Tag        string
	// Subdir is the module's directory inside the package.
	Subdir string
}

// Address returns the oci:// source address of the package with subdir
// (the configuration's own //subdir, "" for none) inside the package's
// subdir; pinned by digest, or by tag when byTag.
func (r Resolved) Address(subdir string, byTag bool) string {
	sub := r.Subdir
	if subdir != "" {
		sub = path.Join(sub, subdir)
	}
	if byTag {
		return OCIAddress(r.Registry, r.Repository, sub, "", r.Tag)
	}
	return OCIAddress(r.Registry, r.Repository, sub, r.Digest, "")
}

// OCIAddress builds an oci:// module source:
// oci://REGISTRY/REPOSITORY[//SUBDIR]?digest=D, or ?tag=T when digest is
// empty. The //subdir comes before the query, where OpenTofu looks for it.
func OCIAddress(registry, repository, subdir, digest, tag string) string {
	s := "oci://" + registry + "/" + repository
	if subdir != "" {
		s += "//" + subdir
	}
	if digest != "" {
		return s + "?digest=" + digest
	}
	return s + "?tag=" + tag
}

// Resolver picks, among the packages a mirror holds for a module, the
// newest that a version constraint selects (OCI mirrors).
type Resolver interface {
	String() string
	Resolve(ctx context.Context, m Module, c backends.VersionConstraint) (Resolved, error)
}
