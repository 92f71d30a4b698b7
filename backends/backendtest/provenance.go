package backendtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/tfmirror/tfmirror/backends/provenance"
)

// Signer is a test signing key, as a provider's publisher holds it.
type Signer struct {
	Entity *openpgp.Entity
	Armor  string
	seed   int64 // NewSeededSigner's: its signatures are dated as its key
}

// NewSigner makes an Ed25519 signing key (quick to generate), made an hour
// ago.
func NewSigner(t testing.TB, name string) *Signer {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", "", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519, Time: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	return &Signer{Entity: e, Armor: armored(t, e)}
}

// armored is e's public key, ASCII-armored as a publisher gives it.
func armored(t testing.TB, e *openpgp.Entity) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err == nil {
		err = e.Serialize(w)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// KeyID is the key's ID, as provenance records it.
func (s *Signer) KeyID() string { return s.Entity.PrimaryKey.KeyIdString() }

// Fingerprint is the key's fingerprint, upper-case hex.
func (s *Signer) Fingerprint() string {
	return strings.ToUpper(hex.EncodeToString(s.Entity.PrimaryKey.Fingerprint))
}

// Provenance signs a SHA256SUMS of the seeds of one provider version, as
// its publisher would release it, and returns it as a mirror keeps it.
func (s *Signer) Provenance(t testing.TB, seeds []Seed) *provenance.Provenance {
	t.Helper()
	if len(seeds) == 0 {
		t.Fatal("backendtest: no seeds to sign")
	}
	first := seeds[0].Package
	var lines []string
	for _, sd := range seeds {
		if sd.Package.Provider != first.Provider || sd.Package.Version.String() != first.Version.String() {
			t.Fatalf("backendtest: %s is not of %s %s", sd.Package, first.Provider, first.Version)
		}
		lines = append(lines, fmt.Sprintf("%x  %s\n", sha256.Sum256(sd.Zip), sd.Package.Filename()))
	}
	sort.Strings(lines)
	sums := []byte(strings.Join(lines, ""))
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, s.Entity, bytes.NewReader(sums), nil); err != nil {
		t.Fatal(err)
	}
	return &provenance.Provenance{Provider: first.Provider.String(), Version: first.Version.String(), SHA256SUMS: sums, Signature: sig.Bytes(),
		Key: provenance.Key{ID: s.KeyID(), Fingerprint: s.Fingerprint(), Source: "https://" + first.Provider.Hostname + "/v1/providers/test", ASCIIArmor: s.Armor}}
}

// Versions groups seeds by provider version, in order of first appearance.
func Versions(seeds []Seed) [][]Seed {
	var order []string
	by := map[string][]Seed{}
	for _, s := range seeds {
		k := s.Package.Provider.String() + " " + s.Package.Version.String()
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	out := make([][]Seed, len(order))
	for i, k := range order {
		out[i] = by[k]
	}
	return out
}
