package trust_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/backends/trust"
)

const (
	fpHashi = "C874011F0AB405110D02105534365D9472D7468F"
	fpAcme  = "1111222233334444555566667777888899990000"
	fpOther = "AAAABBBBCCCCDDDDEEEEFFFF0000111122223333"
)

func provider(t *testing.T, addr string) backends.Provider {
	t.Helper()
	p, err := backends.ParseProvider(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAdmit(t *testing.T) {
	src := `
provider "registry.terraform.io/hashicorp/*" {
  fingerprints = ["c874 011f 0ab4 0511 0d02  1055 3436 5d94 72d7 468f"]
}
provider "registry.terraform.io/hashicorp/aws" {
  fingerprints = ["` + fpAcme + `", "` + fpHashi + `"]
}
provider "acme/*" {
  fingerprints = ["` + fpAcme + `"]
}
`
	pol, err := trust.Parse([]byte(src), "trust.hcl", nil)
	if err != nil {
		t.Fatal(err)
	}
	signed := func(fp string) *provenance.Signer { return &provenance.Signer{KeyID: fp[24:], Fingerprint: fp} }
	cases := []struct {
		addr   string
		signer *provenance.Signer
		want   string // "" admits; else the error contains it
	}{
		{"registry.terraform.io/hashicorp/null", signed(fpHashi), ""},
		{"registry.terraform.io/hashicorp/null", signed(fpOther), "signed by key " + fpOther[24:] + ", fingerprint " + fpOther + ", but trust.hcl:2 pins fingerprint " + fpHashi + " for registry.terraform.io/hashicorp/*"},
		{"registry.terraform.io/hashicorp/aws", signed(fpAcme), ""},
		{"registry.terraform.io/hashicorp/aws", signed(fpOther), "trust.hcl:5 pins fingerprints " + fpAcme + ", " + fpHashi},
		{"example.com/acme/widget", signed(fpAcme), ""},
		{"other.example/acme/widget", signed(fpHashi), "trust.hcl:8 pins fingerprint " + fpAcme + " for acme/*"},
		{"registry.terraform.io/hashicorp/null", nil, "no valid signature, and trust.hcl:2 pins"},
		{"example.com/someone/else", signed(fpOther), ""},
		{"example.com/someone/else", nil, ""},
	}
	for _, tc := range cases {
		err := pol.Admit(provider(t, tc.addr), tc.addr+" 1.0.0", tc.signer)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s by %v: %v, want admitted", tc.addr, tc.signer, err)
		case tc.want != "" && (err == nil || !errors.Is(err, trust.ErrRefused) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s by %v: %v, want refused saying %q", tc.addr, tc.signer, err, tc.want)
		}
	}
}

func TestRequireSignature(t *testing.T) {
	env := map[string]string{trust.EnvEnforceValidation: "true"}
	base := trust.Defaults(func(k string) string { return env[k] })
	p := provider(t, "example.com/acme/widget")
	if err := base.Admit(p, "widget 1.0.0", nil); err == nil || !strings.Contains(err.Error(), "a signature is required (--require-signature or OPENTOFU_ENFORCE_GPG_VALIDATION=true)") {
		t.Fatalf("unsigned under OPENTOFU_ENFORCE_GPG_VALIDATION: %v", err)
	}
	pol, err := trust.Parse([]byte("require_signature = false\nenforce_expiration = true\n"), "p.hcl", base)
	if err != nil {
		t.Fatal(err)
	}
	if !pol.RequireSignature || !pol.Signatures.EnforceExpiration {
		t.Fatalf("a file made the environment's policy laxer, or ignored enforce_expiration: %+v", pol)
	}
	var none *trust.Policy
	if err := none.Admit(p, "widget 1.0.0", nil); err != nil {
		t.Fatalf("no policy refused: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		`provider "hashicorp/*" { fingerprints = ["ABCDEF0123456789"] }`: "is a key ID; pin the key's full fingerprint",
		`provider "hashicorp/*" { fingerprints = ["xyz"] }`:              `"xyz" is not a key fingerprint`,
		`provider "hashicorp/*" { fingerprints = [] }`:                   "fingerprints is empty",
		`provider "*/aws" { fingerprints = ["` + fpHashi + `"] }`:        "a wildcard namespace needs a wildcard type",
		`provider "a/b" {}`: `"fingerprints" is required`,
		`pin "a/b" { fingerprints = ["` + fpHashi + `"] }`:                                                                     "Unsupported block type",
		"provider \"a/b\" { fingerprints = [\"" + fpHashi + "\"] }\nprovider \"a/b\" { fingerprints = [\"" + fpHashi + "\"] }": "already pinned at p.hcl:1",
	}
	for src, want := range cases {
		_, err := trust.Parse([]byte(src), "p.hcl", nil)
		if err == nil || !errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "policy p.hcl:") {
			t.Errorf("%s: %v, want a usage error at p.hcl saying %q", src, err, want)
		}
	}
}
