package provenance_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

func TestParseSums(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("B", 64)
	good := a + "  terraform-provider-x_1.0.0_linux_amd64.zip\n\n" + b + "  terraform-provider-x_1.0.0_darwin_arm64.zip\n"
	got, err := provenance.ParseSums([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got["terraform-provider-x_1.0.0_linux_amd64.zip"] != a || got["terraform-provider-x_1.0.0_darwin_arm64.zip"] != strings.ToLower(b) || len(got) != 2 {
		t.Fatalf("parsed %v", got)
	}
	// What sha256sum and editors write: "*" in binary mode, CRLF, a byte
	// order mark; a name listed twice with the same sum.
	dialect := "\ufeff" + a + " *terraform-provider-x_1.0.0_linux_amd64.zip\r\n" + a + "  terraform-provider-x_1.0.0_linux_amd64.zip\r\n"
	if got, err := provenance.ParseSums([]byte(dialect)); err != nil || len(got) != 1 || got["terraform-provider-x_1.0.0_linux_amd64.zip"] != a {
		t.Errorf("parsed %v, %v", got, err)
	}
	bad := []struct {
		name, doc, want string
	}{
		{"one field", a + "\n", "line 1: want"},
		{"short hash", "abcd  f.zip\n", `line 1: "abcd" is not a SHA-256`},
		{"not hex", strings.Repeat("z", 64) + "  f.zip\n", "is not a SHA-256"},
		{"second line bad", a + "  f.zip\nnonsense\n", "line 2"},
		{"a name twice, two sums", a + "  f.zip\n" + b + "  g.zip\n" + b + " *f.zip\n", "line 3: f.zip is listed again with another SHA-256 (line 1)"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provenance.ParseSums([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckSignature(t *testing.T) {
	signer := newKey(t, "signer", 0)
	other := newKey(t, "other", 0)
	signerArmor, otherArmor := armored(t, signer), armored(t, other)
	doc := []byte(strings.Repeat("a", 64) + "  f.zip\n")
	sig := sign(t, signer, doc)
	cases := []struct {
		name    string
		doc     []byte
		sig     []byte
		armors  []string
		wantKey string
		wantErr string
	}{
		{"signer listed second", doc, sig, []string{otherArmor, signerArmor}, signer.PrimaryKey.KeyIdString(), ""},
		{"signer not listed", doc, sig, []string{otherArmor}, "", "no key offered signed it (keys: " + other.PrimaryKey.KeyIdString() + ")"},
		{"document altered", append([]byte("0"), doc[1:]...), sig, []string{signerArmor}, "", "does not check with key " + signer.PrimaryKey.KeyIdString()},
		{"garbage signature", doc, []byte("not a signature"), []string{signerArmor}, "", "does not check with key"},
		{"empty signature", doc, nil, []string{signerArmor}, "", "no key offered signed it"},
		{"no key", doc, sig, nil, "", "no signing key given"},
		{"bad armor", doc, sig, []string{"-----BEGIN PGP PUBLIC KEY BLOCK-----\nnope\n"}, "", "signing key 1 is not a valid ASCII-armored public key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, armor, err := provenance.CheckSignature(tc.doc, tc.sig, tc.armors, provenance.Options{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, provenance.ErrSignature) {
					t.Fatalf("error = %v, want %q wrapping ErrSignature", err, tc.wantErr)
				}
				return
			}
			if err != nil || s.KeyID != tc.wantKey || armor != signerArmor {
				t.Fatalf("key %q, error %v; want key %q and the signer's armor", s.KeyID, err, tc.wantKey)
			}
			if want := strings.ToUpper(hex.EncodeToString(signer.PrimaryKey.Fingerprint)); s.Fingerprint != want {
				t.Fatalf("fingerprint %s, want %s", s.Fingerprint, want)
			}
			if s.Signed.IsZero() || s.Expired != "" {
				t.Fatalf("signer %+v: want the signing time and no expiry", s)
			}
		})
	}
}

// TestCheckSignatureExpiry: OpenTofu's rules. A key that has expired is
// accepted (and said to be) unless OPENTOFU_ENFORCE_GPG_EXPIRATION's
// option is on; a current key that also signed is preferred to it.
func TestCheckSignatureExpiry(t *testing.T) {
	old := newKey(t, "old", time.Second)
	current := newKey(t, "current", 0)
	doc := []byte(strings.Repeat("b", 64) + "  f.zip\n")
	both := append(sign(t, old, doc), sign(t, current, doc)...)

	s, _, err := provenance.CheckSignature(doc, sign(t, old, doc), []string{armored(t, old)}, provenance.Options{})
	if err != nil || s.KeyID != old.PrimaryKey.KeyIdString() || !strings.Contains(s.Expired, "expired") {
		t.Fatalf("expired key, not enforced: signer %+v, error %v; want it accepted and said to be expired", s, err)
	}
	_, _, err = provenance.CheckSignature(doc, sign(t, old, doc), []string{armored(t, old)}, provenance.Options{EnforceExpiration: true})
	if err == nil || !strings.Contains(err.Error(), "OPENTOFU_ENFORCE_GPG_EXPIRATION") || !strings.Contains(err.Error(), old.PrimaryKey.KeyIdString()) {
		t.Fatalf("expired key, enforced: error %v; want a refusal naming the key and the setting", err)
	}
	s, _, err = provenance.CheckSignature(doc, both, []string{armored(t, old), armored(t, current)}, provenance.Options{EnforceExpiration: true})
	if err != nil || s.KeyID != current.PrimaryKey.KeyIdString() || s.Expired != "" {
		t.Fatalf("an expired and a current key: signer %+v, error %v; want the current one", s, err)
	}
}

// newKey makes a signing key created an hour ago; a lifetime makes it
// expire that long after.
func newKey(t *testing.T, name string, lifetime time.Duration) *openpgp.Entity {
	t.Helper()
	if lifetime == 0 {
		e, err := registrytest.NewKey(name)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	created := time.Now().Add(-time.Hour)
	e, err := openpgp.NewEntity(name, "", "", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519,
		Time: func() time.Time { return created }, KeyLifetimeSecs: uint32(lifetime.Seconds())})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func armored(t *testing.T, e *openpgp.Entity) string {
	t.Helper()
	a, err := registrytest.ArmoredPublicKey(e)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sign signs doc as of a minute after the key was made, when even a key
// with a short lifetime was valid.
func sign(t *testing.T, e *openpgp.Entity, doc []byte) []byte {
	t.Helper()
	at := e.PrimaryKey.CreationTime
	var buf bytes.Buffer
	if err := openpgp.DetachSign(&buf, e, bytes.NewReader(doc), &packet.Config{Time: func() time.Time { return at }}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A private key is refused where a public key is wanted: the armor given
// is kept where anyone can read it.
func TestKeyFingerprintsRefusesAPrivateKey(t *testing.T) {
	e := newKey(t, "publisher", 0)
	if fps, err := provenance.KeyFingerprints(armored(t, e)); err != nil || len(fps) != 1 {
		t.Fatalf("public key: %v, %v", fps, err)
	}
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.KeyFingerprints(b.String()); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("private key: error %v, want one naming the private key", err)
	}
}
