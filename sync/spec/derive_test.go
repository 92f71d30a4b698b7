package spec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// tree writes files (path relative to root: content).
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const lockAlpha = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "example.com/acme/alpha" {
  version     = "1.0.0"
  constraints = ">= 1.0.0"
  hashes = [
    "zh:0000000000000000000000000000000000000000000000000000000000000000",
  ]
}

provider "example.com/acme/stale" {
  version = "9.9.9"
}
`

// Derive finds the root modules of a tree, merges the requirements of the
// modules each calls (nested, local and installed ones) the way Terraform
// does, takes lock files' versions, names every file that asks, and skips
// .terraform and other hidden directories.
func TestDerive(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		// A root calling a shared module, which calls a nested one.
		"infra/main.tf": `
terraform {
  required_providers {
    alpha = { source = "example.com/acme/alpha", version = ">= 1.0" }
    null  = "~> 3.0"
  }
}
module "net" { source = "../modules/net" }
resource "random_id" "x" {}
resource "terraform_data" "y" {}
`,
		"infra/.terraform.lock.hcl": lockAlpha,
		"modules/net/versions.tf": `
terraform {
  required_providers {
    a = { source = "example.com/acme/alpha", version = "< 2.0" }
    b = { source = "acme/beta" }
  }
}
module "inner" { source = "./inner" }
`,
		"modules/net/inner/main.tf.json": `{"terraform": {"required_providers": {"beta": {"source": "acme/beta", "version": "~> 1.1"}}}}`,
		// A second root with an installed registry module and one not installed.
		"platform/main.tf": `
module "remote" {
  source  = "example.com/acme/thing/aws"
  version = "1.0.0"
}
module "missing" { source = "git::https://example.com/x.git" }
provider "gamma" {
  version = ">= 2"
}
resource "delta_thing" "x" {
  provider = delta.west
}
terraform {
  required_providers {
    delta = { source = "corp.example/acme/delta" }
  }
}
`,
		"platform/.terraform/modules/modules.json": `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"remote","Source":"example.com/acme/thing/aws","Dir":".terraform/modules/remote"}]}`,
		"platform/.terraform/modules/remote/main.tf": `terraform {
  required_providers {
    alpha = { source = "example.com/acme/alpha", version = "1.5.0" }
  }
}`,
		// Hidden directories are not configurations.
		"platform/.terraform/providers/junk.tf": `this is not read {`,
		".git/x.tf":                             `nor is this {`,
		// A lock file alone: every provider it locks.
		"lockonly/.terraform.lock.hcl": lockAlpha,
	})
	configs, notes, err := spec.Derive(context.Background(), []string{root}, "registry.terraform.io")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range configs {
		rel, _ := filepath.Rel(root, c.Dir)
		for _, r := range c.Requirements {
			v := r.Versions().String()
			if r.Locked != nil {
				v = "locked " + r.Locked.Version.String()
			}
			var from []string
			for _, f := range r.From {
				f, _ = filepath.Rel(root, f)
				from = append(from, filepath.ToSlash(f))
			}
			got[rel+" "+r.Provider.String()] = v + " from " + strings.Join(from, " ")
		}
	}
	want := map[string]string{
		"infra example.com/acme/alpha":                   "locked 1.0.0 from infra/main.tf:4 modules/net/versions.tf:4 infra/.terraform.lock.hcl",
		"infra registry.terraform.io/hashicorp/null":     "latest, ~> 3.0 from infra/main.tf:5",
		"infra registry.terraform.io/hashicorp/random":   "latest from infra/main.tf:9",
		"infra registry.terraform.io/acme/beta":          "latest, ~> 1.1 from modules/net/versions.tf:5 modules/net/inner/main.tf.json:1",
		"platform example.com/acme/alpha":                "latest, 1.5.0 from platform/.terraform/modules/remote/main.tf:3",
		"platform corp.example/acme/delta":               "latest from platform/main.tf:15",
		"platform registry.terraform.io/hashicorp/gamma": "latest, >= 2 from platform/main.tf:7",
		"lockonly example.com/acme/alpha":                "locked 1.0.0 from lockonly/.terraform.lock.hcl",
		"lockonly example.com/acme/stale":                "locked 9.9.9 from lockonly/.terraform.lock.hcl",
	}
	if len(got) != len(want) {
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("requirements:\n  %s", strings.Join(keys, "\n  "))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n  got  %q\n  want %q", k, got[k], w)
		}
	}
	// Merged constraints all hold: alpha in infra must be >= 1.0 and < 2.0.
	for _, c := range configs {
		if filepath.Base(c.Dir) != "infra" {
			continue
		}
		for _, r := range c.Requirements {
			if r.Provider.Type == "alpha" && r.Constraints.String() != ">= 1.0,< 2.0" {
				t.Errorf("alpha's merged constraints: %q", r.Constraints.String())
			}
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `module "missing"`) || !strings.Contains(notes[0], "platform/main.tf:6") {
		t.Errorf("notes: %q", notes)
	}
	if len(configs) != 3 {
		t.Errorf("%d configurations, want infra, lockonly, platform (modules/net is called, not a root)", len(configs))
	}
}

func TestDeriveErrors(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"bad source":     {"main.tf": "terraform {\n  required_providers {\n    a = { source = \"a/b/c/d\" }\n  }\n}\n"},
		"bad constraint": {"main.tf": "terraform {\n  required_providers {\n    a = { source = \"a/b\", version = \"~> x\" }\n  }\n}\n"},
		"bad HCL":        {"main.tf": "terraform {\n"},
		"missing module": {"main.tf": "module \"m\" { source = \"./nope\" }\n"},
		"module loop":    {"main.tf": "module \"m\" { source = \"./m\" }\n", "m/main.tf": "module \"a\" { source = \"./again\" }\n", "m/again/main.tf": "module \"back\" { source = \"../\" }\n"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, files)
			_, _, err := spec.Derive(context.Background(), []string{root}, "registry.terraform.io")
			if err == nil || !errors.Is(err, backends.ErrUsage) {
				t.Fatalf("error %v, want a usage error", err)
			}
			if name != "missing module" && name != "module loop" && !strings.Contains(err.Error(), "main.tf:") {
				t.Errorf("error does not name the file and line: %v", err)
			}
		})
	}
}
