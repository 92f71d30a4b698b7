package push

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
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
	doc           []byte            // as read: what the signature is over
	// sig is what checking the .sig beside it found (CheckSignature);
	// nil when none was checked. A pointer, so copies share it.
	sig *signature
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

// readSmall reads a SHA256SUMS, a signature or a key: at most
// provenance.MaxSize bytes, which a provenance document holding it
// could not exceed anyway (a path naming /dev/zero is refused, not read
// until memory runs out).
func readSmall(path string) ([]byte, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	b, err := io.ReadAll(io.LimitReader(f, provenance.MaxSize+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > provenance.MaxSize:
		return nil, fmt.Errorf("%s: more than %d bytes, which no SHA256SUMS, signature or key is", path, provenance.MaxSize)
	}
	return b, nil
}

// ReadSums reads a SHA256SUMS file.
func ReadSums(path string) (SumsFile, error) {
	b, err := readSmall(path)
	if err != nil {
		return SumsFile{}, err
	}
	sums, err := provenance.ParseSums(b)
	if err != nil {
		return SumsFile{}, fmt.Errorf("%s: not a SHA256SUMS file: %v", path, err)
	}
	sf := SumsFile{Path: path, sums: sums, doc: b}
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

// SigningKey is a --signing-key file: one or more ASCII-armored OpenPGP
// public keys, as a provider's release publishes them.
type SigningKey struct {
	Path         string
	Armor        string
	Fingerprints []string
}

// ReadSigningKeys reads the --signing-key files; a file that holds no
// public key is an error naming it.
func ReadSigningKeys(paths []string) ([]SigningKey, error) {
	var out []SigningKey
	for _, p := range paths {
		b, err := readSmall(p)
		if err != nil {
			return nil, fmt.Errorf("--signing-key: %w", err)
		}
		fps, err := provenance.KeyFingerprints(string(b))
		if err != nil {
			return nil, fmt.Errorf("--signing-key %s: %v", p, err)
		}
		out = append(out, SigningKey{Path: p, Armor: string(b), Fingerprints: fps})
	}
	return out, nil
}

// signature is the outcome of checking a SHA256SUMS's detached signature.
type signature struct {
	path   string // the .sig
	bytes  []byte // binary, as the registries serve it
	signer provenance.Signer
	key    SigningKey // the file whose key made it
	err    error      // why it does not check
}

// CheckSignature checks sigPath, the detached signature over sf, with
// keys (provenance.CheckSignature: any of them may have made it). A
// signature that does not check is kept in sf, for every version sf
// speaks for to be refused with the reason (Zips.Provenance); the error
// returned is only for a file that cannot be read.
func (sf *SumsFile) CheckSignature(sigPath string, keys []SigningKey, opts provenance.Options) error {
	raw, err := readSmall(sigPath)
	if err != nil {
		return err
	}
	sig, err := provenance.BinarySignature(raw)
	s := &signature{path: sigPath, bytes: sig, err: err}
	sf.sig = s
	if err != nil {
		s.err = fmt.Errorf("%s: %s: %w", sf.Path, sigPath, err)
		return nil
	}
	armors := make([]string, len(keys))
	for i, k := range keys {
		armors[i] = k.Armor
	}
	signer, armor, err := provenance.CheckSignature(sf.doc, sig, armors, opts)
	if err != nil {
		s.err = fmt.Errorf("%s (signature %s): %w; --signing-key gave %s", sf.Path, sigPath, err, describeKeys(keys))
		return nil
	}
	for _, k := range keys {
		if k.Armor == armor {
			s.key = k
		}
	}
	s.signer = signer
	return nil
}

// ExpiredNote says, where sf's signature checked with a key or
// signature past its expiry, who made it and since when; "" otherwise.
func (sf SumsFile) ExpiredNote() string {
	if s := sf.sig; s != nil && s.err == nil && s.signer.Expired != "" {
		return fmt.Sprintf("%s: signature by %s: %s (accepted, as OpenTofu accepts it unless OPENTOFU_ENFORCE_GPG_EXPIRATION is true)", sf.Path, s.signer, s.signer.Expired)
	}
	return ""
}

func describeKeys(keys []SigningKey) string {
	var parts []string
	for _, k := range keys {
		what := "fingerprint "
		if len(k.Fingerprints) > 1 {
			what = "fingerprints "
		}
		parts = append(parts, what+strings.Join(k.Fingerprints, ", ")+" ("+k.Path+")")
	}
	return strings.Join(parts, "; ")
}

// provenance is the proof sf's checked signature gives of p at v, in the
// form sync checks and writes into the destination; nil when sf has no
// signature; the signature's error when it does not check.
func (sf SumsFile) provenance(p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	s := sf.sig
	switch {
	case s == nil:
		return nil, nil
	case s.err != nil:
		return nil, s.err
	}
	source := s.key.Path
	if abs, err := filepath.Abs(source); err == nil {
		source = abs
	}
	return &provenance.Provenance{Provider: p.String(), Version: v.String(), SHA256SUMS: sf.doc, Signature: s.bytes,
		Key: provenance.Key{ID: s.signer.KeyID, Fingerprint: s.signer.Fingerprint, Source: source, ASCIIArmor: s.key.Armor}}, nil
}

// lists reports whether sf states f's sum and speaks for its version.
func (sf SumsFile) lists(f ZipFile) bool {
	_, ok := sf.sums[filepath.Base(f.Path)]
	return ok && sf.speaksFor(f.Package)
}

// listedWithPath returns the name of the file's line that names base
// with a directory before it (sha256sum dist/*.zip writes them so), if any.
func (sf SumsFile) listedWithPath(base string) string {
	for name := range sf.sums {
		if strings.Contains(name, "/") && path.Base(name) == base {
			return name
		}
	}
	return ""
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
			if listed := sf.listedWithPath(filepath.Base(f.Path)); listed != "" {
				return nil, fmt.Errorf("%s names the zip with a path (%s), where a release's SHA256SUMS names it alone, as goreleaser writes it: make it in the zips' directory (cd dist && sha256sum *.zip > terraform-provider-NAME_VERSION_SHA256SUMS)", sf.Path, listed)
			}
			return nil, fmt.Errorf("%s is not listed in %s, which states the zips of %s %s: give the SHA256SUMS of its release, or its own zips", f.Path, sf.Path, f.Package.Provider, f.Package.Version)
		}
		src := hashing.Source{Kind: hashing.SourceReleaseSums, Detail: sf.Path}
		if s := sf.sig; s != nil && s.err == nil {
			// Its signature checked: the line is the publisher's word.
			src = hashing.Source{Kind: hashing.SourceRegistrySigned, Detail: s.signer.String()}
		}
		out = append(out, hashing.Evidence{Source: src, Hashes: []hashing.Hash{hashing.Hash("zh:" + sum)}})
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
