package provenance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tfmirror/tfmirror/hashing"
)

// The on-disk and OCI forms.
const (
	// Format is the "format" field of every document this package writes;
	// Parse refuses others, so a later format is never misread.
	Format = "tfmirror.provenance.v1"
	// DirName is the directory beside a provider's archives (in
	// HOST/NAMESPACE/TYPE/) holding one FileName per version.
	DirName = ".tfmirror-provenance"
	// ArtifactType is the artifactType of the OCI referrer manifest that
	// holds a version's provenance; its subject is the version's index.
	ArtifactType = "application/vnd.tfmirror.provenance.v1"
	// MediaType is the media type of that manifest's single layer: the
	// document Marshal writes.
	MediaType = "application/vnd.tfmirror.provenance.v1+json"
	// AnnotationKeyID and AnnotationFingerprint are set on the referrer
	// manifest, so registry tools (oras discover) show the signer without
	// fetching the layer. They are informative: readers check the layer.
	AnnotationKeyID       = "dev.tfmirror.provenance.key-id"
	AnnotationFingerprint = "dev.tfmirror.provenance.fingerprint"
	// MaxSize bounds a document read from a place: real ones are a few KB
	// (a SHA256SUMS of some twenty lines, a signature, one public key).
	MaxSize = 1 << 20
)

// FileName is the name of version's document in DirName.
func FileName(version string) string { return version + ".json" }

// Provenance is what proves who signed one provider version's release.
type Provenance struct {
	// Provider is the provider's address, HOST/NAMESPACE/TYPE, and Version
	// its version: what the proof is about, for messages and for checking
	// that a document found beside a version is that version's.
	Provider string
	Version  string
	// SHA256SUMS is the signed document exactly as the registry served
	// it: "HEX  FILENAME" lines for every platform's zip.
	SHA256SUMS []byte
	// Signature is the binary detached OpenPGP signature over SHA256SUMS.
	Signature []byte
	// Key is the public key that made Signature, and where it came from.
	Key Key
}

// Key is a signing key and its origin.
type Key struct {
	// ID is the key ID (16 upper-case hex digits) and Fingerprint the
	// primary key's fingerprint (upper-case hex), as recorded when the
	// signature was checked. Check recomputes both from ASCIIArmor and
	// the signature; these copies are for reading without a check.
	ID          string
	Fingerprint string
	// Source says where the key came from: the URL of the registry's
	// download metadata that listed it.
	Source string
	// ASCIIArmor is the ASCII-armored public key (one or more keys, as the
	// registry published them), one of which made Signature.
	ASCIIArmor string
}

// Signer is who signed a version, once Check has verified it.
type Signer struct {
	KeyID       string `json:"key_id"`
	Fingerprint string `json:"fingerprint"`
	// Source is where the key came from (Key.Source).
	Source string `json:"source,omitempty"`
	// Signed is when the signature was made, by its own account.
	Signed time.Time `json:"signed,omitzero"`
	// Expired, when set, says that the key or the signature has expired:
	// accepted, as OpenTofu accepts it with a warning unless
	// OPENTOFU_ENFORCE_GPG_EXPIRATION is true (Options.EnforceExpiration).
	Expired string `json:"expired,omitempty"`
}

// String names the signer for messages: "key ID, fingerprint FP".
func (s Signer) String() string {
	if s.Fingerprint == "" {
		return "key " + s.KeyID
	}
	return fmt.Sprintf("key %s, fingerprint %s", s.KeyID, s.Fingerprint)
}

// Errors, wrapped with the version and the place.
var (
	// ErrSignature: the signature does not check, with the key given or
	// with any key given.
	ErrSignature = errors.New("the SHA256SUMS signature does not check")
	// ErrNotListed: SHA256SUMS lists no zip for a platform.
	ErrNotListed = errors.New("not listed in the signed SHA256SUMS")
	// ErrFormat: a document is not a provenance document this package
	// reads.
	ErrFormat = errors.New("not a tfmirror provenance document")
)

// Options tune Check.
type Options struct {
	// EnforceExpiration refuses a signature whose key or signature has
	// expired, as OpenTofu does with OPENTOFU_ENFORCE_GPG_EXPIRATION=true.
	// Without it such a signature is accepted and Signer.Expired says so.
	EnforceExpiration bool
}

// Check verifies the signature over SHA256SUMS with the recorded key and
// returns who made it. The recorded key ID and fingerprint must be the
// signer's: a document naming one key while another signed is refused.
func (p *Provenance) Check(opts Options) (Signer, error) {
	s, _, err := CheckSignature(p.SHA256SUMS, p.Signature, []string{p.Key.ASCIIArmor}, opts)
	if err != nil {
		return Signer{}, fmt.Errorf("%s %s: %w", p.Provider, p.Version, err)
	}
	switch {
	case p.Key.ID != "" && !strings.EqualFold(p.Key.ID, s.KeyID):
		return Signer{}, fmt.Errorf("%s %s: %w: the document names key %s, but key %s made the signature", p.Provider, p.Version, ErrSignature, p.Key.ID, s.KeyID)
	case p.Key.Fingerprint != "" && !strings.EqualFold(p.Key.Fingerprint, s.Fingerprint):
		return Signer{}, fmt.Errorf("%s %s: %w: the document names fingerprint %s, but %s made the signature", p.Provider, p.Version, ErrSignature, p.Key.Fingerprint, s)
	}
	s.Source = p.Key.Source
	return s, nil
}

