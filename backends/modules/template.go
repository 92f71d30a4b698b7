package modules

import (
	"fmt"
	"regexp"
	"strings"

	"oras.land/oras-go/v2/registry"
)

// ExampleTemplate is the repository template the help texts suggest.
const ExampleTemplate = "oci://REGISTRY/modules/${namespace}/${name}-${system}"

// templateSymbols are the placeholders a module repository template may
// use.
var templateSymbols = map[string]bool{"hostname": true, "namespace": true, "name": true, "system": true}

// Template maps module addresses to OCI repositories:
// oci://REGISTRY[:PORT]/PATH where PATH may use ${hostname}, ${namespace},
// ${name} and ${system}. Values are lowercased and their characters that
// OCI repository names do not allow are replaced by "-".
type Template struct {
	raw      string
	Registry string
	path     string
	uses     map[string]bool
}

// ParseTemplate parses oci://REGISTRY/PATH (the scheme may be left out).
func ParseTemplate(raw string) (*Template, error) {
	s := strings.TrimPrefix(raw, "oci://")
	reg, p, ok := strings.Cut(s, "/")
	if !ok || reg == "" || strings.TrimRight(p, "/") == "" {
		return nil, fmt.Errorf("OCI template %q: want oci://REGISTRY/PATH, e.g. %s", raw, ExampleTemplate)
	}
	if strings.Contains(reg, "${") {
		return nil, fmt.Errorf("OCI template %q: the registry host cannot use placeholders", raw)
	}
	if strings.ContainsAny(p, "?#") || strings.Contains(p, "//") {
		return nil, fmt.Errorf("OCI template %q: the path cannot hold a query, a fragment or a //subdir", raw)
	}
	t := &Template{raw: raw, Registry: reg, path: strings.TrimRight(p, "/"), uses: map[string]bool{}}
	rest := t.path
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "}")
		if j < 0 {
			return nil, fmt.Errorf("OCI template %q: unclosed \"${\"", raw)
		}
		sym := rest[i+2 : i+j]
		if !templateSymbols[sym] {
			return nil, fmt.Errorf("OCI template %q: unknown placeholder ${%s} (use ${hostname}, ${namespace}, ${name}, ${system})", raw, sym)
		}
		t.uses[sym] = true
		rest = rest[i+j+1:]
	}
	// Check the fixed parts once, with a module every name rule allows.
	if _, err := t.Repository(Module{Host: "example.com", Namespace: "ns", Name: "name", System: "system"}); err != nil {
		return nil, fmt.Errorf("OCI template %q: %v", raw, err)
	}
	return t, nil
}

// String returns the template as written.
func (t *Template) String() string { return t.raw }

// Uses reports whether the template uses a placeholder ("namespace", ...).
func (t *Template) Uses(symbol string) bool { return t.uses[symbol] }

// Repository renders the repository name for m (without the registry).
func (t *Template) Repository(m Module) (string, error) {
	r := strings.NewReplacer(
		"${hostname}", sanitize(m.Host),
		"${namespace}", sanitize(m.Namespace),
		"${name}", sanitize(m.Name),
		"${system}", sanitize(m.System),
	)
	repo := strings.ToLower(r.Replace(t.path))
	ref := registry.Reference{Registry: t.Registry, Repository: repo}
	if err := ref.ValidateRegistry(); err != nil {
		return "", fmt.Errorf("registry %q: %v", t.Registry, err)
	}
	if err := ref.ValidateRepository(); err != nil {
		return "", fmt.Errorf("repository %q for %s is not a valid OCI repository name (lowercase letters, digits, and single separators . _ __ -)", repo, m)
	}
	return repo, nil
}

// notAllowed are characters OCI repository names never hold; sepRun finds
// runs of separators, of which only "__" and all-dash runs are allowed.
var (
	notAllowed = regexp.MustCompile(`[^a-z0-9._-]+`)
	sepRun     = regexp.MustCompile(`[._-]{2,}`)
)

// sanitize makes a module address part fit an OCI path component:
// lowercase, other characters and invalid separator runs replaced by "-",
// no separator at either end.
func sanitize(s string) string {
	s = notAllowed.ReplaceAllString(strings.ToLower(s), "-")
	s = sepRun.ReplaceAllStringFunc(s, func(run string) string {
		if run == "__" || strings.Trim(run, "-") == "" {
			return run
		}
		return "-"
	})
	return strings.Trim(s, "._-")
}
