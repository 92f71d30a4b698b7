package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

type downloadDoc struct {
	Protocols           []string `json:"protocols"`
	OS                  string   `json:"os"`
	Arch                string   `json:"arch"`
	Filename            string   `json:"filename"`
	DownloadURL         string   `json:"download_url"`
	SHASumsURL          string   `json:"shasums_url"`
	SHASumsSignatureURL string   `json:"shasums_signature_url"`
	SHASum              string   `json:"shasum"`
	SigningKeys         struct {
		GPGPublicKeys []struct {
			KeyID      string `json:"key_id"`
			ASCIIArmor string `json:"ascii_armor"`
		} `json:"gpg_public_keys"`
	} `json:"signing_keys"`
	Packages map[string]struct {
		Hashes      []string `json:"hashes"`
		PackageSize int64    `json:"package_size"`
	} `json:"packages"`
}

// downloadMeta is one package's download metadata, parsed and checked.
type downloadMeta struct {
	pkg           backends.Package
	metaURL       *url.URL // where the metadata (and its signing keys) came from
	filename      string
	downloadURL   *url.URL
	sumsURL       *url.URL
	sigURL        *url.URL
	shasum        string
	armors        []string
	packageHashes []hashing.Hash
	size          int64
	// packages are the hashes the packages field states for every
	// platform (this one's included) that lists a zh:; nil without it.
	packages map[backends.Platform][]hashing.Hash
}

// downloadMeta fetches and checks the download endpoint for one platform.
// It returns nil, nil when the registry has no download for a platform its
// versions list named (the clients treat that as "platform not supported").
func (r *Registry) downloadMeta(ctx context.Context, p backends.Provider, v backends.Version, plat backends.Platform) (*downloadMeta, error) {
	pkg := backends.Package{Provider: p, Version: v, Platform: plat}
	u, auth, err := r.api(ctx, p.Namespace, p.Type, v.String(), "download", plat.OS, plat.Arch)
	if err != nil {
		return nil, err
	}
	var doc downloadDoc
	final, err := r.opts.HTTP.JSON(ctx, u, auth, &doc)
	if err != nil {
		if errors.Is(err, backends.ErrNotFound) {
			r.warnf("%s: listed, but the registry has no download for it (%v)", short(pkg), err)
			return nil, nil
		}
		return nil, r.errorf("%s: download metadata: %w%s", short(pkg), err, r.authHint(err))
	}
	bad := func(format string, args ...any) error {
		return r.errorf("%s: download metadata (%s): "+format, append([]any{short(pkg), httpclient.RedactURL(final)}, args...)...)
	}
	if doc.OS != plat.OS || doc.Arch != plat.Arch {
		return nil, bad("it describes %s_%s, not the platform asked for", doc.OS, doc.Arch)
	}
	if doc.Filename == "" || strings.ContainsAny(doc.Filename, "/\\") || doc.Filename == "." || doc.Filename == ".." {
		return nil, bad("filename %q is not a file name", doc.Filename)
	}
	if other := otherRelease(pkg, doc.Filename); other != "" {
		return nil, bad("filename %q is the release zip of %s: a registry may only hand out %s's own (%s)", doc.Filename, other, short(pkg), pkg.Filename())
	}
	sum := strings.ToLower(doc.SHASum)
	if _, err := hashing.ZipHashFromHex(sum); err != nil {
		return nil, bad("shasum %q: want 64 hex digits", doc.SHASum)
	}
	if len(doc.Protocols) > 0 && !supportsProtocol(doc.Protocols) {
		r.warnf("%s: plugin protocols %s; Terraform and OpenTofu support 5 and 6 only", short(pkg), strings.Join(doc.Protocols, ", "))
	}
	m := &downloadMeta{pkg: pkg, metaURL: final, filename: doc.Filename, shasum: sum, size: -1}
	for _, f := range []struct {
		name string
		raw  string
		dst  **url.URL
	}{{"download_url", doc.DownloadURL, &m.downloadURL}, {"shasums_url", doc.SHASumsURL, &m.sumsURL}, {"shasums_signature_url", doc.SHASumsSignatureURL, &m.sigURL}} {
		if f.raw == "" {
			return nil, bad("%s is missing", f.name)
		}
		ref, err := url.Parse(f.raw)
		if err != nil {
			return nil, bad("%s %q: %v", f.name, f.raw, err)
		}
		abs := final.ResolveReference(ref)
		if abs.Scheme != "https" && abs.Scheme != "http" {
			return nil, bad("%s %q: must be an http or https URL", f.name, f.raw)
		}
		*f.dst = abs
	}
	for _, k := range doc.SigningKeys.GPGPublicKeys {
		m.armors = append(m.armors, k.ASCIIArmor)
	}
	if err := m.readPackages(&doc, bad); err != nil {
		return nil, err
	}
	return m, nil
}

