package cliconfig

import (
	"fmt"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
)

// Wildcard stands for any value of one part of a pattern.
const Wildcard = "*"

// Pattern is one include or exclude pattern of an installation method:
// [HOSTNAME/]NAMESPACE/TYPE where a whole part may be "*".
type Pattern struct {
	// Hostname in comparison form, Wildcard, or "" when the pattern was
	// written as NAMESPACE/TYPE: the running client's default registry
	// (registry.terraform.io for Terraform, registry.opentofu.org for
	// OpenTofu), which tfmirror cannot know.
	Hostname  string
	Namespace string
	Type      string
}

// ParsePattern parses a pattern with the clients' rules: a wildcard
// hostname needs a wildcard namespace and type, and a wildcard namespace a
// wildcard type.
func ParsePattern(s string) (Pattern, error) {
	parts := strings.Split(s, "/")
	var p Pattern
	switch len(parts) {
	case 2:
		p.Namespace, p.Type = parts[0], parts[1]
	case 3:
		p.Hostname, p.Namespace, p.Type = parts[0], parts[1], parts[2]
		if p.Hostname != Wildcard {
			h, err := backends.NormalizeHostname(p.Hostname)
			if err != nil {
				return Pattern{}, fmt.Errorf("pattern %q: hostname: %v", s, err)
			}
			p.Hostname = h
		}
	default:
		return Pattern{}, fmt.Errorf("pattern %q: want [HOSTNAME/]NAMESPACE/TYPE, where any part may be *", s)
	}
	for _, part := range []*string{&p.Namespace, &p.Type} {
		if *part == Wildcard {
			continue
		}
		parse := backends.ParseProviderPart
		if part == &p.Namespace {
			parse = backends.ParseProviderNamespace
		}
		v, err := parse(*part)
		if err != nil {
			return Pattern{}, fmt.Errorf("pattern %q: %q: %v", s, *part, err)
		}
		*part = v
	}
	switch {
	case p.Hostname == Wildcard && (p.Namespace != Wildcard || p.Type != Wildcard):
		return Pattern{}, fmt.Errorf("pattern %q: a wildcard hostname needs a wildcard namespace and type (*/*/*)", s)
	case p.Namespace == Wildcard && p.Type != Wildcard:
		return Pattern{}, fmt.Errorf("pattern %q: a wildcard namespace needs a wildcard type", s)
	}
	return p, nil
}

// Matches reports whether the pattern selects p, taking defaultHost as the
// hostname of a pattern written without one.
func (pt Pattern) Matches(p backends.Provider, defaultHost string) bool {
	host := pt.Hostname
	if host == "" {
		host = defaultHost
	}
	return (host == Wildcard || host == p.Hostname) &&
		(pt.Namespace == Wildcard || pt.Namespace == p.Namespace) &&
		(pt.Type == Wildcard || pt.Type == p.Type)
}

func (pt Pattern) String() string {
	s := pt.Namespace + "/" + pt.Type
	if pt.Hostname != "" {
		s = pt.Hostname + "/" + s
	}
	return s
}
