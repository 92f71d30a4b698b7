package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/spec"
)

func writeSpec(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "mirror.hcl")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The spec syntax the README documents, read into a Spec: relative places
// and directories anchored at the spec's directory, OCI templates kept
// as written, NAMESPACE/TYPE on the default registry.
func TestLoadSpec(t *testing.T) {
	dir := t.TempDir()
	p := writeSpec(t, dir, `
destinations = ["./mirror", "oci://reg.corp/tf/${hostname}/${namespace}/${type}"]
platforms    = ["linux_amd64", "darwin_arm64"]
from         = ["../infra"]
allow        = ["registry.terraform.io/hashicorp/*", "corp.example/*/*"]
deny         = ["hashicorp/template"]

provider "registry.terraform.io/hashicorp/aws" {
  versions = "~> 5.0"
}
provider "hashicorp/random" {
  versions  = "latest 3"
  platforms = ["linux_amd64"]
  source    = "https://mirror.upstream.example/"
}
provider "corp.example/acme/widget" {
  platforms = ["linux_arm64"]
}
module "terraform-aws-modules/vpc/aws" {
  versions    = "~> 5.0"
  destination = "oci://reg.corp/modules/${namespace}/${name}-${system}"
}
`)
	s, err := spec.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "mirror"), "oci://reg.corp/tf/${hostname}/${namespace}/${type}"}
	if strings.Join(s.Destinations, " ") != strings.Join(want, " ") {
		t.Errorf("destinations %q, want %q", s.Destinations, want)
	}
	if len(s.Platforms) != 2 || s.Platforms[1].String() != "darwin_arm64" {
		t.Errorf("platforms %v", s.Platforms)
	}
	if len(s.From) != 1 || s.From[0] != filepath.Join(filepath.Dir(dir), "infra") {
		t.Errorf("from %q", s.From)
	}
	if len(s.Providers) != 3 {
		t.Fatalf("providers %+v", s.Providers)
	}
	aws, random, widget := s.Providers[0], s.Providers[1], s.Providers[2]
	if aws.Addr.String() != "registry.terraform.io/hashicorp/aws" || aws.Versions.String() != "~> 5.0" || aws.At != p+":8" {
		t.Errorf("aws: %+v", aws)
	}
	if random.Addr.String() != "registry.terraform.io/hashicorp/random" || !random.Versions.Latest || random.Versions.Newest != 3 ||
		random.Source != "https://mirror.upstream.example/" || len(random.Platforms) != 1 {
		t.Errorf("random: %+v", random)
	}
	if !widget.Versions.IsZero() || widget.Platforms[0].String() != "linux_arm64" {
		t.Errorf("widget: %+v", widget)
	}
	if len(s.Modules) != 1 || s.Modules[0].Addr.String() != "registry.opentofu.org/terraform-aws-modules/vpc/aws" ||
		s.Modules[0].Destination != "oci://reg.corp/modules/${namespace}/${name}-${system}" || s.Modules[0].Source != "registry://registry.opentofu.org" {
		t.Errorf("modules: %+v", s.Modules)
	}
	if len(s.Allow) != 2 || len(s.Deny) != 1 {
		t.Errorf("allow %v deny %v", s.Allow, s.Deny)
	}
}