// otherRelease returns which other release a file name in the clients'
// naming (terraform-provider-TYPE_VERSION_OS_ARCH.zip) names, or "" when it
// names pkg or follows another naming. The signed SHA256SUMS line for the
// file vouches for its bytes, not for which provider, version and platform
// they are: a registry handing out another platform's or an older
// version's signed zip under pkg's name passes every hash check.
func otherRelease(pkg backends.Package, filename string) string {
	name := strings.ToLower(filename)
	rest, ok := strings.CutPrefix(name, "terraform-provider-")
	if !ok || !strings.HasSuffix(rest, ".zip") || name == strings.ToLower(pkg.Filename()) {
		return ""
	}
	parts := strings.Split(strings.TrimSuffix(rest, ".zip"), "_")
	if len(parts) != 4 {
		return ""
	}
	v, verr := backends.ParseVersion(parts[1])
	plat, perr := backends.ParsePlatform(parts[2] + "_" + parts[3])
	if verr != nil || perr != nil {
		return ""
	}
	if parts[0] == strings.ToLower(pkg.Provider.Type) && v.Equal(pkg.Version) && plat == pkg.Platform {
		return ""
	}
	return fmt.Sprintf("%s %s %s", parts[0], v, plat)
}

// readPackages takes OpenTofu 1.12's packages field of doc, when present,
// into m: this platform must be in it with its size, and its zh: hashes must
// agree with shasum. It is a step of its own because the field is optional
// and checked only when a registry sends it; bad reports what is wrong.
func (m *downloadMeta) readPackages(doc *downloadDoc, bad func(format string, args ...any) error) error {
	if doc.Packages == nil {
		return nil
	}
	entry, ok := doc.Packages[m.pkg.Platform.String()]
	if !ok {
		return bad("packages does not list %s", m.pkg.Platform)
	}
	for key := range doc.Packages {
		if _, err := backends.ParsePlatform(key); err != nil {
			return bad("packages: %v", err)
		}
	}
	if entry.PackageSize <= 0 {
		return bad("packages: %s: package_size must be positive", m.pkg.Platform)
	}
	sawZH := false
	for _, s := range entry.Hashes {
		h, err := hashing.ParseHash(s)
		if err != nil {
			return bad("packages: %s: %v", m.pkg.Platform, err)
		}
		if h.Scheme() == hashing.SchemeZip {
			sawZH = true
			if h.Value() != m.shasum {
				return bad("packages: %s: %s disagrees with shasum %s", m.pkg.Platform, h, m.shasum)
			}
		}
		m.packageHashes = append(m.packageHashes, h)
	}
	if !sawZH {
		return bad("packages: %s: no zh: hash", m.pkg.Platform)
	}
	m.size = entry.PackageSize
	m.packages = map[backends.Platform][]hashing.Hash{m.pkg.Platform: m.packageHashes}
	for key, e := range doc.Packages {
		plat, _ := backends.ParsePlatform(key)
		if plat == m.pkg.Platform {
			continue
		}
		if hs, ok := otherPackage(e.Hashes); ok {
			m.packages[plat] = hs
		}
	}
	return nil
}

// otherPackage parses the hashes packages lists for another platform than
// the one asked for: only an entry whose hashes all parse and include a
// zh: (to be checked against the signed SHA256SUMS) is used; that
// platform's own download metadata checks a faulty one when it is read.
func otherPackage(ss []string) ([]hashing.Hash, bool) {
	var hs []hashing.Hash
	sawZH := false
	for _, s := range ss {
		h, err := hashing.ParseHash(s)
		if err != nil {
			return nil, false
		}
		sawZH = sawZH || h.Scheme() == hashing.SchemeZip
		hs = append(hs, h)
	}
	return hs, sawZH
}

// supportsProtocol reports whether any MAJOR.MINOR is one the clients speak
// (>= 5, < 7).
func supportsProtocol(ps []string) bool {
	for _, p := range ps {
		major, _, _ := strings.Cut(p, ".")
		if major == "5" || major == "6" {
			return true
		}
	}
	return false
}

// signedSums is a SHA256SUMS document whose signature checked.
type signedSums struct {
	lines map[string]string // filename -> lowercase hex
	// prov is the document, its signature and the key that made it, with
	// the signer; nil where no keys are required (unsignedHost).
	prov   *provenance.Provenance
	signer provenance.Signer
}

