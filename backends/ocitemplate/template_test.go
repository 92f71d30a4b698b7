package ocitemplate

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

func TestTemplateResolve(t *testing.T) {
	tests := []struct {
		tmpl, provider, want string
	}{
		{"example.com/opentofu-providers/${namespace}/${type}", "registry.opentofu.org/hashicorp/aws", "example.com/opentofu-providers/hashicorp/aws"},
		{"localhost:5000/p/${hostname}/${namespace}/${type}", "registry.terraform.io/hashicorp/null", "localhost:5000/p/registry.terraform.io/hashicorp/null"},
		{"reg.example/${namespace}-${type}", "example.com/Acme/Alpha", "reg.example/acme-alpha"},
		{"reg.example/only-one", "example.com/acme/alpha", "reg.example/only-one"},
		{"reg.example/${type}", "example.com/acme/alpha", "reg.example/alpha"},
		// HCL escapes: $${ is a literal "${".
		{"reg.example/x/${type}/$${ignored}", "example.com/acme/alpha", ""},
		// HCL template functions are not available, but plain directives are.
		{`reg.example/%{ if namespace == "acme" }in%{ else }out%{ endif }/${type}`, "example.com/acme/alpha", "reg.example/in/alpha"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			tm, err := Parse(tt.tmpl)
			if tt.want == "" {
				if err == nil {
					if _, err = tm.Resolve(mustProvider(t, tt.provider)); err == nil {
						t.Fatal("no error")
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := tm.Resolve(mustProvider(t, tt.provider))
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestTemplateBadInput(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{"", "empty repository template"},
		{"   ", "empty repository template"},
		{"reg.example/${name}/${type}", `the symbol "name" is not available`},
		{"reg.example/${namespace", "repository template"},
		{"reg.example/${upper(type)}", "repository template"},
		{"reg.example", "want REGISTRY[:PORT]/REPOSITORY"},
		{"${namespace}", "want REGISTRY[:PORT]/REPOSITORY"},
		{"reg.example/Providers/${type}", "not a valid OCI repository address"},
		{"reg.example/p/${type}:latest", "no tag or digest"},
		{"reg.example/p/${type}@sha256:" + strings.Repeat("a", 64), "no tag or digest"},
		{"reg example/p/${type}", "not a valid OCI repository address"},
		{"reg.example/p//${type}", "not a valid OCI repository address"},
		{"reg.example/p/${type}/", "not a valid OCI repository address"},
		{"https://reg.example/p/${type}", "not a valid OCI repository address"},
		{"reg.example/${null}", "repository template"},
		{"reg.example/${[type]}", "repository template"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			_, err := Parse(tt.tmpl)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

func TestTemplateUnicodeHostnameIsAClearError(t *testing.T) {
	tm, err := Parse("reg.example/${hostname}/${namespace}/${type}")
	if err != nil {
		t.Fatal(err)
	}
	// OpenTofu passes the Unicode display form of the hostname, which no
	// repository name can hold; say so instead of failing obscurely.
	_, err = tm.Resolve(mustProvider(t, "café.example/acme/alpha"))
	if err == nil || !strings.Contains(err.Error(), `"reg.example/café.example/acme/alpha"`) || !strings.Contains(err.Error(), "lowercase") {
		t.Fatalf("unicode hostname: %v", err)
	}
	// A port has a colon, which repository names cannot hold either.
	if _, err := tm.Resolve(mustProvider(t, "localhost:8443/acme/alpha")); err == nil {
		t.Fatal("hostname with a port: no error")
	}
}

func TestTemplateReverse(t *testing.T) {
	tests := []struct {
		tmpl, repo string
		want       string // "" means no provider
	}{
		{"reg.example/p/${hostname}/${namespace}/${type}", "p/example.com/acme/alpha", "example.com/acme/alpha"},
		{"reg.example/p/${hostname}/${namespace}/${type}", "q/example.com/acme/alpha", ""},
		{"reg.example/p/${hostname}/${namespace}/${type}", "p/example.com/acme", ""},
		{"reg.example/p/${hostname}/${namespace}/${type}", "p/example.com/acme/alpha/extra", ""},
		{"reg.example/p/${hostname}/${namespace}/${type}", "p/example.com/ac--me/alpha", ""},
		{"reg.example/${hostname}/${namespace}-${type}", "example.com/acme-alpha", ""}, // ambiguous split: not read back
		{"reg.example/${hostname}/${namespace}_${type}", "example.com/acme_alpha", ""},
		{"reg.example/${hostname}/${type}/${namespace}/${type}", "example.com/alpha/acme/alpha", "example.com/acme/alpha"},
		{"reg.example/${hostname}/${type}/${namespace}/${type}", "example.com/alpha/acme/beta", ""},
		{"reg.example/${namespace}/${type}", "acme/alpha", ""}, // no hostname: cannot be read back
	}
	for _, tt := range tests {
		t.Run(tt.tmpl+" "+tt.repo, func(t *testing.T) {
			tm, err := Parse(tt.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := tm.Reverse(Repository{Registry: "reg.example", Name: tt.repo})
			if tt.want == "" {
				if ok {
					t.Fatalf("read back %s, want nothing", p)
				}
				return
			}
			if !ok || p.String() != tt.want {
				t.Fatalf("read back %v %v, want %s", p, ok, tt.want)
			}
		})
	}
}

func mustProvider(t *testing.T, s string) backends.Provider {
	t.Helper()
	p, err := backends.ParseProvider(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
