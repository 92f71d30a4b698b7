package cliconfig_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/backends/place"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fsMirror(path string) string {
	return "provider_installation {\n  filesystem_mirror {\n    path = \"" + path + "\"\n  }\n}\n"
}

func TestLoadSearchOrder(t *testing.T) {
	type file struct{ path, content string }
	for _, tc := range []struct {
		name  string
		files []file
		env   map[string]string // values may use HOME/ for the temp home
		want  []string          // "relative path: clients"
		mirs  []string
	}{
		{
			name:  "terraformrc only: both clients read it",
			files: []file{{".terraformrc", fsMirror("/m1")}},
			want:  []string{".terraformrc: terraform tofu"},
			mirs:  []string{"/m1"},
		},
		{
			name:  "terraformrc and tofurc: one each",
			files: []file{{".terraformrc", fsMirror("/m1")}, {".tofurc", fsMirror("/m2")}},
			want:  []string{".terraformrc: terraform", ".tofurc: tofu"},
			mirs:  []string{"/m1", "/m2"},
		},
		{
			name: "config directory: *.tfrc and *.tfrc.json, nothing else",
			files: []file{
				{".terraform.d/a.tfrc", fsMirror("/m1")},
				{".terraform.d/b.tfrc.json", `{"provider_installation": {"network_mirror": {"url": "https://mirror.example/tf/"}}}`},
				{".terraform.d/c.txt", "not read"},
				{".terraform.d/plugins/x.tfrc", "not read: a subdirectory"},
			},
			want: []string{".terraform.d/a.tfrc: terraform tofu", ".terraform.d/b.tfrc.json: terraform tofu"},
			mirs: []string{"/m1", "https://mirror.example/tf/"},
		},
		{
			name:  "TF_CLI_CONFIG_FILE: only that file, no config directory",
			files: []file{{".terraformrc", fsMirror("/m1")}, {"custom.tfrc", fsMirror("/m3")}, {".terraform.d/a.tfrc", fsMirror("/m4")}},
			env:   map[string]string{"TF_CLI_CONFIG_FILE": "HOME/custom.tfrc"},
			want:  []string{"custom.tfrc: terraform tofu"},
			mirs:  []string{"/m3"},
		},
		{
			name:  "TERRAFORM_CONFIG, the legacy name",
			files: []file{{"legacy.rc", fsMirror("/m5")}, {".terraformrc", fsMirror("/m1")}},
			env:   map[string]string{"TERRAFORM_CONFIG": "HOME/legacy.rc"},
			want:  []string{"legacy.rc: terraform tofu"},
			mirs:  []string{"/m5"},
		},
		{
			name:  "XDG for a fresh OpenTofu install",
			files: []file{{"xdg/opentofu/tofurc", fsMirror("/m6")}, {"xdg/opentofu/extra.tfrc", fsMirror("/m7")}},
			env:   map[string]string{"XDG_CONFIG_HOME": "HOME/xdg"},
			want:  []string{"xdg/opentofu/tofurc: tofu", "xdg/opentofu/extra.tfrc: tofu"},
			mirs:  []string{"/m6", "/m7"},
		},
		{
			name:  "XDG is not used once ~/.terraformrc exists",
			files: []file{{".terraformrc", fsMirror("/m1")}, {"xdg/opentofu/tofurc", fsMirror("/m6")}},
			env:   map[string]string{"XDG_CONFIG_HOME": "HOME/xdg"},
			want:  []string{".terraformrc: terraform tofu"},
			mirs:  []string{"/m1"},
		},
		{
			name: "nothing at all",
			want: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for _, f := range tc.files {
				write(t, filepath.Join(home, f.path), f.content)
			}
			env := map[string]string{}
			for k, v := range tc.env {
				env[k] = strings.Replace(v, "HOME/", home+"/", 1)
			}
			c, err := cliconfig.Load(envOf(env), home)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range c.Files {
				rel, _ := filepath.Rel(home, f.Path)
				got = append(got, rel+": "+strings.Join(f.Clients, " "))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("files:\n got %q\nwant %q", got, tc.want)
			}
			var mirs []string
			for _, m := range c.Mirrors {
				mirs = append(mirs, m.Place)
			}
			if !reflect.DeepEqual(mirs, tc.mirs) {
				t.Errorf("mirrors: got %q, want %q", mirs, tc.mirs)
			}
		})
	}
}

