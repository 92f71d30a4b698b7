package cli

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// OpenTofu's rule for repository templates, as sync and push apply it to
// the providers they would write: exit 2 naming the missing symbol, before
// anything reaches the registry. README's examples leave out ${hostname},
// which is fine for providers of one host only.
func TestCLIOCITemplateMustTellProvidersApart(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	src := t.TempDir()
	backendtest.WritePacked(t, src, backendtest.Seeds(t,
		[]string{"registry.opentofu.org/hashicorp/aws", "registry.terraform.io/hashicorp/aws", "registry.terraform.io/hashicorp/random"},
		[]string{"1.0.0"}, []string{"linux_amd64"}))
	readme := "oci://" + reg.Host() + "/tf/${namespace}/${type}"
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"two hosts", []string{"sync", src, readme}, 2,
			[]string{"does not use ${hostname}", "2 hostnames (registry.opentofu.org, registry.terraform.io)", "registry.opentofu.org/hashicorp/aws and registry.terraform.io/hashicorp/aws would share repository"}},
		{"two hosts, dry run", []string{"sync", src, readme, "--dry-run"}, 2, []string{"does not use ${hostname}"}},
		{"two hosts, diff", []string{"diff", src, readme}, 2, []string{"does not use ${hostname}"}},
		{"two types", []string{"push", src, "oci://" + reg.Host() + "/tf/${hostname}/${namespace}", "-p", "registry.terraform.io/hashicorp/aws", "-p", "registry.terraform.io/hashicorp/random"}, 2,
			[]string{"does not use ${type}", "2 types (aws, random)"}},
		{"one type, no ${type}", []string{"sync", src, "oci://" + reg.Host() + "/tf/${namespace}", "-p", "registry.terraform.io/hashicorp/aws"}, 2,
			[]string{"does not use ${type}", "add ${type} as a path segment of its own"}},
		{"push, no ${type}", []string{"push", src, "oci://" + reg.Host() + "/tf/${namespace}", "-p", "registry.terraform.io/hashicorp/aws"}, 2,
			[]string{"does not use ${type}", "add ${type}"}},
		{"one host selected", []string{"sync", src, readme, "-p", "registry.terraform.io/hashicorp/aws", "-p", "registry.terraform.io/hashicorp/random"}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.ResetRequests()
			r := run(t, cleanEnv(t), append(tt.args, "--plain-http")...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if tt.code != 0 && reg.BlobUploads() != 0 {
				t.Errorf("%d blob uploads before the refusal", reg.BlobUploads())
			}
		})
	}
}

// cleanEnv keeps the machine's own credentials and CLI configuration away
// from the processes.
func cleanEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "PATH=/usr/bin:/bin", "DOCKER_CONFIG=" + home, "XDG_CONFIG_HOME=" + home,
		"XDG_RUNTIME_DIR=" + home, "REGISTRY_AUTH_FILE=" + home + "/none.json", "TF_CLI_CONFIG_FILE=" + home + "/none.tfrc", "NO_COLOR=1"}
}
