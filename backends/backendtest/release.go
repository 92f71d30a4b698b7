package backendtest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// releaseTime is when a seeded signer's key was made and its signatures
// are dated: fixed, so screens that show them do not change.
var releaseTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// NewSeededSigner is NewSigner with a key drawn from seed and dated at a
// fixed time, the same key every run: for golden screens that show a
// fingerprint. Its signatures (ReleaseDir) are dated at that time too.
func NewSeededSigner(t testing.TB, name string, seed int64) *Signer {
	t.Helper()
	cfg := seededConfig(seed)
	e, err := openpgp.NewEntity(name, "", "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Signer{Entity: e, Armor: armored(t, e), seed: seed}
}

func seededConfig(seed int64) *packet.Config {
	return &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Curve: packet.Curve25519,
		Rand: rand.New(rand.NewSource(seed)), Time: func() time.Time { return releaseTime }}
}

// ReleaseDir writes a provider release into dir as goreleaser leaves it in
// dist/: terraform-provider-TYPE_VERSION_OS_ARCH.zip for each platform
// (ProviderZip: the executable OpenTofu needs), their
// terraform-provider-TYPE_VERSION_SHA256SUMS, its detached signature by s
// (.sig) and the publisher's key (TYPE.asc). provider is HOST/NS/TYPE. It
// returns the key's path.
func (s *Signer) ReleaseDir(t testing.TB, dir, provider, version string, platforms ...string) string {
	t.Helper()
	typ := provider[strings.LastIndexByte(provider, '/')+1:]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, plat := range platforms {
		pkg := Pkg(t, provider, version, plat)
		z := ProviderZip(t, pkg, "")
		write(t, filepath.Join(dir, pkg.Filename()), z)
		lines = append(lines, fmt.Sprintf("%x  %s\n", sha256.Sum256(z), pkg.Filename()))
	}
	sort.Strings(lines)
	sums := []byte(strings.Join(lines, ""))
	name := filepath.Join(dir, "terraform-provider-"+typ+"_"+version+"_SHA256SUMS")
	write(t, name, sums)
	var cfg *packet.Config
	if s.seed != 0 {
		cfg = seededConfig(s.seed)
	}
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, s.Entity, bytes.NewReader(sums), cfg); err != nil {
		t.Fatal(err)
	}
	write(t, name+".sig", sig.Bytes())
	key := filepath.Join(dir, typ+".asc")
	write(t, key, []byte(s.Armor))
	return key
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