func TestLoadOverrideMissing(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".terraformrc"), fsMirror("/m1"))
	c, err := cliconfig.Load(envOf(map[string]string{"TF_CLI_CONFIG_FILE": filepath.Join(home, "nope.tfrc")}), home)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 0 || len(c.Mirrors) != 0 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "TF_CLI_CONFIG_FILE names "+filepath.Join(home, "nope.tfrc")+", which does not exist") {
		t.Errorf("files %v mirrors %v warnings %q", c.Files, c.Mirrors, c.Warnings)
	}
	// HOME comes from env when not given.
	c, err = cliconfig.Load(envOf(map[string]string{"HOME": home}), "")
	if err != nil || len(c.Mirrors) != 1 {
		t.Errorf("%v %v", c.Mirrors, err)
	}
}

const full = `
plugin_cache_dir   = "$HOME/.terraform.d/plugin-cache"
disable_checkpoint = true

host "example.com" {
  services = {
    "providers.v1" = "https://example.com/providers/"
  }
}

credentials "mirror.example.com" {
  token = "s3cret"
}

credentials "Bücher.example:443" {
  token = "idn"
}

provider_installation {
  dev_overrides {
    "example.com/acme/dev" = "/home/me/dev"
  }
  filesystem_mirror {
    path    = "/usr/share/terraform/providers"
    include = ["example.com/*/*"]
  }
  network_mirror {
    url              = "https://mirror.example.com/tf/"
    exclude          = ["hashicorp/aws", "registry.terraform.io/hashicorp/*"]
    trust_all_hashes = true
    colour           = "blue"
  }
  oci_mirror {
    repository_template = "registry.example.com/tf/${namespace}/${type}"
    include             = ["registry.opentofu.org/*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}

oci_credentials "registry.example.com" {
  username = "robot"
  password = "pw"
}

oci_credentials "registry.example.com/tf/acme" {
  access_token  = "at"
  refresh_token = "rt"
}

oci_credentials "ghcr.io" {
  docker_credentials_helper = "gh"
}

oci_default_credentials {
  discover_ambient_credentials = true
  docker_style_config_files    = ["auth.json"]
}
`

