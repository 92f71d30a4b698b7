package backends_test

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/tfmirror/tfmirror/backends"
)

func TestParseProvider(t *testing.T) {
	good := map[string]string{
		"registry.terraform.io/hashicorp/aws": "registry.terraform.io/hashicorp/aws",
		"Registry.OpenTofu.ORG/HashiCorp/AWS": "registry.opentofu.org/hashicorp/aws",
		"example.com:443/acme/alpha":          "example.com/acme/alpha",
		"localhost:8443/acme/alpha":           "localhost:8443/acme/alpha",
		"bücher.example/acme/alpha":           "bücher.example/acme/alpha",
		"example.com/AwesomeCorp/my-provider": "example.com/awesomecorp/my-provider",
		// Terraform 1.16: "_" in a namespace (HCP Terraform organisations).
		"app.terraform.io/example_corp/kube": "app.terraform.io/example_corp/kube",
		"app.terraform.io/Example_Corp/kube": "app.terraform.io/example_corp/kube",
		"example.com/_a__b_/kube":            "example.com/_a__b_/kube",
	}
	for in, want := range good {
		p, err := backends.ParseProvider(in)
		if err != nil {
			t.Errorf("ParseProvider(%q): %v", in, err)
			continue
		}
		if p.String() != want {
			t.Errorf("ParseProvider(%q) = %q, want %q", in, p, want)
		}
	}
	p, _ := backends.ParseProvider("bücher.example/acme/alpha")
	if p.Hostname != "xn--bcher-kva.example" {
		t.Errorf("comparison form = %q", p.Hostname)
	}
	bad := map[string]string{
		"hashicorp/aws":                "want HOSTNAME/NAMESPACE/TYPE",
		"a/b/c/d":                      "want HOSTNAME/NAMESPACE/TYPE",
		"xn--bcher-kva.example/acme/x": "punycode",
		"example..com/acme/x":          "empty label",
		"example.com:99999/acme/x":     "greater than 65535",
		"https://example.com/acme/x":   "want HOSTNAME/NAMESPACE/TYPE",
		"example.com/ac.me/x":          "dots are not allowed",
		"example.com/ac--me/x":         "consecutive dashes",
		"example.com/acme/-x":          "leading or trailing dashes",
		"example.com/acme/":            "at least one character",
		"example.com/acme/x_y":         "only letters, digits, and dashes",
		"example.com/a_b-/x":           "leading or trailing dashes",
		"example.com/a_(b/x":           "dashes and underscores",
		"example.com/\u2474_a/x":       "dashes and underscores", // maps to "(1)_a" without STD3
		"example.com/a_ b/x":           "dashes and underscores",
		"example.com/a_xn--b/x":        "consecutive dashes",
		"example.com/a_.b/x":           "dots are not allowed",
		"../acme/x":                    "hostname",
		"example.com/../x":             "dots are not allowed",
		"ex ample.com/acme/x":          "hostname",
	}
	for in, want := range bad {
		_, err := backends.ParseProvider(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProvider(%q) err = %v, want it to contain %q", in, err, want)
		}
	}
}

func TestProviderFilter(t *testing.T) {
	aws, _ := backends.ParseProvider("registry.terraform.io/hashicorp/aws")
	awsTofu, _ := backends.ParseProvider("registry.opentofu.org/hashicorp/aws")
	f, err := backends.ParseProviderFilter("HashiCorp/AWS")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Matches(aws) || !f.Matches(awsTofu) {
		t.Error("two-part filter should match any host")
	}
	f3, _ := backends.ParseProviderFilter("registry.terraform.io/hashicorp/aws")
	if !f3.Matches(aws) || f3.Matches(awsTofu) {
		t.Error("three-part filter should match only its host")
	}
	if _, err := f.On(""); err == nil {
		t.Error("a two-part filter with no default host resolved")
	}
	if p, err := f.On("registry.opentofu.org"); err != nil || p != awsTofu {
		t.Errorf("On = %v, %v", p, err)
	}
	for _, bad := range []string{"aws", "a/b/c/d", "ha..shicorp/aws", "hashicorp/"} {
		if _, err := backends.ParseProviderFilter(bad); err == nil {
			t.Errorf("ParseProviderFilter(%q) accepted", bad)
		}
	}
}

