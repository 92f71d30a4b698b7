package details

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func TestModuleVersion(t *testing.T) {
	mod, _ := modules.ParseModule("acme/network/aws", "registry.example.com")
	v, _ := modules.ParseVersion("v1.2")
	oci := "oci://oci.example.com/m/acme/network-aws?digest=sha256:" + strings.Repeat("ab", 32)
	mv := &ModuleVersion{Module: mod, Version: v.String(), Ref: 2, Places: []ModulePlace{
		{Number: 1, Name: "registry://registry.example.com", Compared: true, Mark: theme.MarkStated, Label: "present",
			Listing: &modules.Listing{Module: mod, Version: v, Listed: "v1.2", Location: "git::https://git.example.com/net.git?ref=v1.2",
				Source: &modules.Location{Source: "git::https://git.example.com/net.git?ref=v1.2"}}},
		{Number: 2, Name: "oci://oci.example.com/m/${namespace}/${name}-${system}", Compared: true, Mark: theme.MarkStated, Label: "present",
			Listing: &modules.Listing{Module: mod, Version: v, Listed: "1.2.0", Location: oci, Digest: "sha256:ab"}},
		{Number: 3, Name: "oci://other.example.com/m", Compared: true, Mark: theme.MarkDiffers, Label: "digest differs",
			Listing: &modules.Listing{Module: mod, Version: v, Listed: "1.2.0", Location: "oci://other.example.com/m?digest=sha256:cd", Digest: "sha256:cd"}},
		{Number: 4, Name: "./modules", Mark: theme.MarkMissing, Label: "missing"},
		{Number: 8, Name: "./other", Mark: theme.MarkStated, Label: "present",
			Listing: &modules.Listing{Module: mod, Version: v, Listed: "1.2.0.zip", Location: "/srv/other/registry.example.com/acme/network/aws/1.2.0.zip",
				SHA256: strings.Repeat("c", 64), Revision: "0123456789abcdef0123456789abcdef01234567"}},
		{Number: 5, Name: "registry://other.example.com", Mark: theme.MarkMissing, Label: "missing", Note: "serves other.example.com's modules, not registry.example.com's"},
		{Number: 6, Name: "registry://down.example.com", Mark: theme.MarkError, Label: "error", Err: errors.New("GET https://down.example.com/.well-known/terraform.json: HTTP 503")},
		{Number: 7, Name: "registry://registry.example.com", Mark: theme.MarkError, Label: "error",
			Listing: &modules.Listing{Module: mod, Version: v, Listed: "1.2.0", Err: errors.New("download location: HTTP 404")}},
	}}
	m := pane(50, 40)
	m.ShowModule(mv)
	got := ansi.Strip(m.View())
	joined := strings.ReplaceAll(got, "\n    ", "")
	for _, want := range []string{
		"1.2.0 acme/network/aws",
		"[1] ◇ registry://registry.example.com",
		"listed as v1.2",
		"git::https://git.example.com/net.git?ref=v1.2",
		oci,
		"[3] ≠ oci://other.example.com/m",
		"≠ digest differs from [2]'s",
		"[4] ○ ./modules missing",
		"serves other.example.com's modules, not", // wrapped at a space
		"cannot list: GET https://down.example.com/.well-known/terraform.json: HTTP 503",
		"✗ no location: download location: HTTP 404",
		"sha256:" + strings.Repeat("c", 64), "commit:0123456789abcdef0123456789abcdef01234567", // the mirror's provenance
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("module details lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "listed as") != 1 {
		t.Errorf("only a version listed in another form says how it was listed:\n%s", got)
	}
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > 50 {
			t.Errorf("line %d is %d cells wide, the pane 50: %q", i, w, l)
		}
	}
	// A cell or a job shown after replaces the module version.
	m.ShowCell(nil)
	if m.View() != "" {
		t.Errorf("ShowCell(nil) left %q", m.View())
	}
}

func TestModuleJob(t *testing.T) {
	j := &engine.TrackedJob{Info: engine.JobInfo{ID: -1, Name: "registry.example.com/acme/network/aws 1.2.0", Src: "registry://registry.example.com", Dst: "./modules", Size: -1},
		State: engine.Failed, Err: errors.New("fetch (source registry://registry.example.com): HTTP 404")}
	m := pane(40, 20)
	m.ShowJob(j, "[1] registry://registry.example.com", "[2] ./modules")
	got := ansi.Strip(m.View())
	for _, want := range []string{"registry.example.com/acme/network/aws\n1.2.0", "from [1] registry://", "to [2] ./modules", "failed", "HTTP 404"} {
		if !strings.Contains(got, want) {
			t.Errorf("module job details lack %q:\n%s", want, got)
		}
	}
}
