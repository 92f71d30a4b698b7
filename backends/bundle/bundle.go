package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// The bundle's own files and format.
const (
	// Format is the manifest's "format"; Open refuses others.
	Format = "tfmirror.bundle.v1"
	// ManifestName is the first entry of the tar, TrailerName the last.
	ManifestName = ".tfmirror-bundle.json"
	TrailerName  = ".tfmirror-bundle.sha256"
	// maxManifest bounds the manifest Open reads: some 400 bytes a file,
	// so room for over a hundred thousand files.
	maxManifest = 64 << 20
	maxDocument = 16 << 20 // an index or version document
)

// ErrDamaged is wrapped by every error about a bundle's structure or
// contents: nothing in such a bundle is used.
var ErrDamaged = errors.New("the bundle is damaged or was altered; nothing in it is used (export it again)")

// Manifest is the bundle's first file.
type Manifest struct {
	Format string `json:"format"`
	// Packages are the release zips, sorted by path.
	Packages []Package `json:"packages"`
	// Files are every other entry of the tar (the zips too), sorted by
	// path: what Open and Audit check the tar against.
	Files []File `json:"files"`
}

// Package is one release zip in the bundle.
type Package struct {
	Provider string `json:"provider"`
	Version  string `json:"version"`
	Platform string `json:"platform"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	// Hashes are the zip's h1: and zh:, sorted.
	Hashes []string `json:"hashes"`
	// Signer is who signed the version's SHA256SUMS, when the bundle
	// holds its provenance; Open checks the signature itself.
	Signer *provenance.Signer `json:"signer,omitempty"`
}

// File is one entry of the tar.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Options configure Open.
type Options struct {
	// Provenance tunes the signature checks of the bundle's provenance.
	Provenance provenance.Options
}

// Bundle is an air-gap bundle opened for reading.
type Bundle struct {
	name, file string
	opts       Options
	manifest   *Manifest
	entries    map[string]entry
	archives   map[backends.Provider]map[string][]backends.Archive // by version
	versions   map[backends.Provider][]backends.Version
	provs      map[versionKey]*signed
}

type entry struct {
	offset, size int64
	sha256       string
}

type versionKey struct {
	p backends.Provider
	v string
}

// signed is a version's provenance as Open found it.
type signed struct {
	prov   *provenance.Provenance
	signer provenance.Signer
	err    error // the document does not parse or its signature does not check
}

var (
	_ backends.Reader           = (*Bundle)(nil)
	_ backends.Auditor          = (*Bundle)(nil)
	_ backends.ProvenanceReader = (*Bundle)(nil)
)

// Open reads the bundle at file's structure: its tar headers, its manifest
// (checked against the digest the last entry records) and its provenance
// documents (signatures checked). name is how the user wrote it.
func Open(name, file string, opts Options) (*Bundle, error) {
	b := &Bundle{name: name, file: file, opts: opts, entries: map[string]entry{},
		archives: map[backends.Provider]map[string][]backends.Archive{}, versions: map[backends.Provider][]backends.Version{}, provs: map[versionKey]*signed{}}
	f, err := regular.Open(file)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	defer func() { _ = f.Close() }() // read only
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("bundle %s: not a file (a bundle is the .tar file tfmirror export writes)", name)
	}
	order, err := b.scan(f)
	if err != nil {
		return nil, err
	}
	if b.manifest, err = b.readManifest(f, order); err != nil {
		return nil, err
	}
	if err := b.index(f); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Bundle) String() string { return b.name }

// Manifest returns the bundle's manifest.
func (b *Bundle) Manifest() *Manifest { return b.manifest }

func (b *Bundle) damaged(format string, args ...any) error {
	return fmt.Errorf("bundle %s: %s: %w", b.name, fmt.Sprintf(format, args...), ErrDamaged)
}

// scan reads the tar's headers, recording where each file's bytes are.
// The file is a seeker, so the tar reader skips over the data.
func (b *Bundle) scan(f *os.File) ([]string, error) {
	tr := tar.NewReader(f)
	var order []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				last := "its first entry"
				if len(order) > 0 {
					last = order[len(order)-1]
				}
				return nil, b.damaged("truncated: the tar ends inside %s (after %d entries)", last, len(order))
			}
			return nil, b.damaged("not a tar file as tfmirror export writes it: %v", err)
		}
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", b.name, err)
		}
		switch _, dup := b.entries[hdr.Name]; {
		case hdr.Typeflag != tar.TypeReg:
			return nil, b.damaged("entry %q is not a regular file", hdr.Name)
		case !validPath(hdr.Name):
			return nil, b.damaged("entry %q: not a clean relative path", hdr.Name)
		case dup:
			return nil, b.damaged("entry %q appears twice", hdr.Name)
		}
		b.entries[hdr.Name] = entry{offset: off, size: hdr.Size}
		order = append(order, hdr.Name)
	}
	return order, nil
}

func validPath(p string) bool {
	return p != "" && path.Clean(p) == p && !strings.HasPrefix(p, "/") && !strings.Contains(p, `\`) && p != ".." && !strings.HasPrefix(p, "../")
}

// readManifest reads the first entry, checks it against the digest in the
// last, and checks that the tar holds exactly the files it lists.
func (b *Bundle) readManifest(f *os.File, order []string) (*Manifest, error) {
	switch {
	case len(order) == 0:
		return nil, b.damaged("empty: no %s", ManifestName)
	case order[0] != ManifestName:
		return nil, b.damaged("its first entry is %q, not the manifest %s: not a bundle tfmirror export wrote", order[0], ManifestName)
	case order[len(order)-1] != TrailerName:
		return nil, b.damaged("truncated: its last entry is %s, not %s (it ends after %d entries)", order[len(order)-1], TrailerName, len(order))
	}
	raw, err := b.read(f, ManifestName, maxManifest)
	if err != nil {
		return nil, err
	}
	trailer, err := b.read(f, TrailerName, 1024)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	want, file, _ := strings.Cut(strings.TrimSpace(string(trailer)), "  ")
	if file != ManifestName || want != hex.EncodeToString(sum[:]) {
		return nil, b.damaged("the manifest's SHA-256 is %x, but %s records %q", sum, TrailerName, strings.TrimSpace(string(trailer)))
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, b.damaged("%s: %v", ManifestName, err)
	}
	if m.Format != Format {
		return nil, b.damaged("%s: format %q, want %q (a newer tfmirror wrote it?)", ManifestName, m.Format, Format)
	}
	listed := map[string]bool{}
	for _, fl := range m.Files {
		e, ok := b.entries[fl.Path]
		switch {
		case listed[fl.Path] || fl.Path == ManifestName || fl.Path == TrailerName:
			return nil, b.damaged("%s lists %s twice", ManifestName, fl.Path)
		case !ok:
			return nil, b.damaged("%s lists %s, which the tar does not hold (truncated, or the file was removed)", ManifestName, fl.Path)
		case e.size != fl.Size:
			return nil, b.damaged("%s: %d bytes, but the manifest says %d", fl.Path, e.size, fl.Size)
		}
		listed[fl.Path] = true
		e.sha256 = strings.ToLower(fl.SHA256)
		b.entries[fl.Path] = e
	}
	for _, name := range order[1 : len(order)-1] {
		if !listed[name] {
			return nil, b.damaged("the tar holds %s, which the manifest does not list", name)
		}
	}
	return &m, nil
}

// read returns the whole of a small entry.
func (b *Bundle) read(f io.ReaderAt, name string, limit int64) ([]byte, error) {
	e := b.entries[name]
	if e.size > limit {
		return nil, b.damaged("%s: %d bytes, more than such a file can be (%d)", name, e.size, limit)
	}
	buf := make([]byte, e.size)
	if _, err := f.ReadAt(buf, e.offset); err != nil {
		return nil, b.damaged("%s: %v", name, err)
	}
	return buf, nil
}

// readChecked reads a small entry and checks it against the manifest.
func (b *Bundle) readChecked(f io.ReaderAt, name string, limit int64) ([]byte, error) {
	buf, err := b.read(f, name, limit)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(buf); hex.EncodeToString(sum[:]) != b.entries[name].sha256 {
		return nil, b.damaged("%s: its SHA-256 is %x, but the manifest says %s", name, sum, b.entries[name].sha256)
	}
	return buf, nil
}

// index checks every file's place in the layout and builds the listing:
// each package where its path says, with the manifest's hashes; each
// provenance document parsed and its signature checked.
func (b *Bundle) index(f io.ReaderAt) error {
	kinds := map[string]fileKind{}
	for _, fl := range b.manifest.Files {
		k, err := classify(fl.Path)
		if err != nil {
			return b.damaged("%s: %v", fl.Path, err)
		}
		kinds[fl.Path] = k
	}
	for _, mp := range b.manifest.Packages {
		a, err := b.archive(mp, kinds)
		if err != nil {
			return err
		}
		p, v := a.Provider, a.Version.String()
		if b.archives[p] == nil {
			b.archives[p] = map[string][]backends.Archive{}
		}
		if b.archives[p][v] == nil {
			b.versions[p] = append(b.versions[p], a.Version)
		}
		b.archives[p][v] = append(b.archives[p][v], a)
	}
	for _, fl := range b.manifest.Files {
		k := kinds[fl.Path]
		if k.what == kindArchive && !k.listed {
			return b.damaged("%s is a release zip the manifest's packages do not describe", fl.Path)
		}
		if k.what == kindProvenance {
			if err := b.readProvenance(f, fl.Path, k); err != nil {
				return err
			}
		}
	}
	for p := range b.versions {
		backends.SortVersionsNewestFirst(b.versions[p])
		for v := range b.archives[p] {
			as := b.archives[p][v]
			sort.Slice(as, func(i, j int) bool { return as[i].Platform.String() < as[j].Platform.String() })
		}
	}
	return nil
}

// archive checks one package of the manifest against the layout and the
// file list.
func (b *Bundle) archive(mp Package, kinds map[string]fileKind) (backends.Archive, error) {
	p, err := backends.ParseProvider(mp.Provider)
	if err != nil {
		return backends.Archive{}, b.damaged("package %s: %v", mp.Path, err)
	}
	v, err := backends.ParseVersion(mp.Version)
	if err != nil {
		return backends.Archive{}, b.damaged("package %s: %v", mp.Path, err)
	}
	plat, err := backends.ParsePlatform(mp.Platform)
	if err != nil {
		return backends.Archive{}, b.damaged("package %s: %v", mp.Path, err)
	}
	pkg := backends.Package{Provider: p, Version: v, Platform: plat}
	k, ok := kinds[mp.Path]
	switch {
	case mp.Path != ArchivePath(pkg):
		return backends.Archive{}, b.damaged("package %s is at %q, not %s", pkg, mp.Path, ArchivePath(pkg))
	case !ok:
		return backends.Archive{}, b.damaged("package %s: %s is not in the file list", pkg, mp.Path)
	case k.listed:
		return backends.Archive{}, b.damaged("package %s is listed twice", pkg)
	case b.entries[mp.Path].size != mp.Size:
		return backends.Archive{}, b.damaged("package %s: %d bytes, but the manifest says %d", pkg, b.entries[mp.Path].size, mp.Size)
	}
	k.listed = true
	kinds[mp.Path] = k
	ev := hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceBundleManifest, Detail: b.name}}
	var sawH1, sawZH bool
	for _, s := range mp.Hashes {
		h, err := hashing.ParseHash(s)
		if err != nil {
			return backends.Archive{}, b.damaged("package %s: %v", pkg, err)
		}
		sawH1 = sawH1 || h.Scheme() == hashing.SchemeH1
		if h.Scheme() == hashing.SchemeZip {
			sawZH = true
			if h.Value() != b.entries[mp.Path].sha256 {
				return backends.Archive{}, b.damaged("package %s: the manifest states %s, but its file list %s", pkg, h, b.entries[mp.Path].sha256)
			}
		}
		ev.Hashes = append(ev.Hashes, h)
	}
	if !sawH1 || !sawZH {
		return backends.Archive{}, b.damaged("package %s: the manifest must state its h1: and zh:", pkg)
	}
	return backends.Archive{Package: pkg, Layout: backends.Packed, Size: mp.Size, Evidence: []hashing.Evidence{ev}, Location: b.name + ":" + mp.Path}, nil
}

// readProvenance parses and checks one provenance document. A document
// that does not check is remembered, for Audit to report, not used.
func (b *Bundle) readProvenance(f io.ReaderAt, name string, k fileKind) error {
	raw, err := b.readChecked(f, name, provenance.MaxSize)
	if err != nil {
		return err
	}
	key := versionKey{k.provider, k.version}
	s := &signed{}
	b.provs[key] = s
	if s.prov, s.err = provenance.Parse(raw); s.err != nil {
		return nil
	}
	if s.prov.Provider != k.provider.String() || s.prov.Version != k.version {
		s.err = fmt.Errorf("%s: it is the provenance of %s %s", name, s.prov.Provider, s.prov.Version)
		return nil
	}
	s.signer, s.err = s.prov.Check(b.opts.Provenance)
	return nil
}

// Providers lists the providers the bundle holds.
func (b *Bundle) Providers(ctx context.Context) ([]backends.Provider, error) {
	out := make([]backends.Provider, 0, len(b.versions))
	for p := range b.versions {
		out = append(out, p)
	}
	backends.SortProviders(out)
	return out, nil
}

// Versions lists p's versions, newest first.
func (b *Bundle) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	vs, ok := b.versions[p]
	if !ok {
		return nil, fmt.Errorf("bundle %s: %s: %w", b.name, p, backends.ErrNotFound)
	}
	return append([]backends.Version(nil), vs...), nil
}

// Archives lists p's packages at v with the hashes the manifest states,
// and, where the bundle holds the version's provenance and its signature
// checked, the zh: its signed SHA256SUMS states.
func (b *Bundle) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	as := b.archives[p][v.String()]
	out := make([]backends.Archive, 0, len(as))
	s := b.provs[versionKey{p, v.String()}]
	for _, a := range as {
		a.Evidence = append([]hashing.Evidence(nil), a.Evidence...)
		if s != nil && s.err == nil {
			if ev, err := s.prov.Evidence(a.Platform.String(), s.signer); err == nil {
				a.Evidence = append(a.Evidence, ev)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// Open streams an archive's bytes out of the tar. The stream fails at its
// end unless they are the bytes the manifest states (size and SHA-256).
func (b *Bundle) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	name := ArchivePath(a.Package)
	e, ok := b.entries[name]
	if !ok {
		return nil, fmt.Errorf("bundle %s: %s: %w", b.name, a.Package, backends.ErrNotFound)
	}
	f, err := regular.Open(b.file)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.name, err)
	}
	return &entryReader{f: f, r: io.NewSectionReader(f, e.offset, e.size), h: hashing.NewZipHasher(), e: e, b: b, name: name}, nil
}

// entryReader hashes an entry as it is read and fails the final read when
// its bytes are not those the manifest states.
type entryReader struct {
	f    *os.File
	r    *io.SectionReader
	h    *hashing.ZipHasher
	e    entry
	b    *Bundle
	name string
	n    int64
	err  error
	done bool
}

func (r *entryReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if err == io.EOF {
		switch got := r.h.Sum().Value(); {
		case r.n != r.e.size:
			r.err = r.b.damaged("%s: read %d bytes, but the manifest says %d (the file changed?)", r.name, r.n, r.e.size)
		case got != r.e.sha256:
			r.err = fmt.Errorf("bundle %s: %s: its SHA-256 is %s, but the manifest says %s: %w", r.b.name, r.name, got, r.e.sha256, hashing.ErrHashMismatch)
		default:
			r.done = true
			return n, io.EOF
		}
		return n, r.err
	}
	return n, err
}

func (r *entryReader) Close() error { return r.f.Close() }

// ZipHash returns the zh: of the entry once it has been read whole and
// matched the manifest.
func (r *entryReader) ZipHash() (hashing.Hash, bool) {
	if !r.done {
		return "", false
	}
	return r.h.Sum(), true
}

var _ backends.HashingReader = (*entryReader)(nil)

// Provenance returns the provenance the bundle holds for p at v, whose
// signature Open checked; a version without it is ErrNotFound.
func (b *Bundle) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	s := b.provs[versionKey{p, v.String()}]
	switch {
	case s == nil:
		return nil, fmt.Errorf("bundle %s: %s %s: no provenance: %w", b.name, p, v, backends.ErrNotFound)
	case s.err != nil:
		return nil, fmt.Errorf("bundle %s: %s %s: provenance: %w", b.name, p, v, s.err)
	}
	return s.prov, nil
}

// ProviderDir is p's directory in a bundle, as in a filesystem mirror:
// HOST/NAMESPACE/TYPE with the hostname in display form.
func ProviderDir(p backends.Provider) string {
	return p.HostnameForDisplay() + "/" + p.Namespace + "/" + p.Type
}

// ArchivePath is where a package's zip is in a bundle.
func ArchivePath(pkg backends.Package) string {
	return ProviderDir(pkg.Provider) + "/" + pkg.Filename()
}

type fileKind struct {
	what     int
	provider backends.Provider
	version  string // of a version or provenance document
	listed   bool   // an archive the packages describe
}

const (
	kindArchive = iota
	kindIndex
	kindVersionDoc
	kindProvenance
)

// classify says what a file of the bundle is by its path: a file of a
// provider directory, HOST/NAMESPACE/TYPE/{zip, index.json, VERSION.json,
// .tfmirror-provenance/VERSION.json}. Nothing else belongs in a bundle.
func classify(name string) (fileKind, error) {
	parts := strings.Split(name, "/")
	if len(parts) < 4 || len(parts) > 5 {
		return fileKind{}, errors.New("not a file of a provider directory (HOST/NAMESPACE/TYPE/...)")
	}
	p, err := backends.NewProvider(parts[0], parts[1], parts[2])
	if err != nil {
		return fileKind{}, err
	}
	if ProviderDir(p) != strings.Join(parts[:3], "/") {
		return fileKind{}, fmt.Errorf("provider directory not written as %s", ProviderDir(p))
	}
	k := fileKind{provider: p}
	base := parts[len(parts)-1]
	docVersion := func() (string, error) {
		v, err := backends.ParseVersion(strings.TrimSuffix(base, ".json"))
		if err != nil || !strings.HasSuffix(base, ".json") || v.String()+".json" != base {
			return "", fmt.Errorf("%q is not VERSION.json", base)
		}
		return v.String(), nil
	}
	switch {
	case len(parts) == 5 && parts[3] == provenance.DirName:
		k.what = kindProvenance
		k.version, err = docVersion()
	case len(parts) == 5:
		err = errors.New("not a file of a provider directory")
	case base == "index.json":
		k.what = kindIndex
	case strings.HasSuffix(base, ".zip"):
		k.what = kindArchive
	default:
		k.what = kindVersionDoc
		k.version, err = docVersion()
	}
	return k, err
}

// manifestBytes is the manifest's canonical form.
func manifestBytes(m *Manifest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
