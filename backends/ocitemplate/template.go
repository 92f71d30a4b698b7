package ocitemplate

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"oras.land/oras-go/v2/registry"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/hclinput"
)

// Template is an oci_mirror repository_template: an HCL string template over
// the symbols hostname (Unicode display form), namespace and type that gives
// REGISTRY[:PORT]/REPOSITORY for a provider. tfmirror evaluates it exactly as
// OpenTofu does, so a value pasted from a CLI configuration maps providers to
// the same repositories.
type Template struct {
	raw  string
	expr hclsyntax.Expression
	uses map[string]bool
	// reverse matches REGISTRY/REPOSITORY back to the symbols, when the
	// template is only literals and symbol references (nil otherwise).
	reverse *regexp.Regexp
	groups  []string // the symbol each capture group of reverse stands for
}

// Repository is where a provider lives: a registry and a repository in it.
type Repository struct {
	Registry string // HOST[:PORT]
	Name     string // path in the registry
}

func (r Repository) String() string { return r.Registry + "/" + r.Name }

var templateSymbols = []string{"hostname", "namespace", "type"}

// Parse parses and checks a repository template, evaluating it once
// with a placeholder provider as OpenTofu does when it loads the CLI
// configuration.
func Parse(raw string) (*Template, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("empty repository template: want REGISTRY/REPOSITORY, e.g. registry.example.com/providers/${namespace}/${type}")
	}
	expr, diags := hclsyntax.ParseTemplate([]byte(raw), "<repository template>", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("repository template %q: %s", raw, hclinput.Message(diags, false))
	}
	t := &Template{raw: raw, expr: expr, uses: map[string]bool{}}
	for _, tr := range expr.Variables() {
		name := tr.RootName()
		if !isSymbol(name) {
			return nil, fmt.Errorf("repository template %q: the symbol %q is not available; only ${hostname}, ${namespace} and ${type} are", raw, name)
		}
		t.uses[name] = true
	}
	example, err := backends.NewProvider("example.com", "example-namespace", "example-type")
	if err != nil {
		return nil, err
	}
	if _, err := t.Resolve(example); err != nil {
		return nil, err
	}
	t.reverse, t.groups = reversePattern(expr)
	return t, nil
}

func isSymbol(name string) bool {
	for _, s := range templateSymbols {
		if s == name {
			return true
		}
	}
	return false
}

// String returns the template as written.
func (t *Template) String() string { return t.raw }

// Uses reports whether the template refers to a symbol ("hostname",
// "namespace" or "type").
func (t *Template) Uses(symbol string) bool { return t.uses[symbol] }

// Resolve evaluates the template for p and checks that the result is a
// repository address.
func (t *Template) Resolve(p backends.Provider) (Repository, error) {
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{
		"hostname":  cty.StringVal(p.HostnameForDisplay()),
		"namespace": cty.StringVal(p.Namespace),
		"type":      cty.StringVal(p.Type),
	}}
	v, diags := t.expr.Value(ctx)
	if diags.HasErrors() {
		return Repository{}, fmt.Errorf("repository template %q for %s: %s", t.raw, p, hclinput.Message(diags, false))
	}
	v, err := convert.Convert(v, cty.String)
	if err != nil || v.IsNull() || !v.IsKnown() {
		return Repository{}, fmt.Errorf("repository template %q for %s: does not produce a string", t.raw, p)
	}
	addr := v.AsString()
	if !strings.Contains(addr, "/") {
		return Repository{}, fmt.Errorf("repository template %q gives %q for %s: want REGISTRY[:PORT]/REPOSITORY", t.raw, addr, p)
	}
	ref, err := registry.ParseReference(addr)
	if err != nil {
		return Repository{}, fmt.Errorf("repository template %q gives %q for %s, which is not a valid OCI repository address (%v); repository names are lowercase letters and digits separated by '.', '_', '__', '-' or '/'", t.raw, addr, p, err)
	}
	if ref.Reference != "" {
		return Repository{}, fmt.Errorf("repository template %q gives %q for %s: a repository address takes no tag or digest", t.raw, addr, p)
	}
	return Repository{Registry: ref.Registry, Name: ref.Repository}, nil
}

