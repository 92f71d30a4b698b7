package oci

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/ocitemplate"
)

var _ backends.ProviderChecker = (*Mirror)(nil)

// CheckProviders applies OpenTofu's rule for repository templates to the
// providers about to be written, together with those earlier calls
// accepted (what this process writes into the mirror): the template must
// refer to hostname, namespace and type unless all of them have one value
// of it. OpenTofu refuses a template that breaks the rule, and what
// tfmirror would write with it puts providers into one repository, where
// OpenTofu would install one provider's binary for another. Providers the
// template maps to one repository although it uses every symbol (as
// ${namespace}${type} can) are refused too. The error is a *TemplateError,
// a usage error.
func (m *Mirror) CheckProviders(ps []backends.Provider) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	all := append([]backends.Provider(nil), m.w.accepted...)
	known := map[backends.Provider]bool{}
	for _, p := range all {
		known[p] = true
	}
	for _, p := range ps {
		if !known[p] {
			known[p] = true
			all = append(all, p)
		}
	}
	backends.SortProviders(all)
	e := &TemplateError{Place: m.name, Template: m.tmpl.String(), Unpinned: m.tmpl.Unpinned(all)}
	if !m.tmpl.Uses("type") && len(all) > 0 && !slices.ContainsFunc(e.Unpinned, func(u ocitemplate.Unpinned) bool { return u.Symbol == "type" }) {
		// One type now; the next provider written would share its
		// repository and take its tags. Refused before anything is pushed.
		e.NoType = true
	}
	byRepo := map[Repository][]backends.Provider{}
	for _, p := range all {
		// A provider the template gives no valid address for is refused
		// when it is staged, with the reason.
		if r, err := m.tmpl.Resolve(p); err == nil {
			byRepo[r] = append(byRepo[r], p)
		}
	}
	for r, ps := range byRepo {
		if len(ps) > 1 {
			e.Shared = append(e.Shared, SharedRepository{Repository: r, Providers: ps})
		}
	}
	sort.Slice(e.Shared, func(i, j int) bool { return e.Shared[i].Repository.String() < e.Shared[j].Repository.String() })
	if len(e.Unpinned) > 0 || len(e.Shared) > 0 || e.NoType {
		return e
	}
	m.w.accepted = all
	return nil
}

// TemplateError is a repository template that cannot tell apart the
// providers to be written. It is a usage error (errors.Is(err,
// backends.ErrUsage)).
type TemplateError struct {
	Place    string
	Template string
	// Unpinned are the symbols the template leaves out although the
	// providers have several values of them.
	Unpinned []ocitemplate.Unpinned
	// Shared are the repositories the template gives to more than one
	// provider.
	Shared []SharedRepository
	// NoType: the template does not use ${type}, so it names one
	// repository for every provider of a namespace, however few are
	// written now.
	NoType bool
}

// SharedRepository is one repository and the providers a template maps to
// it.
type SharedRepository struct {
	Repository Repository
	Providers  []backends.Provider
}

func (e *TemplateError) Is(target error) bool { return target == backends.ErrUsage }

func (e *TemplateError) Error() string {
	if e.NoType && len(e.Unpinned) == 0 && len(e.Shared) == 0 {
		return fmt.Sprintf("oci mirror %s: the repository template %q does not use ${type}, so every provider of a namespace would share one repository, their version tags overwriting each other: add ${type} as a path segment of its own (e.g. %s/${type})",
			e.Place, e.Template, strings.TrimSuffix(e.Template, "/"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "oci mirror %s: the repository template cannot tell the providers to write apart", e.Place)
	if len(e.Unpinned) > 0 {
		var missing, have []string
		for _, u := range e.Unpinned {
			missing = append(missing, "${"+u.Symbol+"}")
			have = append(have, fmt.Sprintf("%d %ss (%s)", len(u.Values), u.Symbol, strings.Join(u.Values, ", ")))
		}
		fmt.Fprintf(&b, ": it does not use %s, but the providers have %s", strings.Join(missing, " or "), strings.Join(have, " and "))
	}
	for i, s := range e.Shared {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more repositories", len(e.Shared)-i)
			break
		}
		var names []string
		for _, p := range s.Providers {
			names = append(names, p.String())
		}
		fmt.Fprintf(&b, "; %s would share repository %s", strings.Join(names, " and "), s.Repository)
	}
	if len(e.Unpinned) > 0 {
		var syms []string
		for _, u := range e.Unpinned {
			syms = append(syms, fmt.Sprintf("%q", u.Symbol))
		}
		fmt.Fprintf(&b, ". OpenTofu refuses such a template: it must refer to %s unless the include patterns select exactly one value of each. Add ", strings.Join(syms, " and "))
		for i, u := range e.Unpinned {
			if i > 0 {
				b.WriteString(" and ")
			}
			b.WriteString("${" + u.Symbol + "}")
		}
		b.WriteString(" to the template, or select providers that share one value of each (one oci:// place per value)")
	} else {
		b.WriteString(". Separate the symbols in the template with '/' (e.g. ${namespace}/${type}), so that each provider has its own repository")
	}
	return b.String()
}
