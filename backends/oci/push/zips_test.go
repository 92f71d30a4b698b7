package push

import (
	"archive/zip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/ocitemplate"
	"github.com/tfmirror/tfmirror/hashing"
)

func TestIdentify(t *testing.T) {
	tests := []struct {
		name   string
		paths  []string
		naming Naming
		want   string // packages, or the error fragment after "error: "
	}{
		{"goreleaser names", []string{"dist/terraform-provider-alpha_1.2.3_linux_amd64.zip", "terraform-provider-alpha_1.2.3_darwin_arm64.zip"},
			Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha")},
			"registry.opentofu.org/acme/alpha 1.2.3 linux_amd64; registry.opentofu.org/acme/alpha 1.2.3 darwin_arm64"},
		{"full address", []string{"terraform-provider-alpha_1.2.3-rc.1_linux_amd64.zip"},
			Naming{Providers: backendtest.ProviderFilters(t, "example.com/acme/alpha")}, "example.com/acme/alpha 1.2.3-rc.1 linux_amd64"},
		{"several providers", []string{"terraform-provider-alpha_1.0.0_linux_amd64.zip", "terraform-provider-beta_2.0.0_linux_amd64.zip"},
			Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha", "registry.opentofu.org/acme/beta")},
			"registry.opentofu.org/acme/alpha 1.0.0 linux_amd64; registry.opentofu.org/acme/beta 2.0.0 linux_amd64"},
		{"upper case name", []string{"Terraform-Provider-Alpha_1.0.0_Linux_AMD64.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha")},
			"registry.opentofu.org/acme/alpha 1.0.0 linux_amd64"},
		{"other name with flags", []string{"build/provider.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha"), Version: "= 0.3.0", Platform: "linux_arm64"},
			"registry.opentofu.org/acme/alpha 0.3.0 linux_arm64"},
		{"standard name beats flags", []string{"terraform-provider-alpha_1.0.0_linux_amd64.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha"), Version: "2.0.0", Platform: "darwin_amd64"},
			"registry.opentofu.org/acme/alpha 1.0.0 linux_amd64"},
		{"no provider", []string{"terraform-provider-alpha_1.0.0_linux_amd64.zip"}, Naming{}, "error: needs --provider"},
		{"other name without flags", []string{"provider.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha")}, "error: pass an exact --version and one --platform"},
		{"other name with a constraint", []string{"provider.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha"), Version: "~> 1.0", Platform: "linux_amd64"}, "error: pass an exact --version"},
		{"type not given", []string{"terraform-provider-gamma_1.0.0_linux_amd64.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha", "registry.opentofu.org/acme/beta")}, "error: names none of the providers"},
		{"same type twice", []string{"terraform-provider-alpha_1.0.0_linux_amd64.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha", "registry.opentofu.org/other/alpha")}, "error: several --provider values"},
		{"bad version in name", []string{"terraform-provider-alpha_v1.0.0_linux_amd64.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha")}, "error: cannot tell the version"},
		{"bad platform in name", []string{"terraform-provider-alpha_1.0.0_linux.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha")}, "error: cannot tell the version"},
		{"no hostname", []string{"terraform-provider-alpha_1.0.0_linux_amd64.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "acme/alpha")}, "error: write the full address"},
		{"bad platform flag", []string{"provider.zip"}, Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha"), Version: "1.0.0", Platform: "linux"}, "error: --platform"},
		{"duplicate", []string{"a/terraform-provider-alpha_1.0.0_linux_amd64.zip", "b/terraform-provider-alpha_1.0.0_linux_amd64.zip"},
			Naming{Providers: backendtest.ProviderFilters(t, "registry.opentofu.org/acme/alpha")}, "error: are both registry.opentofu.org/acme/alpha 1.0.0 linux_amd64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Identify(tt.paths, tt.naming)
			if frag, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
				if err == nil || !strings.Contains(err.Error(), frag) {
					t.Fatalf("err %v, want %q", err, frag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var pkgs []string
			for _, zf := range got {
				pkgs = append(pkgs, zf.Package.String())
			}
			if strings.Join(pkgs, "; ") != tt.want {
				t.Errorf("got %s, want %s", strings.Join(pkgs, "; "), tt.want)
			}
		})
	}
}

func writeZip(t *testing.T, path string, entries map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNewZips(t *testing.T) {
	dir := t.TempDir()
	pkg := func(typ string) backends.Package {
		p, _ := backends.NewProvider("example.com", "acme", typ)
		v, _ := backends.ParseVersion("1.0.0")
		return backends.Package{Provider: p, Version: v, Platform: backends.Platform{OS: "linux", Arch: "amd64"}}
	}
	good := filepath.Join(dir, "good.zip")
	writeZip(t, good, map[string]string{"terraform-provider-alpha_v1.0.0": "#!/bin/sh\n", "README.md": "hi"})
	exe := filepath.Join(dir, "exe.zip")
	writeZip(t, exe, map[string]string{"terraform-provider-alpha.exe": "MZ"})
	nested := filepath.Join(dir, "nested.zip")
	writeZip(t, nested, map[string]string{"bin/terraform-provider-alpha": "#!/bin/sh\n"})
	wrongType := filepath.Join(dir, "wrong.zip")
	writeZip(t, wrongType, map[string]string{"terraform-provider-alphabet": "#!/bin/sh\n"})
	notZip := filepath.Join(dir, "not.zip")
	if err := os.WriteFile(notZip, []byte("this is not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path, want string
	}{
		{good, ""},
		{exe, ""},
		{nested, "no terraform-provider-alpha executable at its root"},
		{wrongType, "no terraform-provider-alpha executable"},
		{notZip, "not a usable zip"},
		{filepath.Join(dir, "missing.zip"), "not a usable zip"},
	}
	for _, tt := range tests {
		z, err := NewZips(context.Background(), []ZipFile{{Path: tt.path, Package: pkg("alpha")}}, nil)
		if tt.want != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		as, err := z.Archives(context.Background(), pkg("alpha").Provider, pkg("alpha").Version)
		if err != nil || len(as) != 1 {
			t.Fatalf("%s: %v %v", tt.path, as, err)
		}
		// A zip given to push is the release itself: it states no hash,
		// and none is taken before the transfer, which hashes it as it
		// reads it.
		if ev := as[0].Evidence; len(ev) != 1 || ev[0].Source.Kind != hashing.SourceRelease || len(ev[0].Hashes) != 0 {
			t.Errorf("%s: evidence %v, want the release file, stating nothing", tt.path, ev)
		}
	}
}

func TestConfigBlock(t *testing.T) {
	prov := func(s string) backends.Provider {
		p, err := backends.ParseProvider(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tmpl, err := ocitemplate.Parse("registry.example.com/providers/${namespace}/${type}")
	if err != nil {
		t.Fatal(err)
	}
	block, notes := ConfigBlock(tmpl, []backends.Provider{prov("registry.opentofu.org/acme/alpha")}, false)
	want := `provider_installation {
  oci_mirror {
    repository_template = "registry.example.com/providers/${namespace}/${type}"
    include             = ["registry.opentofu.org/acme/alpha"]
  }
  direct {
    exclude = ["registry.opentofu.org/acme/alpha"]
  }
}
`
	if block != want || len(notes) != 0 {
		t.Errorf("block:\n%s\nnotes %v", block, notes)
	}

	block, notes = ConfigBlock(tmpl, []backends.Provider{prov("registry.opentofu.org/acme/alpha"), prov("example.com/acme/beta")}, true)
	want = `provider_installation {
  oci_mirror {
    repository_template = "registry.example.com/providers/${namespace}/${type}"
    include             = [
      "registry.opentofu.org/acme/alpha",
      "example.com/acme/beta",
    ]
  }
  direct {
    exclude = [
      "registry.opentofu.org/acme/alpha",
      "example.com/acme/beta",
    ]
  }
}
`
	if block != want {
		t.Errorf("block:\n%s", block)
	}
	joined := strings.Join(notes, "\n")
	if len(notes) != 2 || !strings.Contains(joined, "does not use ${hostname}, but the providers have 2 hostnames") || !strings.Contains(joined, "HTTPS only") {
		t.Errorf("notes %v", notes)
	}
}

func TestSumsFiles(t *testing.T) {
	dir := t.TempDir()
	const sumA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	const sumB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	release := write("terraform-provider-alpha_1.0.0_SHA256SUMS", sumA+"  terraform-provider-alpha_1.0.0_linux_amd64.zip\n")
	plain := write("SHA256SUMS", sumB+"  terraform-provider-alpha_1.0.0_linux_amd64.zip\n"+sumA+"  terraform-provider-alpha_2.0.0_linux_amd64.zip\n")
	broken := write("terraform-provider-alpha_3.0.0_SHA256SUMS", "not a sum  x.zip\n")
	zip := func(version string) ZipFile {
		p, _ := backends.NewProvider("example.com", "acme", "alpha")
		v, _ := backends.ParseVersion(version)
		return ZipFile{Path: filepath.Join("dist", "terraform-provider-alpha_"+version+"_linux_amd64.zip"),
			Package: backends.Package{Provider: p, Version: v, Platform: backends.Platform{OS: "linux", Arch: "amd64"}}}
	}
	for _, tt := range []struct {
		path      string
		sums, sig bool
	}{{release, true, false}, {plain, true, false}, {release + ".sig", false, true}, {"dist/terraform-provider-alpha_1.0.0_linux_amd64.zip", false, false}} {
		if sums, sig := IsSumsFile(tt.path); sums != tt.sums || sig != tt.sig {
			t.Errorf("IsSumsFile(%s) = %v, %v", tt.path, sums, sig)
		}
	}
	if _, err := ReadSums(broken); err == nil || !strings.Contains(err.Error(), broken) {
		t.Errorf("ReadSums of a broken file: %v", err)
	}
	rel, err := ReadSums(release)
	if err != nil || rel.Type != "alpha" || rel.Version != "1.0.0" {
		t.Fatalf("ReadSums: %+v, %v", rel, err)
	}
	all, err := ReadSums(plain)
	if err != nil || all.Type != "" {
		t.Fatalf("ReadSums: %+v, %v", all, err)
	}
	tests := []struct {
		name string
		zip  ZipFile
		sums []SumsFile
		want string // the zh: stated, one per evidence, or the error fragment after "error: "
	}{
		{"release file", zip("1.0.0"), []SumsFile{rel}, "zh:" + sumA},
		{"another version's file says nothing", zip("2.0.0"), []SumsFile{rel}, ""},
		{"a file for every zip", zip("2.0.0"), []SumsFile{rel, all}, "zh:" + sumA},
		{"both", zip("1.0.0"), []SumsFile{rel, all}, "zh:" + sumA + " zh:" + sumB},
		{"not listed", zip("4.0.0"), []SumsFile{all}, "error: is not listed in " + plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := evidence(tt.zip, tt.sums)
			if frag, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
				if err == nil || !strings.Contains(err.Error(), frag) || !strings.Contains(err.Error(), tt.zip.Path) {
					t.Fatalf("err %v, want %q", err, frag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ev {
				if e.Source.Kind != hashing.SourceReleaseSums || len(e.Hashes) != 1 {
					t.Errorf("evidence %+v", e)
				}
				got = append(got, string(e.Hashes[0]))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// Classify sorts push's SRC arguments: a goreleaser dist given as itself
// opens into its files, as dist/* gives them; a filesystem mirror, even
// one holding a SHA256SUMS and zips at its top, stays a place; a file it
// cannot classify is an error naming it.
func TestClassify(t *testing.T) {
	dist := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dist, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zip := write("terraform-provider-alpha_1.0.0_linux_amd64.zip", "PK\x03\x04")
	sums := write("terraform-provider-alpha_1.0.0_SHA256SUMS", "")
	sig := write("terraform-provider-alpha_1.0.0_SHA256SUMS.sig", "")
	write("terraform-provider-alpha_1.0.0_manifest.json", "{}")
	write("artifacts.json", "{}")
	write("terraform-provider-alpha_linux_amd64_v1/terraform-provider-alpha_v1.0.0", "")
	oddZip := filepath.Join(t.TempDir(), "provider.bin")
	if err := os.WriteFile(oddZip, []byte("PK\x03\x04rest"), 0o644); err != nil {
		t.Fatal(err)
	}

	mirror := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mirror, "example.com", "acme", "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mirror, "example.com", "acme", "alpha", "terraform-provider-alpha_1.0.0_linux_amd64.zip"), []byte("PK\x03\x04"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mirror, "terraform-provider-alpha_1.0.0_linux_amd64.zip"), []byte("PK\x03\x04"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mirror, "terraform-provider-alpha_1.0.0_SHA256SUMS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	globbed, _ := filepath.Glob(filepath.Join(dist, "*"))
	want := Args{Zips: []string{zip}, Sums: []string{sums}, Sigs: []string{sig},
		Skipped: []string{"artifacts.json", "terraform-provider-alpha_1.0.0_manifest.json", "terraform-provider-alpha_linux_amd64_v1/"}}
	for _, args := range [][]string{{dist}, globbed} {
		got, err := Classify(context.Background(), args)
		if err != nil || strings.Join(got.Zips, ",") != strings.Join(want.Zips, ",") || strings.Join(got.Sums, ",") != strings.Join(want.Sums, ",") ||
			strings.Join(got.Sigs, ",") != strings.Join(want.Sigs, ",") || strings.Join(got.Skipped, ",") != strings.Join(want.Skipped, ",") || len(got.Places) != 0 {
			t.Errorf("Classify(%v) = %+v, %v; want %+v", args, got, err, want)
		}
	}
	got, err := Classify(context.Background(), []string{mirror, "oci://r/x", oddZip, filepath.Join(dist, "missing.zip")})
	if err != nil || strings.Join(got.Places, ",") != mirror+",oci://r/x" || strings.Join(got.Zips, ",") != oddZip+","+filepath.Join(dist, "missing.zip") {
		t.Errorf("a mirror, a URL, a zip by its bytes and a missing zip: %+v, %v", got, err)
	}
	stray := write("notes.txt", "hello")
	for _, args := range [][]string{{dist}, {stray}} {
		if _, err := Classify(context.Background(), args); err == nil || !errors.Is(err, backends.ErrUsage) || !strings.Contains(err.Error(), stray) {
			t.Errorf("Classify(%v) with %s: %v, want a usage error naming it", args, stray, err)
		}
	}
	os.Remove(stray)
	write("site/index.html", "")
	if _, err := Classify(context.Background(), []string{dist}); err == nil || !strings.Contains(err.Error(), filepath.Join(dist, "site")) {
		t.Errorf("a dist holding another directory: %v", err)
	}
}
