package provenance_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

// release is a signed SHA256SUMS for two platforms of example.com/acme/alpha 1.2.0.
func release(t *testing.T) (*provenance.Provenance, map[string]hashing.Hash) {
	t.Helper()
	key := newKey(t, "acme", 0)
	zh := map[string]hashing.Hash{}
	var sums bytes.Buffer
	for _, plat := range []string{"darwin_arm64", "linux_amd64"} {
		sum := sha256.Sum256([]byte("zip for " + plat))
		zh[plat] = hashing.Hash(fmt.Sprintf("zh:%x", sum))
		fmt.Fprintf(&sums, "%x  terraform-provider-alpha_1.2.0_%s.zip\n", sum, plat)
	}
	p := &provenance.Provenance{Provider: "example.com/acme/alpha", Version: "1.2.0", SHA256SUMS: sums.Bytes(), Signature: sign(t, key, sums.Bytes()),
		Key: provenance.Key{Source: "https://example.com/v1/providers/acme/alpha/1.2.0/download/linux/amd64", ASCIIArmor: armored(t, key)}}
	s, err := p.Check(provenance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.Key.ID, p.Key.Fingerprint = s.KeyID, s.Fingerprint
	return p, zh
}

func TestRoundTrip(t *testing.T) {
	p, _ := release(t)
	b, err := provenance.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := provenance.Marshal(p)
	if !bytes.Equal(b, again) {
		t.Fatal("the same provenance marshals to different bytes")
	}
	q, err := provenance.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Equal(q) || q.Key != p.Key {
		t.Fatalf("parsed %+v, want %+v", q, p)
	}
	s, err := q.Check(provenance.Options{})
	if err != nil || s.KeyID != p.Key.ID || s.Fingerprint != p.Key.Fingerprint || s.Source != p.Key.Source {
		t.Fatalf("signer %+v, error %v", s, err)
	}
}

func TestParseRefuses(t *testing.T) {
	p, _ := release(t)
	good, _ := provenance.Marshal(p)
	cases := map[string]struct {
		doc  []byte
		want string
	}{
		"not json":       {[]byte("SHA256SUMS"), "invalid character"},
		"other format":   {bytes.Replace(good, []byte(provenance.Format), []byte("tfmirror.provenance.v9"), 1), `format "tfmirror.provenance.v9"`},
		"no signature":   {bytes.Replace(good, []byte(`"shasums_signature": "`), []byte(`"shasums_signature": "","x": "`), 1), "shasums_signature missing"},
		"too large":      {append(good, bytes.Repeat([]byte(" "), provenance.MaxSize)...), "more than"},
		"empty document": {[]byte("{}"), `format ""`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := provenance.Parse(tc.doc)
			if err == nil || !errors.Is(err, provenance.ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrFormat saying %q", err, tc.want)
			}
		})
	}
}

// TestCheckCatchesTampering: a changed SHA256SUMS, a signature by another
// key passed off under the recorded one, and a recorded key ID that is not
// the signer's are all refused, naming the key.
func TestCheckCatchesTampering(t *testing.T) {
	p, _ := release(t)
	tampered := *p
	tampered.SHA256SUMS = append([]byte("0"), p.SHA256SUMS[1:]...)
	if _, err := tampered.Check(provenance.Options{}); err == nil || !errors.Is(err, provenance.ErrSignature) || !strings.Contains(err.Error(), p.Key.ID) {
		t.Fatalf("tampered SHA256SUMS: %v", err)
	}
	other := newKey(t, "mallory", 0)
	swapped := *p
	swapped.Signature = sign(t, other, p.SHA256SUMS)
	swapped.Key.ASCIIArmor = armored(t, other)
	if _, err := swapped.Check(provenance.Options{}); err == nil || !strings.Contains(err.Error(), "names key "+p.Key.ID) {
		t.Fatalf("a document naming one key, signed by another: %v", err)
	}
	if err := swapped.Authenticate("linux_amd64", "zh:"+hashing.Hash(strings.Repeat("0", 64))); err == nil {
		t.Fatal("a zh: the document does not state was authenticated")
	}
}

