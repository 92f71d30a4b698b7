package rewrite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/modules/rewrite"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// mirror puts packages of host/ns/name/system at each version into a real
// registry and returns the store and each version's digest address.
func mirror(t *testing.T, reg *ocitest.Registry, module string, subdir string, versions ...string) (*modoci.Store, map[string]string) {
	t.Helper()
	s, err := modoci.Open("", "oci://"+reg.Host()+"/m/${namespace}/${name}-${system}", modoci.Options{HTTP: reg.Client(), Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	m, err := modules.ParseModule(module, "")
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{}
	for _, ver := range versions {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "modules", "vpc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# "+ver), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "modules", "vpc", "main.tf"), []byte("# vpc "+ver), 0o644); err != nil {
			t.Fatal(err)
		}
		v, _ := modules.ParseVersion(ver)
		pkg, err := fetch.New(fetch.Options{TempDir: t.TempDir()}).Build(context.Background(), m, v, modules.Location{Source: "file://" + dir, Subdir: subdir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Put(context.Background(), pkg, false, nil)
		pkg.Remove()
		if err != nil {
			t.Fatal(err)
		}
		addrs[ver] = st.Address
	}
	return s, addrs
}

const config = `terraform {
  required_version = ">= 1.10"
}

# The network.
module "vpc" {
  source  = "registry.opentofu.org/acme/vpc/aws" # pinned below
  version = "~> 1.0"

  cidr = "10.0.0.0/16"
}

module "nat" {
  source = "acme/vpc/aws//modules/vpc"
  version = "1.0.0"
}

module "latest" {
  source = "acme/vpc/aws"
}

module "local" {
  source = "./modules/local"
}

module "git" {
  source = "git::https://example.com/x.git?ref=v1"
}

module "unmirrored" {
  source  = "acme/other/aws"
  version = "1.0.0"
}

module "computed" {
  source  = "acme/vpc/aws"
  version = var.v
}

module "nothing_matches" {
  source  = "acme/vpc/aws"
  version = ">= 9"
}
`

func TestRewrite(t *testing.T) {
	reg := ocitest.New(t)
	store, addrs := mirror(t, reg, "registry.opentofu.org/acme/vpc/aws", "", "1.0.0", "1.2.0", "2.0.0", "3.0.0-beta")
	dir := t.TempDir()
	tf := filepath.Join(dir, "main.tf")
	if err := os.WriteFile(tf, []byte(config), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(`module "x" { source = "acme/vpc/aws" }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.tf"), []byte(`module "x" {`), 0o644); err != nil {
		t.Fatal(err)
	}

	files, problems, err := rewrite.Rewrite(context.Background(), dir, rewrite.Options{Resolver: store})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != tf {
		t.Fatalf("files %+v", files)
	}
	f := files[0]
	got := map[string]string{}
	for _, c := range f.Changes {
		got[c.Block] = c.Version + " " + c.NewSource
	}
	want := map[string]string{
		"vpc":    "1.2.0 " + addrs["1.2.0"],
		"nat":    "1.0.0 " + strings.Replace(addrs["1.0.0"], "?digest", "//modules/vpc?digest", 1),
		"latest": "2.0.0 " + addrs["2.0.0"],
	}
	if len(got) != len(want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("module %s: %s, want %s", k, got[k], v)
		}
	}
	var ps []string
	for _, p := range problems {
		ps = append(ps, p.String())
	}
	joined := strings.Join(ps, "\n")
	for _, w := range []string{
		`broken.tf:`, "not valid HCL",
		`main.tf:30: module "unmirrored"`, "not found",
		`main.tf:35: module "computed": version is not a literal string`,
		`module "nothing_matches"`, "no version matching >= 9",
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems lack %q:\n%s", w, joined)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems:\n%s", len(problems), joined)
	}
	// Only what was rewritten changed: comments, other arguments and the
	// untouched blocks are as written.
	newText := string(f.New)
	for _, keep := range []string{"# The network.", `cidr = "10.0.0.0/16"`, `source = "./modules/local"`, `source = "git::https://example.com/x.git?ref=v1"`, `version = var.v`, `source  = "acme/other/aws"`} {
		if !strings.Contains(newText, keep) {
			t.Errorf("lost %q:\n%s", keep, newText)
		}
	}
	if strings.Contains(newText, `"~> 1.0"`) || strings.Contains(newText, `version = "1.0.0"`+"\n}\n\nmodule \"latest\"") {
		t.Errorf("version arguments of rewritten blocks remain:\n%s", newText)
	}
	diff := f.Diff()
	if !strings.Contains(diff, `-  source  = "registry.opentofu.org/acme/vpc/aws" # pinned below`) ||
		!strings.Contains(diff, `-  version = "~> 1.0"`) || !strings.Contains(diff, `+  source = "`+addrs["1.2.0"]+`" # pinned below`) || !strings.HasPrefix(diff, "--- a/main.tf\n+++ b/main.tf\n") {
		t.Errorf("diff:\n%s", diff)
	}
	// Nothing is written until asked.
	if b, _ := os.ReadFile(tf); string(b) != config {
		t.Fatal("Rewrite wrote the file")
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tf); string(b) != newText {
		t.Fatal("Write did not write New")
	}
	if fi, _ := os.Stat(tf); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}
	// Rewriting again changes nothing: the blocks are oci:// now.
	files, _, _ = rewrite.Rewrite(context.Background(), dir, rewrite.Options{Resolver: store})
	if files[0].Diff() != "" || len(files[0].Changes) != 0 {
		t.Errorf("second rewrite: %s", files[0].Diff())
	}
}

func TestRewriteByTagAndPackageSubdir(t *testing.T) {
	reg := ocitest.New(t)
	// The registry's location named a subdir: the package is the whole
	// repository and the module lives in modules/vpc.
	store, _ := mirror(t, reg, "registry.opentofu.org/acme/vpc/aws", "modules/vpc", "1.0.0")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tofu"), []byte("module \"a\" {\n  source = \"acme/vpc/aws//nested\"\n  version = \"1.0.0\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, problems, err := rewrite.Rewrite(context.Background(), dir, rewrite.Options{Resolver: store, ByTag: true})
	if err != nil || len(problems) != 0 {
		t.Fatal(err, problems)
	}
	want := "oci://" + reg.Host() + "/m/acme/vpc-aws//modules/vpc/nested?tag=1.0.0"
	if len(files) != 1 || len(files[0].Changes) != 1 || files[0].Changes[0].NewSource != want {
		t.Fatalf("got %+v, want %s", files, want)
	}
	if !strings.Contains(string(files[0].New), `source = "`+want+`"`) || strings.Contains(string(files[0].New), "version") {
		t.Errorf("new text:\n%s", files[0].New)
	}
}

func TestRewriteDefaultHost(t *testing.T) {
	reg := ocitest.New(t)
	store, addrs := mirror(t, reg, "registry.terraform.io/acme/vpc/aws", "", "1.0.0")
	s2, err := modoci.Open("", "oci://"+reg.Host()+"/m/${hostname}/${namespace}/${name}-${system}", modoci.Options{HTTP: reg.Client(), Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	_ = store
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("module \"a\" {\n  source = \"acme/vpc/aws\"\n  version = \"1.0.0\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The host only matters to templates that use ${hostname}: this one
	// does, and nothing was mirrored under registry.opentofu.org.
	failed, problems, _ := rewrite.Rewrite(context.Background(), dir, rewrite.Options{Resolver: s2})
	if len(problems) != 1 || !strings.Contains(problems[0].String(), "registry.opentofu.org") {
		t.Fatalf("problems %v", problems)
	}
	// Nothing rewritten: the file is not shown as changed (hclwrite would
	// realign the block it read).
	if len(failed) == 1 && failed[0].Diff() != "" {
		t.Errorf("a file with nothing rewritten has a diff:\n%s", failed[0].Diff())
	}
	files, problems, _ := rewrite.Rewrite(context.Background(), dir, rewrite.Options{Resolver: store, DefaultHost: "registry.terraform.io"})
	if len(problems) != 0 || files[0].Changes[0].NewSource != addrs["1.0.0"] {
		t.Fatalf("got %+v %v", files, problems)
	}
}

// A module the mirror lacks is a problem that reads as the registry said it:
// distribution's NAME_UNKNOWN carries a detail object, which oras's own
// message would print as a Go map.
func TestRewriteProblemsShowNoGoValues(t *testing.T) {
	reg := ocitest.New(t)
	store, _ := mirror(t, reg, "registry.opentofu.org/acme/vpc/aws", "", "1.0.0")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("module \"a\" {\n  source = \"acme/other/aws\"\n  version = \"1.0.0\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems, err := rewrite.Rewrite(context.Background(), dir, rewrite.Options{Resolver: store})
	if err != nil || len(problems) != 1 {
		t.Fatalf("%v %v", err, problems)
	}
	msg := problems[0].String()
	if strings.Contains(msg, "map[") || !strings.Contains(msg, `repository name not known to registry: {"name":"m/acme/other-aws"}`) {
		t.Errorf("problem: %s", msg)
	}
}

// TestWriteKeepsASymbolicLink: a configuration file that is a symbolic link
// (a shared file linked into several roots) is written through the link:
// the file it names gets the new text, its mode is kept, the link stays.
func TestWriteKeepsASymbolicLink(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared.tf")
	if err := os.WriteFile(shared, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "main.tf")
	if err := os.Symlink("shared.tf", link); err != nil {
		t.Fatal(err)
	}
	if err := (rewrite.File{Path: link, Old: []byte("old\n"), New: []byte("new\n")}).Write(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("main.tf is no longer a symbolic link (%v)", err)
	}
	if b, err := os.ReadFile(shared); err != nil || string(b) != "new\n" {
		t.Fatalf("shared.tf holds %q (%v), want the new text", b, err)
	}
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("shared.tf's mode changed: %v (%v)", fi.Mode().Perm(), err)
	}
}
