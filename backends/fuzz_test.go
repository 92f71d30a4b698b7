package backends_test

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
)

func FuzzParseProvider(f *testing.F) {
	for _, s := range []string{"registry.terraform.io/hashicorp/aws", "app.terraform.io/example_corp/kube", "bücher.example/a/b", "localhost:8443/x/y", "xn--x/a/b", "a..b/c/d", "h:99999/a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := backends.ParseProvider(s)
		if err != nil {
			return
		}
		// A parsed address round-trips and never escapes a directory.
		again, err := backends.ParseProvider(p.String())
		if err != nil || again != p {
			t.Fatalf("%q -> %v -> %v, %v", s, p, again, err)
		}
		for _, part := range []string{p.Namespace, p.Type, p.HostnameForDisplay()} {
			if strings.ContainsAny(part, `/\`) || part == "." || part == ".." {
				t.Fatalf("%q: unsafe path part %q", s, part)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "1.0.0-rc.1+b", "v1", "1.2.3.4", "01.0.0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := backends.ParseVersion(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(v.String(), `/\`) || v.String() == ".." {
			t.Fatalf("%q: unsafe version %q", s, v)
		}
		again, err := backends.ParseVersion(v.String())
		if err != nil || again.String() != v.String() {
			t.Fatalf("%q -> %q does not round-trip: %v", s, v, err)
		}
	})
}

func FuzzParsePlatform(f *testing.F) {
	for _, s := range []string{"linux_amd64", "a_b_c", "_x", "../a_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := backends.ParsePlatform(s)
		if err != nil {
			return
		}
		if p.String() != s || strings.ContainsAny(s, `/\`) {
			t.Fatalf("%q -> %v", s, p)
		}
	})
}

func FuzzVersionConstraint(f *testing.F) {
	for _, s := range []string{"~> 5.0", ">= 1.2, < 2.0", "latest", "= 1.4.2", "!="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := backends.ParseVersionConstraint(s)
		if err != nil {
			return
		}
		v, _ := backends.ParseVersion("1.2.3")
		c.Filter([]backends.Version{v})
	})
}