func TestParseFull(t *testing.T) {
	c, err := cliconfig.Parse([]byte(full), "/etc/tf/full.tfrc")
	if err != nil {
		t.Fatal(err)
	}
	var places []string
	for _, m := range c.Mirrors {
		places = append(places, m.Kind+" "+m.Place)
	}
	want := []string{
		"filesystem_mirror /usr/share/terraform/providers",
		"network_mirror https://mirror.example.com/tf/",
		"oci_mirror oci://registry.example.com/tf/${namespace}/${type}",
	}
	if !reflect.DeepEqual(places, want) {
		t.Errorf("mirrors:\n got %q\nwant %q", places, want)
	}
	kinds := map[string]place.Kind{cliconfig.FilesystemMirror: place.FS, cliconfig.NetworkMirror: place.NetMirror, cliconfig.OCIMirror: place.OCI}
	for _, m := range c.Mirrors {
		s, err := place.Parse(m.Place)
		if err != nil || s.Kind != kinds[m.Kind] {
			t.Errorf("%s: place.Parse gives %v, %v", m.Place, s.Kind, err)
		}
	}
	if len(c.Installations) != 1 || len(c.Installations[0].Methods) != 4 || c.Installations[0].Methods[3].Kind != cliconfig.Direct {
		t.Fatalf("installations: %+v", c.Installations)
	}
	if got := c.Installations[0].DevOverrides["example.com/acme/dev"]; got != "/home/me/dev" {
		t.Errorf("dev_overrides: %v", c.Installations[0].DevOverrides)
	}
	if m := c.Mirrors[0]; m.Line != 23 || m.File != "/etc/tf/full.tfrc" {
		t.Errorf("position %s:%d", m.File, m.Line)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `"colour" ignored`) || !strings.Contains(c.Warnings[0], "full.tfrc:31") {
		t.Errorf("warnings: %q", c.Warnings)
	}

	// Include and exclude, with the default host a two-part pattern means.
	aws := backends.Provider{Hostname: "registry.terraform.io", Namespace: "hashicorp", Type: "aws"}
	acme := backends.Provider{Hostname: "example.com", Namespace: "acme", Type: "alpha"}
	nm, fsm := c.Mirrors[1], c.Mirrors[0]
	if nm.Selects(aws, "registry.terraform.io") || !nm.Selects(acme, "registry.terraform.io") {
		t.Error("network_mirror include/exclude")
	}
	if !fsm.Selects(acme, "registry.opentofu.org") || fsm.Selects(aws, "registry.opentofu.org") {
		t.Error("filesystem_mirror include")
	}

	if tok, ok := c.Tokens.Token("mirror.example.com"); !ok || tok != "s3cret" {
		t.Errorf("token: %q %v", tok, ok)
	}
	if tok, ok := c.Tokens.Token("xn--bcher-kva.example"); !ok || tok != "idn" {
		t.Errorf("IDN token: %q %v (tokens %v)", tok, ok, c.Tokens)
	}

	if len(c.OCICredentials) != 3 {
		t.Fatalf("oci credentials: %+v", c.OCICredentials)
	}
	for _, tc := range []struct {
		registry, repo string
		want           string
	}{
		{"registry.example.com", "tf/acme/alpha", "registry.example.com/tf/acme"},
		{"registry.example.com", "tf/acme", "registry.example.com/tf/acme"},
		{"registry.example.com", "tf/acmex/alpha", "registry.example.com"},
		{"registry.example.com", "other", "registry.example.com"},
		{"ghcr.io", "x/y", "ghcr.io"},
		{"quay.io", "x/y", ""},
	} {
		got, ok := c.OCICredentialsFor(tc.registry, tc.repo)
		if got.RepositoryPrefix != tc.want || ok != (tc.want != "") {
			t.Errorf("%s/%s: got %q, want %q", tc.registry, tc.repo, got.RepositoryPrefix, tc.want)
		}
	}
	if d := c.OCIDefault; d == nil || !d.DiscoverAmbientCredentials || !reflect.DeepEqual(d.DockerStyleConfigFiles, []string{"/etc/tf/auth.json"}) {
		t.Errorf("oci_default_credentials: %+v", c.OCIDefault)
	}
}

func TestParseJSON(t *testing.T) {
	src := `{
  "provider_installation": {
    "filesystem_mirror": [{"path": "/a", "include": ["example.com/*/*"]}, {"path": "/b"}],
    "network_mirror": {"url": "https://m.example/"}
  },
  "credentials": {"m.example": {"token": "t"}},
  "plugin_cache_dir": "/cache"
}`
	c, err := cliconfig.Parse([]byte(src), "x.tfrc.json")
	if err != nil {
		t.Fatal(err)
	}
	var places []string
	for _, m := range c.Mirrors {
		places = append(places, m.Place)
	}
	if len(places) != 3 {
		t.Errorf("mirrors: %q", places)
	}
	if tok, _ := c.Tokens.Token("m.example"); tok != "t" {
		t.Errorf("token %q", tok)
	}
}

// HCL 1, which the clients use, reads "${...}" as text and allows quoted
// argument names; tfmirror reads such files the same way.
func TestLegacySyntax(t *testing.T) {
	src := `provider_installation {
  dev_overrides {
    "example.com/acme/dev" = "/home/me/dev"
    plain                  = "/p" # a comment
  }
  filesystem_mirror {
    path = "/srv/${HOME}/mirror"
  }
  oci_mirror {
    repository_template = "r.example:5000/p/${hostname}/${namespace}/${type}"
  }
}
`
	c, err := cliconfig.Parse([]byte(src), "legacy.tfrc")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Installations[0].DevOverrides; !reflect.DeepEqual(got, map[string]string{"example.com/acme/dev": "/home/me/dev", "plain": "/p"}) {
		t.Errorf("dev_overrides: %v", got)
	}
	if len(c.Mirrors) != 2 || c.Mirrors[0].Place != "/srv/${HOME}/mirror" || c.Mirrors[1].Place != "oci://r.example:5000/p/${hostname}/${namespace}/${type}" {
		t.Errorf("mirrors: %+v", c.Mirrors)
	}
	if c.Mirrors[1].Line != 9 {
		t.Errorf("positions moved: line %d", c.Mirrors[1].Line)
	}
}

