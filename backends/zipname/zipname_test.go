package zipname_test

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/zipname"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"terraform-provider-alpha_1.0.0_linux_amd64.zip", "terraform-provider-alpha_v1_linux_amd64.zip",
		"TERRAFORM-PROVIDER-ALPHA_1.0.0_LINUX_AMD64.ZIP", "terraform-provider-alpha_1.0.0_linux_amd64_x.zip", "terraform-provider-alpha_.zip"} {
		f.Add(s)
	}
	p, _ := backends.ParseProvider("example.com/acme/alpha")
	f.Fuzz(func(t *testing.T, name string) {
		pkg, err := zipname.Parse(p, name)
		if err != nil {
			return
		}
		if strings.ContainsAny(pkg.Filename(), `/\`) {
			t.Fatalf("%q -> unsafe file name %q", name, pkg.Filename())
		}
	})
}