// signedSums fetches and checks a SHA256SUMS document and its signature
// once per (document, signature, keys); every platform of a version shares
// them.
func (r *Registry) signedSums(ctx context.Context, m *downloadMeta) (*signedSums, error) {
	key := m.sumsURL.String() + "\x00" + m.sigURL.String() + "\x00" + strings.Join(m.armors, "\x00")
	r.mu.Lock()
	ss, ok := r.signed[key]
	r.mu.Unlock()
	if ok {
		return ss, nil
	}
	what := fmt.Sprintf("%s %s", m.pkg.Provider.ShortString(), m.pkg.Version)
	// SHA256SUMS and its signature are often on another host (a release
	// store): no credentials. Both are fetched at once: planning waits for
	// them.
	var sig []byte
	sigErr := make(chan error, 1)
	go func() {
		var err error
		sig, _, err = r.opts.HTTP.Document(ctx, m.sigURL, nil)
		sigErr <- err
	}()
	sums, _, err := r.opts.HTTP.Document(ctx, m.sumsURL, nil)
	if serr := <-sigErr; err == nil && serr != nil {
		return nil, r.errorf("%s: SHA256SUMS signature: %w", what, serr)
	}
	if err != nil {
		return nil, r.errorf("%s: SHA256SUMS: %w", what, err)
	}
	ss = &signedSums{}
	switch {
	case len(m.armors) > 0:
		signer, armor, err := provenance.CheckSignature(sums, sig, m.armors, r.opts.Signatures)
		if err != nil {
			return nil, r.errorf("%s: %v", what, err)
		}
		if signer.Expired != "" {
			r.warnf("%s: SHA256SUMS signature by %s: %s (accepted, as the clients accept it unless OPENTOFU_ENFORCE_GPG_EXPIRATION is true)", what, signer, signer.Expired)
		}
		signer.Source = httpclient.RedactURL(m.metaURL)
		ss.signer = signer
		ss.prov = &provenance.Provenance{
			Provider: m.pkg.Provider.String(), Version: m.pkg.Version.String(), SHA256SUMS: sums, Signature: sig,
			Key: provenance.Key{ID: signer.KeyID, Fingerprint: signer.Fingerprint, Source: signer.Source, ASCIIArmor: armor},
		}
	case r.host == unsignedHost:
		r.warnf("%s: no signing keys; %s is the one registry the clients accept unsigned", what, unsignedHost)
	default:
		return nil, r.errorf("%s: SHA256SUMS signature: the registry gives no signing keys, so SHA256SUMS cannot be authenticated", what)
	}
	lines, err := provenance.ParseSums(sums)
	if err != nil {
		return nil, r.errorf("%s: SHA256SUMS (%s): %v", what, httpclient.RedactURL(m.sumsURL), err)
	}
	ss.lines = lines
	r.mu.Lock()
	r.signed[key] = ss
	r.mu.Unlock()
	return ss, nil
}

// Open downloads an archive, without credentials, and checks it as it
// streams: the bytes must hash to the signed shasum (and match the size the
// registry gave), or the final Read returns an error instead of io.EOF.
func (r *Registry) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	r.mu.Lock()
	d, ok := r.downloads[a.Key()]
	r.mu.Unlock()
	if !ok {
		// Open without Archives first (a plan made by another process):
		// authenticate the version now.
		if _, err := r.Archives(ctx, a.Provider, a.Version); err != nil {
			return nil, err
		}
		r.mu.Lock()
		d, ok = r.downloads[a.Key()]
		r.mu.Unlock()
		if !ok {
			return nil, r.errorf("%s: %w", short(a.Package), backends.ErrNotFound)
		}
	}
	dl, err := r.opts.HTTP.Open(ctx, d.url, nil, "")
	if err != nil {
		return nil, r.errorf("%s: %w", short(a.Package), err)
	}
	if d.size >= 0 && dl.Size >= 0 && dl.Size != d.size {
		_ = dl.Close() // refused before any read
		return nil, r.errorf("%s: GET %s: %d bytes, but the registry's packages say %d", short(a.Package), httpclient.RedactURL(dl.URL), dl.Size, d.size)
	}
	return &verifyingReader{rc: dl, h: hashing.NewZipHasher(), want: d.shasum, size: d.size, r: r, pkg: short(a.Package), url: httpclient.RedactURL(dl.URL)}, nil
}

// verifyingReader hashes an archive as it is read and fails the final read
// if the bytes are not the ones the registry signed.
type verifyingReader struct {
	rc   io.ReadCloser
	h    *hashing.ZipHasher
	n    int64
	want string
	size int64
	r    *Registry
	pkg  string
	url  string
	err  error
	eof  bool
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.size >= 0 && v.n > v.size {
		v.err = v.r.errorf("%s: GET %s: more than the %d bytes the registry's packages give", v.pkg, v.url, v.size)
		return n, v.err
	}
	if err == io.EOF {
		got := v.h.Sum().Value()
		v.eof = true
		switch {
		case got != v.want:
			v.err = v.r.errorf("%s: GET %s: the archive's sha256 is %s, but the signed SHA256SUMS says %s: %w", v.pkg, v.url, got, v.want, hashing.ErrHashMismatch)
			return n, v.err
		case v.size >= 0 && v.n != v.size:
			v.err = v.r.errorf("%s: GET %s: %d bytes, but the registry's packages say %d", v.pkg, v.url, v.n, v.size)
			return n, v.err
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.rc.Close() }

// StreamSize is the download's Content-Length, or the size the registry's
// packages give, or -1.
func (v *verifyingReader) StreamSize() int64 {
	if s, ok := v.rc.(backends.SizedReader); ok && s.StreamSize() >= 0 {
		return s.StreamSize()
	}
	return v.size
}

// ZipHash returns the zh: hash of the archive once it has been read whole
// and matched the signed SHA256SUMS.
func (v *verifyingReader) ZipHash() (hashing.Hash, bool) {
	if !v.eof || v.err != nil {
		return "", false
	}
	return v.h.Sum(), true
}

var (
	_ backends.HashingReader = (*verifyingReader)(nil)
	_ backends.SizedReader   = (*verifyingReader)(nil)
)