func TestCredentialsEnvironmentFirst(t *testing.T) {
	c, err := cliconfig.Parse([]byte(`
credentials "a.example" {
  token = "from-file"
}
credentials "b.example" {
  token = "file-only"
}
`), "c.tfrc")
	if err != nil {
		t.Fatal(err)
	}
	creds := c.Credentials([]string{"TF_TOKEN_a_example=from-env", "TF_TOKEN_c__d_example=dashed", "PATH=/bin"})
	for host, want := range map[string]string{"a.example": "from-env", "b.example": "file-only", "c-d.example": "dashed"} {
		if got, ok := creds.Token(host); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", host, got, ok, want)
		}
	}
	if _, ok := creds.Token("z.example"); ok {
		t.Error("token for an unknown host")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		want      string
	}{
		{"syntax", "provider_installation {\n", 1, "Unclosed configuration block"},
		{"installation as attribute", "provider_installation = {}\n", 1, "must be a block"},
		{"installation with label", "provider_installation \"x\" {\n}\n", 1, "Extraneous label"},
		{"unknown method", "provider_installation {\n  carrier_pigeon {\n  }\n}\n", 2, "Unsupported block type"},
		{"attribute in installation", "provider_installation {\n  path = \"/x\"\n}\n", 2, "Unsupported argument"},
		{"method with label", "provider_installation {\n  filesystem_mirror \"x\" {\n    path = \"/x\"\n  }\n}\n", 2, "Extraneous label"},
		{"fs mirror without path", "provider_installation {\n  filesystem_mirror {\n  }\n}\n", 2, `"path" is required`},
		{"fs mirror empty path", "provider_installation {\n  filesystem_mirror {\n    path = \"\"\n  }\n}\n", 3, "must not be empty"},
		{"path not a string", "provider_installation {\n  filesystem_mirror {\n    path = [\"/x\"]\n  }\n}\n", 3, "must be a string"},
		{"path a variable", "provider_installation {\n  filesystem_mirror {\n    path = var.x\n  }\n}\n", 3, "Variables not allowed"},
		{"network mirror http", "provider_installation {\n  network_mirror {\n    url = \"http://m.example/\"\n  }\n}\n", 3, "https: URL"},
		{"network mirror no url", "provider_installation {\n  network_mirror {\n  }\n}\n", 2, `"url" is required`},
		{"bad include", "provider_installation {\n  filesystem_mirror {\n    path    = \"/x\"\n    include = [\"a/b/c/d\"]\n  }\n}\n", 4, "[HOSTNAME/]NAMESPACE/TYPE"},
		{"wildcard host, named type", "provider_installation {\n  direct {\n    exclude = [\"*/*/aws\"]\n  }\n}\n", 3, "wildcard hostname"},
		{"wildcard namespace, named type", "provider_installation {\n  direct {\n    exclude = [\"example.com/*/aws\"]\n  }\n}\n", 3, "wildcard namespace"},
		{"include not a list", "provider_installation {\n  direct {\n    include = \"a/b\"\n  }\n}\n", 3, "list of strings"},
		{"oci template unknown symbol", "provider_installation {\n  oci_mirror {\n    repository_template = \"r.example/${namespace}/${type}/${version}\"\n  }\n}\n", 3, `"version"`},
		{"oci template without namespace", "provider_installation {\n  oci_mirror {\n    repository_template = \"r.example/${hostname}/${type}\"\n  }\n}\n", 3, "${namespace}"},
		{"oci template host pinned but type not", "provider_installation {\n  oci_mirror {\n    repository_template = \"r.example/p/${namespace}\"\n    include = [\"example.com/acme/*\"]\n  }\n}\n", 3, "${type}"},
		{"oci template with tag", "provider_installation {\n  oci_mirror {\n    repository_template = \"r.example/${hostname}/${namespace}/${type}:latest\"\n  }\n}\n", 3, "oci_mirror"},
		{"dev_overrides not first", "provider_installation {\n  direct {\n  }\n  dev_overrides {\n  }\n}\n", 4, "dev_overrides must come before"},
		{"host bad hostname", "host \"ok.example\" {\n}\nhost \"example..com\" {\n  services = {}\n}\n", 3, `host "example..com": invalid hostname`},
		{"host punycode", "host \"xn--80ak6aa92e.com\" {\n}\n", 1, "punycode"},
		{"credentials bad host", "credentials \"https://x.example\" {\n  token = \"t\"\n}\n", 1, "invalid hostname"},
		{"credentials without label", "credentials {\n  token = \"t\"\n}\n", 1, "Missing hostname for credentials"},
		{"token not a string", "credentials \"x.example\" {\n  token = 12\n}\n", 2, "must be a string"},
		{"oci credentials nothing", "oci_credentials \"r.example\" {\n}\n", 1, "must set username and password"},
		{"oci credentials two styles", "oci_credentials \"r.example\" {\n  username = \"u\"\n  password = \"p\"\n  docker_credentials_helper = \"x\"\n}\n", 1, "only one of"},
		{"oci credentials half", "oci_credentials \"r.example\" {\n  username = \"u\"\n}\n", 1, "together"},
		{"oci credentials helper with path", "oci_credentials \"r.example/a/b\" {\n  docker_credentials_helper = \"x\"\n}\n", 1, "whole registries"},
		{"oci credentials helper path name", "oci_credentials \"r.example\" {\n  docker_credentials_helper = \"../x\"\n}\n", 2, "invalid docker_credentials_helper"},
		{"oci credentials bad label", "oci_credentials \"r.example/A:b@c\" {\n  username = \"u\"\n  password = \"p\"\n}\n", 1, "oci_credentials"},
		{"oci credentials duplicate", "oci_credentials \"r.example\" {\n  username = \"u\"\n  password = \"p\"\n}\noci_credentials \"r.example\" {\n  username = \"u\"\n  password = \"p\"\n}\n", 5, "duplicate oci_credentials"},
		{"oci default twice", "oci_default_credentials {\n}\noci_default_credentials {\n}\n", 3, "only one oci_default_credentials"},
		{"oci default contradiction", "oci_default_credentials {\n  discover_ambient_credentials = false\n  docker_style_config_files = [\"a\"]\n}\n", 3, "meaningless"},
		{"oci default not bool", "oci_default_credentials {\n  discover_ambient_credentials = \"no\"\n}\n", 2, "true or false"},
		{"nested block in method", "provider_installation {\n  direct {\n    inner {\n    }\n  }\n}\n", 3, "Unexpected \"inner\" block"},
		{"dev_overrides entry", "provider_installation {\n  dev_overrides {\n    \"example.com/a/b\" = \"/x\"\n    oops\n  }\n}\n", 4, "Invalid dev_overrides entry"},
		{"json not an object", "[1, 2]", 1, "JSON object is required"},
		// hcl recurses once per level with no limit (a few hundred thousand
		// overflow the stack, which kills the process); the test of the
		// built binary shows that, this one where the limit is crossed.
		{"nested brackets", "plugin_cache_dir = \"/x\"\nx = " + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "\n", 2, "Nesting too deep"},
		{"nested blocks", strings.Repeat("provider_installation {\n", 1000) + strings.Repeat("}\n", 1000), 34, "Nesting too deep"},
		{"chained operators", "x = " + strings.Repeat("!", 1000) + "true\n", 1, "Nesting too deep"},
		{"nested json", strings.Repeat("[", 1000) + strings.Repeat("]", 1000), 1, "Nesting too deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "bad.tfrc"
			if strings.HasPrefix(tc.src, "[") {
				name = "bad.tfrc.json"
			}
			_, err := cliconfig.Parse([]byte(tc.src), name)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, cliconfig.ErrInvalid) {
				t.Errorf("not ErrInvalid: %v", err)
			}
			pos := name + ":" + itoa(tc.line) + ":"
			if !strings.Contains(err.Error(), pos) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want %q and %q", err, pos, tc.want)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// A file over the size limit is refused before it is read in full, as a
// problem of that file: the others are still read.
func TestLoadRefusesLargeFile(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".terraformrc"), fsMirror("/good"))
	var b strings.Builder
	for i := 0; b.Len() <= hclinput.MaxSize; i++ {
		fmt.Fprintf(&b, "credentials \"host%d.example\" {\n  token = \"t\"\n}\n", i)
	}
	big := filepath.Join(home, ".terraform.d", "big.tfrc")
	write(t, big, b.String())
	c, err := cliconfig.Load(envOf(nil), home)
	if !errors.Is(err, cliconfig.ErrInvalid) || !strings.Contains(err.Error(), big+": ") || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("error %v", err)
	}
	if len(c.Mirrors) != 1 || len(c.Tokens) != 0 {
		t.Errorf("mirrors %+v, %d tokens", c.Mirrors, len(c.Tokens))
	}
}