// reversePattern builds a regular expression that matches the addresses the
// template produces and captures each symbol, for templates made only of
// literals and plain symbol references that each fill a whole path segment.
// A segment such as ${namespace}-${type} cannot be split back unambiguously
// (namespaces hold dashes), so such templates are not read back.
func reversePattern(expr hclsyntax.Expression) (*regexp.Regexp, []string) {
	te, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok {
		return nil, nil
	}
	var b strings.Builder
	var groups []string
	b.WriteString("^")
	prevLit := ""
	for i, part := range te.Parts {
		switch p := part.(type) {
		case *hclsyntax.LiteralValueExpr:
			if p.Val.Type() != cty.String || p.Val.IsNull() {
				return nil, nil
			}
			prevLit = p.Val.AsString()
			if len(groups) > 0 && i > 0 && !strings.HasPrefix(prevLit, "/") {
				if _, after := te.Parts[i-1].(*hclsyntax.ScopeTraversalExpr); after {
					return nil, nil
				}
			}
			b.WriteString(regexp.QuoteMeta(prevLit))
		case *hclsyntax.ScopeTraversalExpr:
			if len(p.Traversal) != 1 || !strings.HasSuffix(prevLit, "/") {
				return nil, nil
			}
			prevLit = ""
			b.WriteString("([^/]+)")
			groups = append(groups, p.Traversal.RootName())
		default:
			return nil, nil
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, nil
	}
	return re, groups
}

// Reverse maps an address the template produced back to the provider, when
// the template makes that possible: it refers to every symbol through plain
// references. ok is false for addresses the template cannot have produced.
func (t *Template) Reverse(r Repository) (backends.Provider, bool) {
	if t.reverse == nil || !t.uses["hostname"] || !t.uses["namespace"] || !t.uses["type"] {
		return backends.Provider{}, false
	}
	m := t.reverse.FindStringSubmatch(r.String())
	if m == nil {
		return backends.Provider{}, false
	}
	vals := map[string]string{}
	for i, name := range t.groups {
		if old, seen := vals[name]; seen && old != m[i+1] {
			return backends.Provider{}, false
		}
		vals[name] = m[i+1]
	}
	p, err := backends.NewProvider(vals["hostname"], vals["namespace"], vals["type"])
	if err != nil {
		return backends.Provider{}, false
	}
	// The template must give this very address back: it rules out names
	// that only match because of case folding or normalisation.
	if again, err := t.Resolve(p); err != nil || again != r {
		return backends.Provider{}, false
	}
	return p, true
}

// Listable reports whether a registry's repository names can be read
// back into providers, hosts included: the template uses ${hostname},
// ${namespace} and ${type} as plain references and names one registry.
func (t *Template) Listable() bool {
	_, ok := t.FixedRegistry()
	return ok && t.reverse != nil && t.uses["hostname"] && t.uses["namespace"] && t.uses["type"]
}

// FixedRegistry returns the registry every provider maps to, when the
// template's registry part has no symbols in it.
func (t *Template) FixedRegistry() (string, bool) {
	te, ok := t.expr.(*hclsyntax.TemplateExpr)
	if !ok || len(te.Parts) == 0 {
		return "", false
	}
	lit, ok := te.Parts[0].(*hclsyntax.LiteralValueExpr)
	if !ok || lit.Val.Type() != cty.String || lit.Val.IsNull() {
		return "", false
	}
	host, _, ok := strings.Cut(lit.Val.AsString(), "/")
	if !ok || host == "" {
		return "", false
	}
	return host, true
}

// Unpinned applies OpenTofu's rule for oci_mirror templates to the
// providers ps: a template must refer to each of hostname, namespace and
// type unless every provider has the same value of it (OpenTofu judges its
// include patterns; tfmirror judges the providers it writes). It returns
// the symbols the template leaves out although ps hold more than one
// value of them, in the order hostname, namespace, type, each with those
// values sorted.
func (t *Template) Unpinned(ps []backends.Provider) []Unpinned {
	var out []Unpinned
	for _, sym := range templateSymbols {
		if t.uses[sym] {
			continue
		}
		seen := map[string]bool{}
		var values []string
		for _, p := range ps {
			v := symbolValue(p, sym)
			if !seen[v] {
				seen[v] = true
				values = append(values, v)
			}
		}
		if len(values) > 1 {
			sort.Strings(values)
			out = append(out, Unpinned{Symbol: sym, Values: values})
		}
	}
	return out
}

// Unpinned is a symbol a template does not refer to, and the values the
// providers have of it.
type Unpinned struct {
	Symbol string
	Values []string
}

func symbolValue(p backends.Provider, symbol string) string {
	switch symbol {
	case "hostname":
		return p.HostnameForDisplay()
	case "namespace":
		return p.Namespace
	}
	return p.Type
}