func TestZipHashes(t *testing.T) {
	p, zh := release(t)
	for plat, want := range zh {
		got, err := p.ZipHashes(plat)
		if err != nil || len(got) != 1 || got[0] != want {
			t.Fatalf("%s: %v, %v; want %s", plat, got, err, want)
		}
		if err := p.Authenticate(plat, want); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Authenticate("linux_amd64", zh["darwin_arm64"]); err == nil || !errors.Is(err, hashing.ErrHashMismatch) {
		t.Fatalf("darwin's zip passed off as linux's: %v", err)
	}
	if _, err := p.ZipHashes("windows_amd64"); !errors.Is(err, provenance.ErrNotListed) {
		t.Fatalf("unlisted platform: %v", err)
	}
	s, _ := p.Check(provenance.Options{})
	ev, err := p.Evidence("linux_amd64", s)
	if err != nil || ev.Source.Kind != hashing.SourceRegistrySigned || !strings.Contains(ev.Source.Detail, s.Fingerprint) {
		t.Fatalf("evidence %+v, %v", ev, err)
	}
	if res := hashing.Verify(hashing.Sums{ZH: zh["linux_amd64"]}, ev); !res.Verified() {
		t.Fatalf("the signed zh: does not verify the zip: %+v", res)
	}
}

// A SHA256SUMS listing two providers' zips at one version (one signed
// file for a whole release of several): each provider's zip is checked
// against its own line, never passed off as the other's.
func TestZipHashesOfADocumentListingTwoProviders(t *testing.T) {
	a, b := "zh:"+strings.Repeat("a", 64), "zh:"+strings.Repeat("b", 64)
	doc := a[3:] + "  terraform-provider-alpha_1.0.0_linux_amd64.zip\n" + b[3:] + "  terraform-provider-beta_1.0.0_linux_amd64.zip\n"
	for typ, want := range map[string]string{"alpha": a, "beta": b} {
		p := &provenance.Provenance{Provider: "registry.opentofu.org/acme/" + typ, Version: "1.0.0", SHA256SUMS: []byte(doc)}
		got, err := p.ZipHashes("linux_amd64")
		if err != nil || len(got) != 1 || string(got[0]) != want {
			t.Errorf("%s: %v, %v; want %s alone", typ, got, err, want)
		}
		other := map[string]string{"alpha": b, "beta": a}[typ]
		if err := p.Authenticate("linux_amd64", hashing.Hash(other)); !errors.Is(err, hashing.ErrHashMismatch) {
			t.Errorf("%s: the other provider's zip authenticated: %v", typ, err)
		}
	}
}

// Another provider's signed release never speaks for this one's zip (issue
// 31 item 5): HashiCorp signs google and google-beta with one key at the
// same versions, and the document's provider field is not signed. A
// document with no line for terraform-provider-TYPE_V_OS_ARCH.zip does not
// list the package, whatever other lines end in _V_OS_ARCH.zip.
func TestZipHashesRequireThePackagesOwnFileName(t *testing.T) {
	google := "zh:" + strings.Repeat("c", 64)
	doc := google[3:] + "  terraform-provider-google_5.0.0_linux_amd64.zip\n" + strings.Repeat("d", 64) + "  terraform-provider-google_5.0.0_manifest.json\n"
	// A sidecar whose unsigned provider field was rewritten to google-beta.
	p := &provenance.Provenance{Provider: "registry.terraform.io/hashicorp/google-beta", Version: "5.0.0", SHA256SUMS: []byte(doc)}
	if got, err := p.ZipHashes("linux_amd64"); !errors.Is(err, provenance.ErrNotListed) || !strings.Contains(err.Error(), "terraform-provider-google-beta_5.0.0_linux_amd64.zip") {
		t.Fatalf("google's signed line taken for google-beta's zip: %v, %v", got, err)
	}
	if err := p.Authenticate("linux_amd64", hashing.Hash(google)); err == nil {
		t.Fatal("google's zip authenticated as google-beta's")
	}
	// The file name is compared without regard to case, as before.
	p.Provider = "registry.terraform.io/hashicorp/Google"
	if got, err := p.ZipHashes("linux_amd64"); err != nil || len(got) != 1 || string(got[0]) != google {
		t.Fatalf("own line: %v, %v", got, err)
	}
}