// A config that fails to parse in one file still yields the others.
func TestLoadKeepsGoodFiles(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".terraformrc"), fsMirror("/good"))
	write(t, filepath.Join(home, ".terraform.d", "bad.tfrc"), "provider_installation {\n  network_mirror {\n    url = \"ftp://x\"\n  }\n}\n")
	c, err := cliconfig.Load(envOf(nil), home)
	if err == nil || !strings.Contains(err.Error(), "bad.tfrc:3:11") {
		t.Fatalf("error %v", err)
	}
	if len(c.Mirrors) != 1 || c.Mirrors[0].Place != "/good" {
		t.Errorf("mirrors %+v", c.Mirrors)
	}
	// Two provider_installation blocks for one client: the clients refuse it.
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], "refuses more than one provider_installation") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

// The OCI credentials reach ORAS as a credentials store; a credential helper
// named in the configuration is run with Docker's helper protocol.
func TestOCIStore(t *testing.T) {
	bin := t.TempDir()
	helper := "#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread server\necho \"{\\\"ServerURL\\\":\\\"$server\\\",\\\"Username\\\":\\\"helper-user\\\",\\\"Secret\\\":\\\"for-$server\\\"}\"\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-tfmtest"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	c, err := cliconfig.Parse([]byte(`
oci_credentials "basic.example:5000" {
  username = "robot"
  password = "pw"
}
oci_credentials "token.example" {
  access_token  = "at"
  refresh_token = "rt"
}
oci_credentials "helper.example" {
  docker_credentials_helper = "tfmtest"
}
oci_credentials "basic.example:5000/only/this" {
  username = "narrow"
  password = "x"
}
`), "o.tfrc")
	if err != nil {
		t.Fatal(err)
	}
	ambient := credentials.NewMemoryStore()
	ctx := context.Background()
	if err := ambient.Put(ctx, "ambient.example", auth.Credential{Username: "amb", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	s := c.OCIStore(ambient)
	for host, want := range map[string]auth.Credential{
		"basic.example:5000": {Username: "robot", Password: "pw"},
		"token.example":      {AccessToken: "at", RefreshToken: "rt"},
		"helper.example":     {Username: "helper-user", Password: "for-helper.example"},
		"ambient.example":    {Username: "amb", Password: "p"},
		"none.example":       {},
	} {
		got, err := s.Get(ctx, host)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", host, got, err, want)
		}
	}
	if err := s.Put(ctx, "x", auth.Credential{}); err == nil {
		t.Error("store is writable")
	}

	off, err := cliconfig.Parse([]byte("oci_default_credentials {\n  discover_ambient_credentials = false\n}\n"), "off.tfrc")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := off.OCIStore(ambient).Get(ctx, "ambient.example"); got != auth.EmptyCredential {
		t.Errorf("ambient credentials used although discovery is off: %+v", got)
	}
}

// Terraform 1.16 takes "_" in a namespace, in include and exclude patterns
// too; a type keeps the old rule.
func TestParsePatternUnderscoreNamespace(t *testing.T) {
	p, err := cliconfig.ParsePattern("app.terraform.io/Example_Corp/*")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Matches(backends.Provider{Hostname: "app.terraform.io", Namespace: "example_corp", Type: "kube"}, "registry.terraform.io") {
		t.Errorf("%v does not select app.terraform.io/example_corp/kube", p)
	}
	if _, err := cliconfig.ParsePattern("example_corp/kube_x"); err == nil || !strings.Contains(err.Error(), "kube_x") {
		t.Errorf("an underscore in a type: %v", err)
	}
}
