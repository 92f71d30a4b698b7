package provenance

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// CheckSignature checks a binary detached signature over doc with each
// ASCII-armored key in turn, as OpenTofu does (getproviders'
// findSigningKey): a key that did not sign moves on to the next; a key
// that signed but has expired (or whose signature has) is remembered while
// a current one is looked for; any other failure ends the search. An
// expired signer is accepted, with Signer.Expired set, unless
// opts.EnforceExpiration. It returns the signer and the armor that holds
// its key; every error wraps ErrSignature.
func CheckSignature(doc, sig []byte, armors []string, opts Options) (Signer, string, error) {
	var ids []string
	var expired *Signer
	var expiredArmor string
	for i, armor := range armors {
		kr, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armor))
		if err != nil {
			return Signer{}, "", fmt.Errorf("%w: signing key %d is not a valid ASCII-armored public key: %v", ErrSignature, i+1, err)
		}
		for _, e := range kr {
			ids = append(ids, e.PrimaryKey.KeyIdString())
		}
		entity, err := openpgp.CheckDetachedSignature(kr, bytes.NewReader(doc), bytes.NewReader(sig), nil)
		switch {
		case err == nil:
			return signerOf(entity, sig, ""), armor, nil
		case errors.Is(err, pgperrors.ErrUnknownIssuer):
			continue
		case entity != nil && (errors.Is(err, pgperrors.ErrSignatureExpired) || errors.Is(err, pgperrors.ErrKeyExpired)):
			if expired == nil {
				s := signerOf(entity, sig, err.Error())
				expired, expiredArmor = &s, armor
			}
			continue
		default:
			id := strings.Join(ids[len(ids)-len(kr):], ", ")
			return Signer{}, "", fmt.Errorf("%w with key %s, which made it: %v (SHA256SUMS or its signature was altered)", ErrSignature, id, err)
		}
	}
	switch {
	case expired != nil && opts.EnforceExpiration:
		return Signer{}, "", fmt.Errorf("%w: %s made it, but %s, and OPENTOFU_ENFORCE_GPG_EXPIRATION is true", ErrSignature, *expired, expired.Expired)
	case expired != nil:
		return *expired, expiredArmor, nil
	case len(ids) == 0:
		return Signer{}, "", fmt.Errorf("%w: no signing key given", ErrSignature)
	}
	return Signer{}, "", fmt.Errorf("%w: no key offered signed it (keys: %s)", ErrSignature, strings.Join(ids, ", "))
}

// signerOf describes the entity whose key made sig.
func signerOf(e *openpgp.Entity, sig []byte, expired string) Signer {
	s := Signer{KeyID: e.PrimaryKey.KeyIdString(), Fingerprint: strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint)), Expired: expired}
	if p, err := packet.Read(bytes.NewReader(sig)); err == nil {
		if sp, ok := p.(*packet.Signature); ok {
			s.Signed = sp.CreationTime.UTC()
		}
	}
	return s
}

// ParseSums reads a SHA256SUMS document: "HEX  FILENAME" per line, into
// file names mapped to lower-case hex. Like OpenTofu, a line whose first
// field is not 64 hex digits makes the whole document unusable; unlike it,
// blank lines are tolerated, and so are what sha256sum and editors add (a
// "*" before the name in binary mode, CRLF line ends, a UTF-8 byte order
// mark). A name listed twice with two sums makes it unusable too: OpenTofu
// takes the first line, another reader the last, so neither says which
// zip was signed.
func ParseSums(doc []byte) (map[string]string, error) {
	out := map[string]string{}
	first := map[string]int{}
	for i, line := range strings.Split(strings.TrimPrefix(string(doc), "\ufeff"), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return nil, fmt.Errorf("line %d: want \"SHA256  FILENAME\"", i+1)
		}
		sum := strings.ToLower(fields[0])
		if _, err := hex.DecodeString(sum); err != nil || len(sum) != 64 {
			return nil, fmt.Errorf("line %d: %q is not a SHA-256 in hex", i+1, fields[0])
		}
		name := fields[1]
		if len(name) > 1 && name[0] == '*' {
			name = name[1:]
		}
		if had, ok := out[name]; ok && had != sum {
			return nil, fmt.Errorf("line %d: %s is listed again with another SHA-256 (line %d): which zip is meant cannot be told", i+1, name, first[name])
		}
		if _, ok := first[name]; !ok {
			first[name] = i + 1
		}
		out[name] = sum
	}
	return out, nil
}