// Every mistake is a usage error naming the file, the line and what to
// write instead; all of a file's mistakes are reported at once.
func TestLoadSpecErrors(t *testing.T) {
	cases := []struct {
		name, content string
		want          []string
	}{
		{"unknown argument", "destinations = [\"d\"]\nplatform = [\"linux_amd64\"]\nprovider \"a/b\" { versions = \"1.0.0\" }\n", []string{"mirror.hcl:2:", "platform"}},
		{"bad provider", "destinations = [\"d\"]\nprovider \"a/b/c/d\" { versions = \"1.0.0\" }\n", []string{"mirror.hcl:2:", "HOSTNAME/NAMESPACE/TYPE"}},
		{"bad constraint", "destinations = [\"d\"]\nprovider \"a/b\" {\n  versions = \"~> banana\"\n}\n", []string{"mirror.hcl:3:", "examples"}},
		{"latest zero", "destinations = [\"d\"]\nprovider \"a/b\" {\n  versions = \"latest 0\"\n}\n", []string{"mirror.hcl:3:", "latest N"}},
		{"bad platform", "destinations = [\"d\"]\nplatforms = [\"linux\"]\nprovider \"a/b\" { versions = \"1.0.0\" }\n", []string{"mirror.hcl:2:", "os_arch"}},
		{"no destinations", "provider \"a/b\" { versions = \"1.0.0\" }\n", []string{"no destinations"}},
		{"nothing wanted", "destinations = [\"d\"]\n", []string{"wants nothing"}},
		{"duplicate", "destinations = [\"d\"]\nprovider \"a/b\" { versions = \"1.0.0\" }\nprovider \"registry.terraform.io/a/b\" { versions = \"2.0.0\" }\n", []string{"mirror.hcl:3:", "already described at", "mirror.hcl:2"}},
		{"unknown symbol", "destinations = [\"oci://r/${version}\"]\nprovider \"a/b\" { versions = \"1.0.0\" }\n", []string{"mirror.hcl:1:", "version"}},
		{"bad pattern", "destinations = [\"d\"]\ndeny = [\"*/a/b\"]\nprovider \"a/b\" { versions = \"1.0.0\" }\n", []string{"mirror.hcl:2:", "wildcard"}},
		{"module without versions", "module \"a/b/c\" {\n  destination = \"d\"\n}\n", []string{"mirror.hcl:1:", "versions"}},
		{"module from a mirror", "module \"a/b/c\" {\n  versions = \"1.0.0\"\n  destination = \"d\"\n  source = \"./dir\"\n}\n", []string{"mirror.hcl:4:", "registry://HOST"}},
		{"two mistakes", "destinations = [\"d\"]\nplatforms = [\"x\"]\nprovider \"a/b\" {\n  versions = \"~>\"\n}\n", []string{"mirror.hcl:2:", "mirror.hcl:4:"}},
		{"not HCL", "destinations = [\"d\"\n", []string{"mirror.hcl:"}},
		{"bad module pattern", "allow = [\"r.example/a/b/C\"]\nmodule \"a/b/c\" {\n  versions = \"1.0.0\"\n  destination = \"d\"\n}\n", []string{"mirror.hcl:1:", "target system"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := spec.Load(writeSpec(t, t.TempDir(), c.content))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, backends.ErrUsage) {
				t.Errorf("not a usage error: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := spec.Load(filepath.Join(t.TempDir(), "missing.hcl")); err == nil || !errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), "missing.hcl") {
		t.Errorf("missing file: %v", err)
	}
}

// allow and deny patterns of four parts, HOST/NAMESPACE/NAME/SYSTEM, do
// for module blocks what the others do for providers: deny wins; allow's
// module patterns limit modules only, and only when it has some.
func TestWantedModules(t *testing.T) {
	const blocks = `
module "registry.opentofu.org/terraform-aws-modules/vpc/aws" {
  versions    = "~> 5.0"
  destination = "d"
}
module "terraform-aws-modules/iam/aws" {
  versions    = "~> 5.0"
  destination = "d"
}
module "registry.opentofu.org/corp/net/aws" {
  versions    = "~> 1.0"
  destination = "d"
}
`
	for _, c := range []struct {
		name, head string
		want       string
	}{
		{"no patterns", "", "vpc iam net"},
		{"provider patterns only", `allow = ["registry.terraform.io/hashicorp/*"]`, "vpc iam net"},
		{"allow", `allow = ["registry.opentofu.org/terraform-aws-modules/*/*", "hashicorp/*"]`, "vpc iam"},
		{"deny", `deny = ["registry.opentofu.org/*/iam/*"]`, "vpc net"},
		{"deny wins", `
allow = ["*/*/*/aws"]
deny  = ["registry.opentofu.org/Terraform-AWS-Modules/vpc/aws"]`, "iam net"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := spec.Load(writeSpec(t, t.TempDir(), c.head+"\n"+blocks))
			if err != nil {
				t.Fatal(err)
			}
			mods, notes := s.WantedModules()
			var got []string
			for _, m := range mods {
				got = append(got, m.Addr.Name)
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("modules %v, want %s", got, c.want)
			}
			if len(notes) != len(s.Modules)-len(mods) {
				t.Errorf("notes %q: want one per module left out", notes)
			}
			for _, n := range notes {
				if !strings.Contains(n, "left out") || !strings.Contains(n, "mirror.hcl:") {
					t.Errorf("note %q", n)
				}
			}
		})
	}
}
