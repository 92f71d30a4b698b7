package trust

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/backends/provenance"
)

// The settings OpenTofu reads, which a policy takes as its defaults
// (Defaults); the file and the command line can only make them stricter.
const (
	EnvEnforceValidation = "OPENTOFU_ENFORCE_GPG_VALIDATION"
	EnvEnforceExpiration = "OPENTOFU_ENFORCE_GPG_EXPIRATION"
)

// ErrRefused is wrapped by Admit's errors: the policy does not let the
// archive be mirrored.
var ErrRefused = errors.New("refused by the trust policy")

// Policy says which signatures are accepted. The nil *Policy accepts any
// signature that checks, and archives without one.
type Policy struct {
	// File is where the policy was read from; empty when it was made from
	// flags alone.
	File string
	// RequireSignature refuses an archive that has no valid signature: a
	// source that keeps no provenance, a registry that publishes none.
	RequireSignature bool
	// Signatures says how signatures are checked (key expiry).
	Signatures provenance.Options
	// Pins are the provider blocks, in file order.
	Pins []Pin
}

// Pin is one provider block: the keys that may sign what Pattern matches.
type Pin struct {
	Pattern cliconfig.Pattern
	// Fingerprints are upper-case hex, without spaces.
	Fingerprints []string
	// At is FILE:LINE of the block.
	At string
}

// Defaults is the policy OpenTofu's environment asks for: require_signature
// when OPENTOFU_ENFORCE_GPG_VALIDATION is "true", enforce_expiration when
// OPENTOFU_ENFORCE_GPG_EXPIRATION is.
func Defaults(getenv func(string) string) *Policy {
	return &Policy{
		RequireSignature: getenv(EnvEnforceValidation) == "true",
		Signatures:       provenance.Options{EnforceExpiration: getenv(EnvEnforceExpiration) == "true"},
	}
}

// Load reads a policy file onto base (Defaults), which it only makes
// stricter. Errors wrap backends.ErrUsage.
func Load(path string, base *Policy) (*Policy, error) {
	src, err := hclinput.ReadFile(path)
	if err != nil {
		return nil, backends.Usagef("policy: %v", err)
	}
	return Parse(src, path, base)
}

// fileSchema is what a policy file may hold.
var fileSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "require_signature"}, {Name: "enforce_expiration"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "provider", LabelNames: []string{"pattern"}}},
}

type pinBody struct {
	Fingerprints []string `hcl:"fingerprints"`
}

// Parse reads a policy file's bytes onto base; filename names it in
// messages. Every problem is reported at once, each with FILE:LINE:COLUMN.
func Parse(src []byte, filename string, base *Policy) (*Policy, error) {
	pol := &Policy{File: filename}
	if base != nil {
		pol.RequireSignature, pol.Signatures = base.RequireSignature, base.Signatures
	}
	diags := hclinput.Check(src, filename, hclinput.Native)
	if !diags.HasErrors() {
		diags = append(diags, pol.parse(src, filename)...)
	}
	if err := diagErr(filename, diags); err != nil {
		return nil, err
	}
	return pol, nil
}

func (pol *Policy) parse(src []byte, filename string) hcl.Diagnostics {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return diags
	}
	content, more := f.Body.Content(fileSchema)
	diags = append(diags, more...)
	for name, set := range map[string]*bool{"require_signature": &pol.RequireSignature, "enforce_expiration": &pol.Signatures.EnforceExpiration} {
		if a, ok := content.Attributes[name]; ok {
			var v bool
			diags = append(diags, gohcl.DecodeExpression(a.Expr, nil, &v)...)
			*set = *set || v
		}
	}
	seen := map[string]string{}
	for _, b := range content.Blocks {
		pin, more := parsePin(b, filename)
		diags = append(diags, more...)
		if more.HasErrors() {
			continue
		}
		if first, dup := seen[pin.Pattern.String()]; dup {
			diags = append(diags, errAt(b.LabelRanges[0], fmt.Sprintf("provider %q is already pinned at %s: one block per pattern", pin.Pattern, first)))
			continue
		}
		seen[pin.Pattern.String()] = pin.At
		pol.Pins = append(pol.Pins, pin)
	}
	return diags
}

