package provenance_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

// FuzzParseSums: any SHA256SUMS document parses into file names mapped to
// lowercase 64-digit hex, or is refused; never a panic.
func FuzzParseSums(f *testing.F) {
	a := strings.Repeat("a", 64)
	for _, seed := range []string{
		a + "  terraform-provider-x_1.0.0_linux_amd64.zip\n" + strings.Repeat("B", 64) + "  terraform-provider-x_1.0.0_darwin_arm64.zip\n",
		"\n\n" + a + " *binary-mode.zip\r\n", a, a + "x  f.zip", "zz  f.zip", a + "  two names.zip", "\x00", "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		lines, err := provenance.ParseSums(doc)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		for name, sum := range lines {
			if name == "" || strings.ContainsAny(name, " \t\n\r") {
				t.Fatalf("file name %q", name)
			}
			if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 || sum != strings.ToLower(sum) {
				t.Fatalf("sum %q for %q is not lowercase hex SHA-256", sum, name)
			}
		}
	})
}

// FuzzCheckSignature: a hostile signature, or a hostile key, is an error,
// never a panic, and never a success unless the registry's key signed the
// document.
func FuzzCheckSignature(f *testing.F) {
	key, err := registrytest.NewKey("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	armored, err := registrytest.ArmoredPublicKey(key)
	if err != nil {
		f.Fatal(err)
	}
	doc := []byte(strings.Repeat("a", 64) + "  terraform-provider-x_1.0.0_linux_amd64.zip\n")
	sig, err := registrytest.Sign(key, doc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sig, armored)
	f.Add(sig[:len(sig)/2], armored)
	f.Add([]byte{}, "")
	f.Add(sig, armored[:len(armored)/2])
	f.Add(sig, strings.Replace(armored, "PUBLIC KEY", "PRIVATE KEY", -1))
	f.Fuzz(func(t *testing.T, sig []byte, armor string) {
		s, _, err := provenance.CheckSignature(doc, sig, []string{armor}, provenance.Options{})
		if err == nil && s.KeyID == "" {
			t.Fatal("accepted without naming the key")
		}
	})
}

// FuzzParse: any bytes are a provenance document with every required field,
// or refused with ErrFormat; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"format":"tfmirror.provenance.v1","provider":"a/b/c","version":"1.0.0","shasums":"YQ==","shasums_signature":"YQ==","signing_key":{"ascii_armor":"x"}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := provenance.Parse(b)
		if err != nil {
			return
		}
		if p.Provider == "" || p.Version == "" || len(p.SHA256SUMS) == 0 || len(p.Signature) == 0 || p.Key.ASCIIArmor == "" {
			t.Fatalf("accepted an incomplete document: %+v", p)
		}
	})
}
