package oci_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
)

// OpenTofu's rule for repository templates, applied to the providers to be
// written: each of hostname, namespace and type must be in the template
// unless the providers have one value of it.
func TestCheckProviders(t *testing.T) {
	tests := []struct {
		name      string
		template  string
		providers [][]string // one CheckProviders call per element
		want      []string   // in the error of the last call; none: accepted
	}{
		{"every symbol", "/tf/${hostname}/${namespace}/${type}",
			[][]string{{"example.com/acme/alpha", "example.org/other/beta"}}, nil},
		{"one provider, no symbols", "/tf", [][]string{{"example.com/acme/alpha"}}, []string{"does not use ${type}", "add ${type}"}},
		{"one namespace, no ${type}", "/tf/${namespace}", [][]string{{"example.com/acme/alpha"}}, []string{"does not use ${type}", "add ${type} as a path segment of its own (e.g. 127.0.0.1:1/tf/${namespace}/${type})"}},
		{"one namespace and host", "/tf/${type}", [][]string{{"example.com/acme/alpha", "example.com/acme/beta"}}, nil},
		{"two types, no ${type}", "/tf/${namespace}", [][]string{{"example.com/acme/alpha", "example.com/acme/beta"}},
			[]string{`does not use ${type}`, "2 types (alpha, beta)", "example.com/acme/alpha and example.com/acme/beta would share repository", `must refer to "type"`}},
		// README's own examples leave out ${hostname}: fine for one host,
		// not for the same provider from two.
		{"two hosts, no ${hostname}", "/tf/${namespace}/${type}",
			[][]string{{"registry.opentofu.org/hashicorp/aws", "registry.terraform.io/hashicorp/aws"}},
			[]string{`does not use ${hostname}`, "2 hostnames (registry.opentofu.org, registry.terraform.io)", `must refer to "hostname"`, "Add ${hostname} to the template"}},
		{"nothing but the registry", "/tf", [][]string{{"example.com/acme/alpha", "example.org/other/beta"}},
			[]string{"does not use ${hostname} or ${namespace} or ${type}", "Add ${hostname} and ${namespace} and ${type}"}},
		{"later calls add up", "/tf/${type}", [][]string{{"example.com/acme/alpha"}, {"example.com/acme/alpha"}, {"example.com/other/beta"}},
			[]string{"does not use ${namespace}", "2 namespaces (acme, other)"}},
		{"every symbol, one repository", "/tf/${hostname}/${namespace}${type}",
			[][]string{{"example.com/ab/c", "example.com/a/bc"}},
			[]string{"example.com/a/bc and example.com/ab/c would share repository 127.0.0.1:1/tf/example.com/abc", "Separate the symbols"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := oci.Open("oci://127.0.0.1:1"+tt.template, "127.0.0.1:1"+tt.template, oci.Options{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, call := range tt.providers {
				var ps []backends.Provider
				for _, s := range call {
					ps = append(ps, mustProvider(t, s))
				}
				err = m.CheckProviders(ps)
				if i < len(tt.providers)-1 && err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, backends.ErrUsage) {
				t.Fatalf("%v: not a usage error", err)
			}
			for _, w := range append(tt.want, tt.template) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}