func TestParseVersion(t *testing.T) {
	good := map[string]string{
		"1.2.3":            "1.2.3",
		"1.2":              "1.2.0",
		"1":                "1.0.0",
		"2.0.0-rc.1":       "2.0.0-rc.1",
		"1.0.0+build.5":    "1.0.0+build.5",
		"1.0.0-beta+exp.1": "1.0.0-beta+exp.1",
	}
	for in, want := range good {
		v, err := backends.ParseVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, bad := range []string{"", "v1.2.3", "V1", "1.2.3.4", "latest", "01.2.3", "1.2.3-", "1..2", "../1", "1.0.0/x", "linux_amd64"} {
		if _, err := backends.ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
}

func TestSortVersionsAndConstraints(t *testing.T) {
	var vs []backends.Version
	for _, s := range []string{"1.0.0", "1.10.0", "2.0.0-rc.1", "1.2.0", "2.0.0", "0.9.0"} {
		v, _ := backends.ParseVersion(s)
		vs = append(vs, v)
	}
	backends.SortVersionsNewestFirst(vs)
	if got := join(vs); got != "2.0.0 2.0.0-rc.1 1.10.0 1.2.0 1.0.0 0.9.0" {
		t.Fatalf("sorted = %s", got)
	}
	cases := map[string]string{
		"":              "2.0.0 2.0.0-rc.1 1.10.0 1.2.0 1.0.0 0.9.0",
		"latest":        "2.0.0",
		"~> 1.0":        "1.10.0 1.2.0 1.0.0",
		">= 1.2, < 2.0": "1.10.0 1.2.0",
		"= 1.2.0":       "1.2.0",
		"~> 1.2.0":      "1.2.0",
	}
	for c, want := range cases {
		vc, err := backends.ParseVersionConstraint(c)
		if err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if got := join(vc.Filter(vs)); got != want {
			t.Errorf("%q selects %q, want %q", c, got, want)
		}
	}
	// 0.0.0, OpenTofu's "unspecified" version, is never selected as a
	// provider version: not as the latest, not by a constraint that matches
	// it, not as one of every version. (Module versions have no such rule.)
	var withZero []backends.Version
	for _, s := range []string{"0.0.0", "0.0.0-dev", "0.0.1"} {
		v, _ := backends.ParseVersion(s)
		withZero = append(withZero, v)
	}
	for c, want := range map[string]string{
		"":           "0.0.1 0.0.0-dev",
		"latest":     "0.0.1",
		">= 0.0.0":   "0.0.1",
		"= 0.0.0":    "",
		"~> 0.0.0":   "0.0.1",
		">= 0.0.0-a": "0.0.1 0.0.0-dev",
	} {
		vc, _ := backends.ParseVersionConstraint(c)
		if got := join(vc.ProviderVersions(withZero)); got != want {
			t.Errorf("%q selects %q among 0.0.0, 0.0.0-dev, 0.0.1; want %q", c, got, want)
		}
	}
	zero, _ := backends.ParseVersion("0.0.0")
	onlyZero := []backends.Version{zero}
	for _, c := range []string{"", "latest", "= 0.0.0"} {
		vc, _ := backends.ParseVersionConstraint(c)
		if got := vc.ProviderVersions(onlyZero); len(got) != 0 {
			t.Errorf("%q selects %v when 0.0.0 is all there is", c, got)
		}
		if got := vc.Filter(onlyZero); len(got) != 1 {
			t.Errorf("%q: Filter (module versions) selects %v of 0.0.0", c, got)
		}
	}
	for _, bad := range []string{"~>", ">= banana", "1.0 ||| 2"} {
		if _, err := backends.ParseVersionConstraint(bad); err == nil || !strings.Contains(err.Error(), "examples") {
			t.Errorf("constraint %q: %v", bad, err)
		}
	}
}

func join(vs []backends.Version) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.String())
	}
	return strings.Join(s, " ")
}

func TestParsePlatform(t *testing.T) {
	for _, good := range []string{"linux_amd64", "darwin_arm64", "windows_arm64", "arbitrary_os", "Linux_AMD64"} {
		p, err := backends.ParsePlatform(good)
		if err != nil || p.String() != good {
			t.Errorf("ParsePlatform(%q) = %v, %v", good, p, err)
		}
	}
	for _, bad := range []string{"", "linux", "too_many_notes", "linux_", "_amd64", "linux_amd64_v2", "li nux_amd64", "linux_amd\t64", "../x_y", "x_..", "a/b_c", `a\b_c`,
		"linux\x1b[2J_amd64", "linux_amd64\x00", "linux_\u009b31m", "linux_amd\x7f64"} {
		if _, err := backends.ParsePlatform(bad); err == nil {
			t.Errorf("ParsePlatform(%q) accepted", bad)
		}
	}
}

