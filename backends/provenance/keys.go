package provenance

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// KeyFingerprints returns the primary fingerprints (upper-case hex) of
// the keys in an ASCII-armored public key or keyring, as a provider's
// release publishes it; an armor that holds no key is an error, and so is
// one holding a private key: the armor given is kept beside the signature
// it checks, for every reader of the place to see (openpgp reads private
// key blocks as keyrings too).
func KeyFingerprints(armored string) ([]string, error) {
	kr, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
	if err != nil {
		return nil, fmt.Errorf("not an ASCII-armored OpenPGP public key: %v", err)
	}
	var out []string
	for _, e := range kr {
		if e.PrivateKey != nil {
			return nil, fmt.Errorf("holds the private key of %X, which must never leave its keeper: give the public key alone (gpg --armor --export %X)", e.PrimaryKey.Fingerprint, e.PrimaryKey.Fingerprint)
		}
		out = append(out, strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint)))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("not an ASCII-armored OpenPGP public key: it holds no key")
	}
	return out, nil
}

// BinarySignature returns a detached signature in the binary form the
// registries serve and CheckSignature reads: as it is, or unwrapped from
// ASCII armor (gpg --detach-sign --armor).
func BinarySignature(sig []byte) ([]byte, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(sig), []byte("-----BEGIN PGP SIGNATURE-----")) {
		return sig, nil
	}
	block, err := armor.Decode(bytes.NewReader(sig))
	if err != nil {
		return nil, fmt.Errorf("%w: not an armored signature: %v", ErrSignature, err)
	}
	return io.ReadAll(io.LimitReader(block.Body, MaxSize))
}
