package push

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/zipname"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// ZipFile is one release zip and the package it is.
type ZipFile struct {
	Path    string
	Package backends.Package
}

// Naming is what the command line says about zips whose names do not.
type Naming struct {
	// Providers are the --provider values; a zip takes the one whose type
	// its file name starts with (terraform-provider-TYPE_), or the only one.
	Providers []backends.ProviderFilter
	// Version, when set, is the version of zips whose names do not say.
	Version string
	// Platform, when set, is the platform of zips whose names do not say.
	Platform string
}

// Identify works out the package each zip is: the provider from the
// --provider flags (full addresses: a zip says nothing of its host),
// version and platform from the standard file name
// terraform-provider-TYPE_VERSION_OS_ARCH.zip or from the flags.
func Identify(paths []string, n Naming) ([]ZipFile, error) {
	if len(n.Providers) == 0 {
		return nil, backends.Usagef("pushing zip files needs --provider HOSTNAME/NAMESPACE/TYPE: a release zip's name gives only the type")
	}
	for _, f := range n.Providers {
		if _, err := f.On(""); err != nil {
			return nil, err
		}
	}
	// Only an exact version ("1.2.3" or "= 1.2.3") can name a zip's version;
	// a constraint still selects among zips with standard names.
	var flagVersion backends.Version
	if n.Version != "" {
		if v, err := backends.ParseVersion(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(n.Version), "="))); err == nil {
			flagVersion = v
		}
	}
	var flagPlatform *backends.Platform
	if n.Platform != "" {
		p, err := backends.ParsePlatform(n.Platform)
		if err != nil {
			return nil, fmt.Errorf("--platform: %v", err)
		}
		flagPlatform = &p
	}
	var out []ZipFile
	for _, path := range paths {
		zf, err := identify(path, n.Providers, flagVersion, flagPlatform)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, zf)
	}
	seen := map[backends.PackageKey]string{}
	for _, zf := range out {
		if other, dup := seen[zf.Package.Key()]; dup {
			return nil, fmt.Errorf("%s and %s are both %s", other, zf.Path, zf.Package)
		}
		seen[zf.Package.Key()] = zf.Path
	}
	return out, nil
}

func identify(path string, filters []backends.ProviderFilter, version backends.Version, platform *backends.Platform) (ZipFile, error) {
	base := filepath.Base(path)
	var candidates []backends.ProviderFilter
	for _, f := range filters {
		if strings.HasPrefix(strings.ToLower(base), "terraform-provider-"+f.Type+"_") {
			candidates = append(candidates, f)
		}
	}
	if len(candidates) == 0 && len(filters) == 1 {
		candidates = filters
	}
	switch len(candidates) {
	case 0:
		return ZipFile{}, fmt.Errorf("the file name names none of the providers given with --provider (want terraform-provider-TYPE_VERSION_OS_ARCH.zip)")
	case 1:
	default:
		return ZipFile{}, fmt.Errorf("several --provider values have this type (%s, %s): push them separately", candidates[0], candidates[1])
	}
	p, err := candidates[0].On("")
	if err != nil {
		return ZipFile{}, err
	}
	// A standard name decides; --version and --platform then select among
	// the zips, as they select among a mirror's archives.
	pkg, nameErr := zipname.Parse(p, base)
	switch {
	case nameErr == nil:
	case version != nil && platform != nil:
		pkg = backends.Package{Provider: p, Version: version, Platform: *platform}
	default:
		return ZipFile{}, fmt.Errorf("cannot tell the version and platform from the file name (%v): name it terraform-provider-%s_VERSION_OS_ARCH.zip, or pass an exact --version and one --platform", nameErr, p.Type)
	}
	return ZipFile{Path: path, Package: pkg}, nil
}

// Zips is a place made of release zips on disk, for the sync engine to read
// from. Each zip is a release file given by its publisher
// (hashing.SourceRelease), the origin itself. Where a SHA256SUMS given
// beside it states its zh: (the layer's digest), the engine uploads the
// blob straight from the file under that digest without reading it first,
// and the registry checks it; where none does, the engine computes zh: as
// it reads the file, once, then uploads it. h1: only with --hashes all.
type Zips struct {
	name     string
	files    []ZipFile
	evidence map[string][]hashing.Evidence // by path: the SHA256SUMS lines
	sums     []SumsFile
	warnings []string // OpenReleaseDir's notes
}

var (
	_ backends.Reader           = (*Zips)(nil)
	_ backends.LocalPather      = (*Zips)(nil)
	_ backends.ProvenanceReader = (*Zips)(nil)
)

