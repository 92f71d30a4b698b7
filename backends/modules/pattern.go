package modules

import (
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
)

// Wildcard stands for any value of one part of a Pattern.
const Wildcard = "*"

// Pattern selects module addresses: HOST/NAMESPACE/NAME/SYSTEM where any
// whole part may be "*" (registry.opentofu.org/terraform-aws-modules/*/*).
// The host is always written: three parts would read as a provider
// pattern, HOST/NAMESPACE/TYPE, where both are accepted (a mirror spec's
// allow and deny).
type Pattern struct {
	Host, Namespace, Name, System string
}

// ParsePattern parses HOST/NAMESPACE/NAME/SYSTEM with "*" parts.
func ParsePattern(s string) (Pattern, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 4 {
		return Pattern{}, fmt.Errorf("module pattern %q: want HOST/NAMESPACE/NAME/SYSTEM, where any part may be *", s)
	}
	p := Pattern{Host: parts[0], Namespace: parts[1], Name: parts[2], System: parts[3]}
	if p.Host != Wildcard {
		h, err := backends.NormalizeHostname(p.Host)
		if err != nil {
			return Pattern{}, fmt.Errorf("module pattern %q: hostname %q: %v", s, p.Host, err)
		}
		p.Host = h
	}
	for _, c := range []struct {
		part, what string
		ok         func(string) bool
	}{
		{p.Namespace, "namespace", namePattern.MatchString},
		{p.Name, "name", namePattern.MatchString},
		{p.System, "target system", systemPattern.MatchString},
	} {
		if c.part != Wildcard && !c.ok(c.part) {
			return Pattern{}, fmt.Errorf("module pattern %q: %s %q is not a valid one, nor *", s, c.what, c.part)
		}
	}
	return p, nil
}

// Matches reports whether the pattern selects m. Names compare without
// regard to case, as registries may match them.
func (pt Pattern) Matches(m Module) bool {
	part := func(p, v string) bool { return p == Wildcard || strings.EqualFold(p, v) }
	return part(pt.Host, m.Host) && part(pt.Namespace, m.Namespace) && part(pt.Name, m.Name) && part(pt.System, m.System)
}

func (pt Pattern) String() string {
	return pt.Host + "/" + pt.Namespace + "/" + pt.Name + "/" + pt.System
}
