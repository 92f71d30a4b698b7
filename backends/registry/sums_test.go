package registry

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

func TestParseSums(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("B", 64)
	good := a + "  terraform-provider-x_1.0.0_linux_amd64.zip\n\n" + b + "  terraform-provider-x_1.0.0_darwin_arm64.zip\n"
	got, err := parseSums([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if got["terraform-provider-x_1.0.0_linux_amd64.zip"] != a || got["terraform-provider-x_1.0.0_darwin_arm64.zip"] != strings.ToLower(b) || len(got) != 2 {
		t.Fatalf("parsed %v", got)
	}
	bad := []struct {
		name, doc, want string
	}{
		{"one field", a + "\n", "line 1: want"},
		{"short hash", "abcd  f.zip\n", `line 1: "abcd" is not a SHA-256`},
		{"not hex", strings.Repeat("z", 64) + "  f.zip\n", "is not a SHA-256"},
		{"second line bad", a + "  f.zip\nnonsense\n", "line 2"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSums([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckSignature(t *testing.T) {
	signer, err := registrytest.NewKey("signer")
	if err != nil {
		t.Fatal(err)
	}
	other, err := registrytest.NewKey("other")
	if err != nil {
		t.Fatal(err)
	}
	signerArmor, _ := registrytest.ArmoredPublicKey(signer)
	otherArmor, _ := registrytest.ArmoredPublicKey(other)
	doc := []byte(strings.Repeat("a", 64) + "  f.zip\n")
	sig, err := registrytest.Sign(signer, doc)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		doc     []byte
		sig     []byte
		armors  []string
		wantKey string
		wantErr string
	}{
		{"signer listed second", doc, sig, []string{otherArmor, signerArmor}, signer.PrimaryKey.KeyIdString(), ""},
		{"signer not listed", doc, sig, []string{otherArmor}, "", "no key of the registry signed it (keys: " + other.PrimaryKey.KeyIdString() + ")"},
		{"document altered", append([]byte("0"), doc[1:]...), sig, []string{signerArmor}, "", "does not check with key " + signer.PrimaryKey.KeyIdString()},
		{"garbage signature", doc, []byte("not a signature"), []string{signerArmor}, "", "does not check with key"},
		{"empty signature", doc, nil, []string{signerArmor}, "", "no key of the registry signed it"},
		{"bad armor", doc, sig, []string{"-----BEGIN PGP PUBLIC KEY BLOCK-----\nnope\n"}, "", "signing key 1 of the registry is not a valid ASCII-armored public key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, _, err := checkSignature(tc.doc, tc.sig, tc.armors)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || key != tc.wantKey {
				t.Fatalf("key %q, error %v; want key %q", key, err, tc.wantKey)
			}
		})
	}
}