// NewZips checks the zips: each must be a zip holding the provider's
// executable (terraform-provider-TYPE, maybe with a _vVERSION or .exe
// suffix) at its root, which OpenTofu needs to install it, and be listed
// in each of sums that speaks for its version; each of sums must speak
// for some zip (a usage error naming it otherwise). Only their central
// directories are read.
func NewZips(ctx context.Context, files []ZipFile, sums []SumsFile) (*Zips, error) {
	z := &Zips{files: files, evidence: map[string][]hashing.Evidence{}, sums: sums}
	switch len(files) {
	case 1:
		z.name = files[0].Path
	default:
		z.name = fmt.Sprintf("%d zip files", len(files))
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := checkExecutable(f); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		ev, err := evidence(f, sums)
		if err != nil {
			return nil, err
		}
		z.evidence[f.Path] = ev
	}
	for _, sf := range sums {
		if !slices.ContainsFunc(files, func(f ZipFile) bool { return sf.speaksFor(f.Package) }) {
			// Given with --signing-key, its zips would go up unsigned
			// with no word said.
			return nil, backends.Usagef("%s states the zips of %s %s, and none of the zips given is of that version: give the SHA256SUMS of their release", sf.Path, sf.Type, sf.Version)
		}
	}
	return z, nil
}

func checkExecutable(f ZipFile) error {
	r, err := hashing.OpenZip(f.Path)
	if err != nil {
		return fmt.Errorf("not a usable zip: %w", err)
	}
	defer func() { _ = r.Close() }() // read only
	prefix := "terraform-provider-" + f.Package.Provider.Type
	for _, e := range r.File {
		if hashing.HasExecutable(e.Name, e.FileInfo().IsDir(), prefix) {
			return nil
		}
	}
	return fmt.Errorf("the zip holds no %s executable at its root, which OpenTofu needs to install it (is this the release zip of %s?)", prefix, f.Package.Provider)
}

func (z *Zips) String() string { return z.name }

// Files returns the zips, in the order given.
func (z *Zips) Files() []ZipFile { return append([]ZipFile(nil), z.files...) }

// Providers lists the providers of the zips.
func (z *Zips) Providers(ctx context.Context) ([]backends.Provider, error) {
	seen := map[backends.Provider]bool{}
	var out []backends.Provider
	for _, f := range z.files {
		if !seen[f.Package.Provider] {
			seen[f.Package.Provider] = true
			out = append(out, f.Package.Provider)
		}
	}
	backends.SortProviders(out)
	return out, nil
}

// Versions lists p's versions among the zips, newest first.
func (z *Zips) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	seen := map[string]bool{}
	var out []backends.Version
	for _, f := range z.files {
		if f.Package.Provider == p && !seen[f.Package.Version.String()] {
			seen[f.Package.Version.String()] = true
			out = append(out, f.Package.Version)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %s: %w", z.name, p, backends.ErrNotFound)
	}
	backends.SortVersionsNewestFirst(out)
	return out, nil
}

// Archives lists the zips of p at v.
func (z *Zips) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	var out []backends.Archive
	for _, f := range z.files {
		if f.Package.Provider != p || f.Package.Version.String() != v.String() {
			continue
		}
		fi, err := os.Stat(f.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, backends.Archive{Package: f.Package, Layout: backends.Packed, Size: fi.Size(), Location: f.Path,
			Evidence: append([]hashing.Evidence{{Source: hashing.Source{Kind: hashing.SourceRelease, Detail: f.Path}}}, z.evidence[f.Path]...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Platform.String() < out[j].Platform.String() })
	return out, nil
}

// Open opens a zip.
func (z *Zips) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	return regular.Open(a.Location)
}

// LocalPath returns the zip's path.
func (z *Zips) LocalPath(a backends.Archive) string { return a.Location }

// Provenance is the proof a signed SHA256SUMS given beside the zips of p
// at v gives (SumsFile.CheckSignature), in the form an origin registry's
// takes: sync checks it, applies the trust policy, checks each zip against
// the signed line and writes it into the destination. A signature that
// did not check is the error; a version no signed SHA256SUMS lists is
// backends.ErrNotFound.
func (z *Zips) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	for _, f := range z.files {
		if f.Package.Provider != p || f.Package.Version.String() != v.String() {
			continue
		}
		for _, sf := range z.sums {
			if sf.sig != nil && sf.lists(f) {
				return sf.provenance(p, v)
			}
		}
	}
	return nil, fmt.Errorf("%s: %s %s: no signed SHA256SUMS: %w", z.name, p, v, backends.ErrNotFound)
}
