package modules_test

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/modules"
)

func TestParseModule(t *testing.T) {
	good := []struct{ in, want string }{
		{"hashicorp/consul/aws", "example.com/hashicorp/consul/aws"},
		{"registry.opentofu.org/terraform-aws-modules/vpc/aws", "registry.opentofu.org/terraform-aws-modules/vpc/aws"},
		{"Example.COM/My_Org/net-work/aws2", "example.com/My_Org/net-work/aws2"},
		{"localhost:8443/a/b/c", "localhost:8443/a/b/c"},
		{"example.com:443/a/b/c", "example.com/a/b/c"},
	}
	for _, c := range good {
		m, err := modules.ParseModule(c.in, "example.com")
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if m.String() != c.want {
			t.Errorf("%q: got %s, want %s", c.in, m, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{"", "want [HOST/]NAMESPACE/NAME/SYSTEM"},
		{"a/b", "want [HOST/]NAMESPACE/NAME/SYSTEM"},
		{"h.com/a/b/c/d", "want [HOST/]NAMESPACE/NAME/SYSTEM"},
		{"a/b/c//sub", "without a //subdir"},
		{"a/b/c?ref=1", "without a //subdir or query"},
		{"-a/b/c", "namespace"},
		{"a/b_/c", "name"},
		{"a/b/AWS", "target system"},
		{"a/b/c-d", "target system"},
		{"a/" + strings.Repeat("x", 65) + "/c", "name"},
		{"h..com/a/b/c", "hostname"},
		{"h.com:99999/a/b/c", "hostname"},
		{"a/b/\x00", "target system"},
	}
	for _, c := range bad {
		_, err := modules.ParseModule(c.in, "example.com")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one mentioning %q", c.in, err, c.want)
		}
	}
	if _, err := modules.ParseModule("a/b/c", ""); err == nil {
		t.Error("NS/NAME/SYSTEM without a default host: no error")
	}
}

func TestParseRegistrySource(t *testing.T) {
	cases := []struct {
		in     string
		ok     bool
		module string
		subdir string
		err    string
	}{
		{"hashicorp/consul/aws", true, "registry.opentofu.org/hashicorp/consul/aws", "", ""},
		{"app.terraform.io/acme/vpc/aws//modules/sub", true, "app.terraform.io/acme/vpc/aws", "modules/sub", ""},
		{"hashicorp/consul/aws//x/../y", true, "registry.opentofu.org/hashicorp/consul/aws", "y", ""},
		{"./local", false, "", "", ""},
		{"../up", false, "", "", ""},
		{"github.com/hashicorp/example", false, "", "", ""},
		{"github.com/a/b/c", false, "", "", ""},
		{"git::https://example.com/vpc.git", false, "", "", ""},
		{"oci://example.com/repo?tag=1", false, "", "", ""},
		{"localhost/a/b/c", false, "", "", ""}, // no dot: go-getter's, not a registry
		{"a/b/c/d/e", false, "", "", ""},
		{"a/b/C", false, "", "", ""},
		{"hashicorp/consul/aws//../x", false, "", "", "leads outside"},
	}
	for _, c := range cases {
		m, sub, ok, err := modules.ParseRegistrySource(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || ok != c.ok {
			t.Errorf("%q: ok %v err %v, want ok %v", c.in, ok, err, c.ok)
			continue
		}
		if ok && (m.String() != c.module || sub != c.subdir) {
			t.Errorf("%q: got %s //%s, want %s //%s", c.in, m, sub, c.module, c.subdir)
		}
	}
}

func TestSplitJoinSubdir(t *testing.T) {
	cases := []struct{ in, pkg, sub string }{
		{"https://h/x.zip", "https://h/x.zip", ""},
		{"git::https://h/r.git//mod/a?ref=v1", "git::https://h/r.git?ref=v1", "mod/a"},
		{"git::https://h/r.git?ref=v1//not/a/subdir", "git::https://h/r.git?ref=v1//not/a/subdir", ""},
		{"oci://reg/repo//sub/", "oci://reg/repo", "sub"},
		{"git@github.com:o/r.git//m", "git@github.com:o/r.git", "m"},
		{"https://h/x.zip//.", "https://h/x.zip", ""},
	}
	for _, c := range cases {
		pkg, sub := modules.SplitSubdir(c.in)
		if pkg != c.pkg || sub != c.sub {
			t.Errorf("%q: got (%q, %q), want (%q, %q)", c.in, pkg, sub, c.pkg, c.sub)
		}
	}
	if got := modules.JoinSubdir("git::https://h/r.git?ref=v1", "mod/a"); got != "git::https://h/r.git//mod/a?ref=v1" {
		t.Errorf("JoinSubdir: %s", got)
	}
}

func TestTags(t *testing.T) {
	for _, c := range []struct{ in, tag string }{
		{"1.2.3", "1.2.3"},
		{"v1.2", "1.2.0"},
		{"1.0.0-rc.1+build.5", "1.0.0-rc.1_build.5"},
	} {
		v, err := modules.ParseVersion(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := modules.Tag(v); got != c.tag {
			t.Errorf("%s: tag %s, want %s", c.in, got, c.tag)
		}
		back, ok := modules.VersionFromTag(c.tag)
		if !ok || back.String() != v.String() {
			t.Errorf("%s: VersionFromTag(%s) = %v, %v", c.in, c.tag, back, ok)
		}
	}
	for _, tag := range []string{"latest", "v1.0.0", "1.0", "1.0.0__x", ""} {
		if v, ok := modules.VersionFromTag(tag); ok {
			t.Errorf("VersionFromTag(%q) = %s, want not a version", tag, v)
		}
	}
}

func TestTemplate(t *testing.T) {
	m := modules.Module{Host: "registry.opentofu.org", Namespace: "Terraform-AWS-Modules", Name: "vpc__x_-y", System: "aws"}
	good := []struct{ tmpl, registry, repo string }{
		{"oci://reg.corp:5000/modules/${namespace}/${name}-${system}", "reg.corp:5000", "modules/terraform-aws-modules/vpc__x-y-aws"},
		{"reg.corp/${hostname}/${namespace}/${name}/${system}", "reg.corp", "registry.opentofu.org/terraform-aws-modules/vpc__x-y/aws"},
		{"oci://reg.corp/one/repo/", "reg.corp", "one/repo"},
	}
	for _, c := range good {
		tm, err := modules.ParseTemplate(c.tmpl)
		if err != nil {
			t.Errorf("%q: %v", c.tmpl, err)
			continue
		}
		repo, err := tm.Repository(m)
		if err != nil || repo != c.repo || tm.Registry != c.registry {
			t.Errorf("%q: got %s %q %v, want %s %q", c.tmpl, tm.Registry, repo, err, c.registry, c.repo)
		}
	}
	bad := []struct{ tmpl, want string }{
		{"", "want oci://REGISTRY/PATH"},
		{"oci://reg.corp", "want oci://REGISTRY/PATH"},
		{"oci://reg.corp/", "want oci://REGISTRY/PATH"},
		{"oci:///x", "want oci://REGISTRY/PATH"},
		{"oci://${hostname}/x", "registry host cannot use placeholders"},
		{"oci://reg/x/${type}", "unknown placeholder ${type}"},
		{"oci://reg/x/${name", "unclosed"},
		{"oci://reg/x?tag=1", "query"},
		{"oci://reg/a//b", "subdir"},
		{"oci://reg/UPPER/${name}", ""}, // fixed parts are lowercased, fine
		{"oci://reg/x$y/${name}", "not a valid OCI repository name"},
		{"oci://re g/x", "registry"},
	}
	for _, c := range bad {
		_, err := modules.ParseTemplate(c.tmpl)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.tmpl, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.tmpl, err, c.want)
		}
	}
}

func TestOCIAddress(t *testing.T) {
	r := modules.Resolved{Registry: "reg:5000", Repository: "m/vpc-aws", Digest: "sha256:abc", Tag: "1.0.0", Subdir: "modules/vpc"}
	for _, c := range []struct {
		sub   string
		byTag bool
		want  string
	}{
		{"", false, "oci://reg:5000/m/vpc-aws//modules/vpc?digest=sha256:abc"},
		{"nat", true, "oci://reg:5000/m/vpc-aws//modules/vpc/nat?tag=1.0.0"},
	} {
		if got := r.Address(c.sub, c.byTag); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
	r.Subdir = ""
	if got := r.Address("", false); got != "oci://reg:5000/m/vpc-aws?digest=sha256:abc" {
		t.Errorf("got %s", got)
	}
}