func TestPackageFilename(t *testing.T) {
	p, _ := backends.ParseProvider("registry.terraform.io/hashicorp/null")
	v, _ := backends.ParseVersion("3.2.1")
	plat, _ := backends.ParsePlatform("linux_amd64")
	pkg := backends.Package{Provider: p, Version: v, Platform: plat}
	if pkg.Filename() != "terraform-provider-null_3.2.1_linux_amd64.zip" {
		t.Fatal(pkg.Filename())
	}
	if pkg.String() != "registry.terraform.io/hashicorp/null 3.2.1 linux_amd64" {
		t.Fatal(pkg.String())
	}
}

func TestWarningLog(t *testing.T) {
	var w backends.WarningLog
	for _, m := range []string{"a", "b", "a", "c", "b"} {
		w.Warn(m)
	}
	if got := strings.Join(w.Warnings(), ","); got != "a,b,c" {
		t.Fatalf("Warnings = %q, want each once in order", got)
	}
}

// "latest N" selects the newest N versions, and "latest N, CONSTRAINTS"
// the newest N of those the constraints allow; NewestMatching is the choice
// `terraform init` makes.
func TestLatestN(t *testing.T) {
	var vs []backends.Version
	for _, s := range []string{"1.0.0", "1.10.0", "2.0.0-rc.1", "1.2.0", "2.0.0", "0.9.0", "3.0.0-beta"} {
		v, _ := backends.ParseVersion(s)
		vs = append(vs, v)
	}
	for c, want := range map[string]string{
		"latest 1":              "2.0.0",
		"latest 3":              "2.0.0 1.10.0 1.2.0",
		"latest 10":             "2.0.0 1.10.0 1.2.0 1.0.0 0.9.0",
		" latest  2 ":           "2.0.0 1.10.0",
		"latest 2, ~> 1.0":      "1.10.0 1.2.0",
		"latest, < 2.0":         "1.10.0",
		"latest, >= 3.0.0-a":    "3.0.0-beta",
		"latest 2, >= 1.2, < 2": "1.10.0 1.2.0",
	} {
		vc, err := backends.ParseVersionConstraint(c)
		if err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if got := join(vc.Filter(vs)); got != want {
			t.Errorf("%q selects %q, want %q", c, got, want)
		}
		if vc.String() != strings.TrimSpace(c) {
			t.Errorf("%q: String() = %q", c, vc.String())
		}
	}
	for _, bad := range []string{"latest 0", "latest -1", "latest x", "latest 2 3", "latest, ~>", "latest 2, banana"} {
		if _, err := backends.ParseVersionConstraint(bad); err == nil || !strings.Contains(err.Error(), "latest") {
			t.Errorf("constraint %q: %v", bad, err)
		}
	}
	c, _ := version.NewConstraint(">= 1.0, < 2.0")
	nm := backends.NewestMatching(c)
	if got := join(nm.Filter(vs)); got != "1.10.0" {
		t.Errorf("NewestMatching(>= 1.0, < 2.0) selects %q", got)
	}
	if got := join(backends.NewestMatching(nil).Filter(vs)); got != "2.0.0" {
		t.Errorf("NewestMatching(nil) selects %q", got)
	}
	if nm.String() != "latest, >= 1.0, < 2.0" {
		t.Errorf("NewestMatching String() = %q", nm.String())
	}
}

// SortVersionsNewestFirst's order is CompareVersions', whatever the order
// it starts from: prereleases, build metadata, parts left out.
func TestSortVersionsIsCompareVersions(t *testing.T) {
	var vs []backends.Version
	for _, s := range []string{"1.0.0", "1.0", "1", "1.0.0+b2", "1.0.0+b1", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-alpha",
		"1.0.0-rc.1+x", "0.0.1", "10.0.0", "2.0.0", "1.10.0", "1.9.9", "9223372036854775807.0.0", "0.0.0"} {
		v, err := backends.ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		want := slices.Clone(vs)
		sort.SliceStable(want, func(i, j int) bool { return backends.CompareVersions(want[i], want[j]) > 0 })
		got := slices.Clone(vs)
		backends.SortVersionsNewestFirst(got)
		original := func(vs []backends.Version) string { // "1" and "1.0.0" told apart
			var s []string
			for _, v := range vs {
				s = append(s, v.Original())
			}
			return strings.Join(s, " ")
		}
		if original(got) != original(want) {
			t.Fatalf("from %s:\nsorted %s\nwant   %s", original(vs), original(got), original(want))
		}
	}
}