// ZipHashes returns the zh: hashes SHA256SUMS states for the zip of
// platform (OS_ARCH) at p's version: the line naming exactly
// terraform-provider-TYPE_VERSION_OS_ARCH.zip, TYPE being p's provider's.
// A line for another file name never speaks for it, however it ends: one
// publisher signs many providers with one key, some of them at the same
// versions (google and google-beta, aws and awscc), and the document's
// Provider field is not under the signature. It reads the document without
// checking the signature; Check does that.
func (p *Provenance) ZipHashes(platform string) ([]hashing.Hash, error) {
	lines, err := ParseSums(p.SHA256SUMS)
	if err != nil {
		return nil, fmt.Errorf("%s %s: SHA256SUMS: %v", p.Provider, p.Version, err)
	}
	want := PackageFileName(p.Provider[strings.LastIndexByte(p.Provider, '/')+1:], p.Version, platform)
	var out []hashing.Hash
	for name, sum := range lines {
		if strings.EqualFold(name, want) {
			out = append(out, hashing.Hash("zh:"+sum))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s %s %s: %w (it has no line for %s)", p.Provider, p.Version, platform, ErrNotListed, want)
	}
	return hashing.SortUnique(out), nil
}

// PackageFileName is the release zip's own name, as a signed SHA256SUMS
// lists it: terraform-provider-TYPE_VERSION_OS_ARCH.zip.
func PackageFileName(typ, version, platform string) string {
	return "terraform-provider-" + strings.ToLower(typ) + "_" + version + "_" + platform + ".zip"
}

// Authenticate checks zh, an archive's zip hash, against what the signed
// SHA256SUMS states for platform. It does not check the signature.
func (p *Provenance) Authenticate(platform string, zh hashing.Hash) error {
	want, err := p.ZipHashes(platform)
	if err != nil {
		return err
	}
	for _, h := range want {
		if h == zh {
			return nil
		}
	}
	return fmt.Errorf("%s %s %s: the archive's %s is not the %s the signed SHA256SUMS states: %w", p.Provider, p.Version, platform, zh, want[0], hashing.ErrHashMismatch)
}

// Evidence returns what the signed SHA256SUMS states about platform's zip
// as evidence for hashing.Verify, labelled with the signer (whom Check
// returned): a transfer or a verification then checks the archive's bytes
// against the signed hash like any other source of truth.
func (p *Provenance) Evidence(platform string, s Signer) (hashing.Evidence, error) {
	hs, err := p.ZipHashes(platform)
	if err != nil {
		return hashing.Evidence{}, err
	}
	return hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceRegistrySigned, Detail: s.String()}, Hashes: hs}, nil
}

// Equal reports whether p and q are the same proof (same document,
// signature and key), whatever they record of the key's origin.
func (p *Provenance) Equal(q *Provenance) bool {
	return p != nil && q != nil && p.Provider == q.Provider && p.Version == q.Version &&
		bytes.Equal(p.SHA256SUMS, q.SHA256SUMS) && bytes.Equal(p.Signature, q.Signature) && p.Key.ASCIIArmor == q.Key.ASCIIArmor
}

// document is the JSON form. SHA256SUMS and the signature are base64 (as
// encoding/json writes []byte), so every byte survives.
type document struct {
	Format     string `json:"format"`
	Provider   string `json:"provider"`
	Version    string `json:"version"`
	SHA256SUMS []byte `json:"shasums"`
	Signature  []byte `json:"shasums_signature"`
	Key        struct {
		ID          string `json:"key_id"`
		Fingerprint string `json:"fingerprint"`
		Source      string `json:"source,omitempty"`
		ASCIIArmor  string `json:"ascii_armor"`
	} `json:"signing_key"`
}

// Marshal writes p's JSON form: indented, fields in a fixed order, so the
// same provenance is always the same bytes.
func Marshal(p *Provenance) ([]byte, error) {
	d := document{Format: Format, Provider: p.Provider, Version: p.Version, SHA256SUMS: p.SHA256SUMS, Signature: p.Signature}
	d.Key.ID, d.Key.Fingerprint, d.Key.Source, d.Key.ASCIIArmor = p.Key.ID, p.Key.Fingerprint, p.Key.Source, p.Key.ASCIIArmor
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Parse reads a document Marshal wrote. It checks the form (format,
// required fields, size), not the signature: Check does that.
func Parse(b []byte) (*Provenance, error) {
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d a provenance document can be", ErrFormat, len(b), MaxSize)
	}
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if d.Format != Format {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrFormat, d.Format, Format)
	}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{"provider", d.Provider != ""}, {"version", d.Version != ""}, {"shasums", len(d.SHA256SUMS) > 0},
		{"shasums_signature", len(d.Signature) > 0}, {"signing_key.ascii_armor", d.Key.ASCIIArmor != ""}} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s missing", ErrFormat, strings.Join(missing, ", "))
	}
	return &Provenance{Provider: d.Provider, Version: d.Version, SHA256SUMS: d.SHA256SUMS, Signature: d.Signature,
		Key: Key{ID: d.Key.ID, Fingerprint: d.Key.Fingerprint, Source: d.Key.Source, ASCIIArmor: d.Key.ASCIIArmor}}, nil
}
