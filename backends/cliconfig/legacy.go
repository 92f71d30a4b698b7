package cliconfig

import (
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The clients parse the CLI configuration with HCL 1, which differs from HCL
// 2's native syntax in two ways that matter for real files: strings are
// literal ("${namespace}" in a repository_template is text, which OpenTofu
// later evaluates as a template itself), and argument names may be quoted,
// which every dev_overrides block does ("example.com/acme/x" = "/path").
// literal and maskDevOverrides bridge those two differences, using HCL 2's
// own lexer and expression types.

// literal returns a quoted string expression's text as HCL 1 reads it,
// without evaluating any ${...} in it.
func (p *fileParser) literal(expr hcl.Expression) (string, bool) {
	t, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok || p.src == nil || t.IsStringLiteral() {
		return "", false
	}
	r := t.SrcRange
	if r.Start.Byte < 0 || r.End.Byte > len(p.src) || r.End.Byte-r.Start.Byte < 2 {
		return "", false
	}
	raw := string(p.src[r.Start.Byte:r.End.Byte])
	if raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false // a heredoc: leave it to HCL 2
	}
	s, err := strconv.Unquote(raw)
	if err != nil {
		return raw[1 : len(raw)-1], true
	}
	return s, true
}

// maskDevOverrides blanks out the inside of every dev_overrides block
// (keeping newlines, so positions stay true) and returns their entries by
// the line of the block, so that HCL 2 can parse the rest.
func maskDevOverrides(src []byte, filename string) ([]byte, map[int]map[string]string, hcl.Diagnostics) {
	toks, diags := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		// The parser reports the same problems with better messages.
		return src, nil, nil
	}
	out := map[int]map[string]string{}
	var masked []byte
	for i := 0; i < len(toks); i++ {
		if toks[i].Type != hclsyntax.TokenIdent || string(toks[i].Bytes) != "dev_overrides" {
			continue
		}
		j := i + 1
		if j >= len(toks) || toks[j].Type != hclsyntax.TokenOBrace {
			continue
		}
		depth, end := 0, -1
		for k := j; k < len(toks) && end < 0; k++ {
			switch toks[k].Type {
			case hclsyntax.TokenOBrace:
				depth++
			case hclsyntax.TokenCBrace:
				depth--
				if depth == 0 {
					end = k
				}
			}
		}
		if end < 0 {
			return src, nil, nil // unclosed: the parser says so
		}
		entries, d := devOverrideEntries(toks[j+1 : end])
		diags = append(diags, d...)
		out[toks[i].Range.Start.Line] = entries
		if masked == nil {
			masked = append([]byte(nil), src...)
		}
		for b := toks[j].Range.End.Byte; b < toks[end].Range.Start.Byte; b++ {
			if masked[b] != '\n' && masked[b] != '\r' {
				masked[b] = ' '
			}
		}
		i = end
	}
	if masked == nil {
		masked = src
	}
	return masked, out, diags
}

// devOverrideEntries reads `"ADDRESS" = "PATH"` (or `NAME = "PATH"`) lines.
func devOverrideEntries(toks hclsyntax.Tokens) (map[string]string, hcl.Diagnostics) {
	out := map[string]string{}
	var diags hcl.Diagnostics
	i := 0
	skipNewlines := func() {
		for i < len(toks) && (toks[i].Type == hclsyntax.TokenNewline || toks[i].Type == hclsyntax.TokenComment) {
			i++
		}
	}
	quoted := func() (string, bool) {
		if i+2 < len(toks) && toks[i].Type == hclsyntax.TokenOQuote && toks[i+1].Type == hclsyntax.TokenQuotedLit && toks[i+2].Type == hclsyntax.TokenCQuote {
			lit := string(toks[i+1].Bytes)
			i += 3
			if s, err := strconv.Unquote(`"` + lit + `"`); err == nil {
				return s, true
			}
			return lit, true
		}
		return "", false
	}
	for skipNewlines(); i < len(toks); skipNewlines() {
		start := toks[i].Range
		key, ok := quoted()
		if !ok && toks[i].Type == hclsyntax.TokenIdent {
			key, ok = string(toks[i].Bytes), true
			i++
		}
		if ok && i < len(toks) && toks[i].Type == hclsyntax.TokenEqual {
			i++
			if val, ok := quoted(); ok {
				out[key] = val
				continue
			}
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid dev_overrides entry",
			Detail:   `want "HOSTNAME/NAMESPACE/TYPE" = "/path/to/provider/dir" lines`,
			Subject:  &start,
		})
		for i < len(toks) && toks[i].Type != hclsyntax.TokenNewline {
			i++
		}
	}
	return out, diags
}