func parsePin(b *hcl.Block, filename string) (Pin, hcl.Diagnostics) {
	var body pinBody
	diags := gohcl.DecodeBody(b.Body, nil, &body)
	pt, err := cliconfig.ParsePattern(b.Labels[0])
	if err != nil {
		diags = append(diags, errAt(b.LabelRanges[0], err.Error()))
	}
	pin := Pin{Pattern: pt, At: fmt.Sprintf("%s:%d", filename, b.DefRange.Start.Line)}
	if diags.HasErrors() {
		return pin, diags
	}
	r := b.Body.(*hclsyntax.Body).Attributes["fingerprints"].Expr.Range()
	if len(body.Fingerprints) == 0 {
		diags = append(diags, errAt(r, "fingerprints is empty: name the keys that may sign "+pt.String()))
	}
	for _, fp := range body.Fingerprints {
		norm, err := NormalizeFingerprint(fp)
		if err != nil {
			diags = append(diags, errAt(r, err.Error()))
			continue
		}
		pin.Fingerprints = append(pin.Fingerprints, norm)
	}
	return pin, diags
}

// NormalizeFingerprint returns an OpenPGP fingerprint as upper-case hex
// without spaces: 40 digits (v4 keys) or 64 (v5 and v6). A key ID (16
// digits) is refused: it is short enough to be forged.
func NormalizeFingerprint(s string) (string, error) {
	norm := strings.ToUpper(strings.Join(strings.Fields(s), ""))
	if _, err := hex.DecodeString(norm); err != nil || len(norm) != 40 && len(norm) != 64 {
		if len(norm) == 16 {
			return "", fmt.Errorf("%q is a key ID; pin the key's full fingerprint (40 hex digits; gpg --fingerprint shows it)", s)
		}
		return "", fmt.Errorf("%q is not a key fingerprint (40 or 64 hex digits)", s)
	}
	return norm, nil
}

func errAt(r hcl.Range, msg string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: msg, Subject: r.Ptr()}
}

// diagErr is every error diagnostic, each with FILE:LINE:COLUMN, as a
// usage error.
func diagErr(filename string, diags hcl.Diagnostics) error {
	var lines []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		pos := filename
		if d.Subject != nil {
			pos = fmt.Sprintf("%s:%d:%d", filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		lines = append(lines, "policy "+pos+": "+msg)
	}
	if len(lines) == 0 {
		return nil
	}
	return backends.Usagef("%s", strings.Join(lines, "\n"))
}

// PinFor returns the most specific pin whose pattern matches p, if any.
func (pol *Policy) PinFor(p backends.Provider) (Pin, bool) {
	if pol == nil {
		return Pin{}, false
	}
	best, bestScore := Pin{}, -1
	for _, pin := range pol.Pins {
		if !pin.Pattern.Matches(p, cliconfig.Wildcard) {
			continue
		}
		if s := specificity(pin.Pattern); s > bestScore {
			best, bestScore = pin, s
		}
	}
	return best, bestScore >= 0
}

// specificity ranks patterns: an exact type weighs more than an exact
// namespace, which weighs more than an exact hostname.
func specificity(pt cliconfig.Pattern) int {
	s := 0
	if pt.Type != cliconfig.Wildcard {
		s += 4
	}
	if pt.Namespace != cliconfig.Wildcard {
		s += 2
	}
	if pt.Hostname != "" && pt.Hostname != cliconfig.Wildcard {
		s++
	}
	return s
}

// Admit decides whether a version of p whose source proves signer s may
// be mirrored; s is nil when the source has no valid signature for it (no
// provenance). what names the version in messages. The error wraps
// ErrRefused and names both keys: the signer and the ones pinned.
func (pol *Policy) Admit(p backends.Provider, what string, s *provenance.Signer) error {
	if pol == nil {
		return nil
	}
	pin, pinned := pol.PinFor(p)
	switch {
	case s == nil && pinned:
		return fmt.Errorf("%s: %w: no valid signature, and %s pins %s for %s", what, ErrRefused, pin.At, fingerprints(pin), pin.Pattern)
	case s == nil && pol.RequireSignature:
		return fmt.Errorf("%s: %w: no valid signature, and a signature is required (%s)", what, ErrRefused, pol.requiredBy())
	case s == nil || !pinned:
		return nil
	}
	for _, fp := range pin.Fingerprints {
		if strings.EqualFold(fp, s.Fingerprint) {
			return nil
		}
	}
	return fmt.Errorf("%s: %w: signed by %s, but %s pins %s for %s", what, ErrRefused, s, pin.At, fingerprints(pin), pin.Pattern)
}

func fingerprints(pin Pin) string {
	if len(pin.Fingerprints) == 1 {
		return "fingerprint " + pin.Fingerprints[0]
	}
	return "fingerprints " + strings.Join(pin.Fingerprints, ", ")
}

func (pol *Policy) requiredBy() string {
	if pol.File != "" {
		return "require_signature in " + pol.File + ", --require-signature or " + EnvEnforceValidation
	}
	return "--require-signature or " + EnvEnforceValidation + "=true"
}
