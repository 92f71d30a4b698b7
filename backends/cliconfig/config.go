package cliconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/hclinput"
)

// Installation method kinds, as provider_installation names them.
const (
	FilesystemMirror = "filesystem_mirror"
	NetworkMirror    = "network_mirror"
	OCIMirror        = "oci_mirror"
	Direct           = "direct"
)

// Method is one installation method of a provider_installation block.
type Method struct {
	Kind string // FilesystemMirror, NetworkMirror, OCIMirror or Direct
	// Place is the method as a tfmirror place argument: PATH (file://PATH
	// when the path looks like a URL), https://HOST/PATH/ or oci://TEMPLATE.
	// Empty for Direct.
	Place string
	// Location is the value as written: path, url or repository_template.
	Location string
	Include  []Pattern
	Exclude  []Pattern
	File     string
	Line     int
}

// Selects reports whether the method is used for p under the clients'
// include/exclude rules; defaultHost stands for the hostname of patterns
// written as NAMESPACE/TYPE.
func (m Method) Selects(p backends.Provider, defaultHost string) bool {
	included := len(m.Include) == 0
	for _, pt := range m.Include {
		if pt.Matches(p, defaultHost) {
			included = true
		}
	}
	for _, pt := range m.Exclude {
		if pt.Matches(p, defaultHost) {
			return false
		}
	}
	return included
}

// Installation is one provider_installation block.
type Installation struct {
	File    string
	Line    int
	Methods []Method
	// DevOverrides maps provider addresses to local directories, as written.
	// tfmirror does not use them (they bypass mirrors and locks).
	DevOverrides map[string]string
}

// OCICredentials is one oci_credentials block.
type OCICredentials struct {
	// RepositoryPrefix is the block label: REGISTRY[:PORT][/REPOSITORY-PREFIX].
	RepositoryPrefix string
	Registry         string
	RepositoryPath   string // "" for the whole registry

	Username, Password        string
	AccessToken, RefreshToken string
	DockerCredentialHelper    string

	File string
	Line int
}

// OCIDefaultCredentials is the oci_default_credentials block.
type OCIDefaultCredentials struct {
	DiscoverAmbientCredentials bool
	// DockerStyleConfigFiles, when non-nil, replaces the default search for
	// Docker-style credential files (absolute paths).
	DockerStyleConfigFiles []string
	DockerCredentialHelper string
	File                   string
	Line                   int
}

// File is one configuration file tfmirror found, and the clients that read
// it.
type File struct {
	Path    string
	Clients []string // "terraform", "tofu"
}

// Config is what tfmirror found in the CLI configuration.
type Config struct {
	// Files read, in the order the clients read them.
	Files         []File
	Installations []Installation
	// Mirrors are every installation method except direct, in order, with
	// duplicates (the same place in several files) removed.
	Mirrors []Method
	// Tokens are the credentials blocks' tokens by comparison-form host;
	// TokenFiles says which file each came from.
	Tokens     backends.TokenMap
	TokenFiles map[string]string
	// CredentialsHelper is the credentials_helper block's name, which
	// tfmirror does not run.
	CredentialsHelper string
	OCICredentials    []OCICredentials
	OCIDefault        *OCIDefaultCredentials
	// Warnings are things the clients would also complain about, or that
	// tfmirror ignores.
	Warnings []string
}

// ErrInvalid is wrapped by every error about a configuration file's content.
var ErrInvalid = errors.New("invalid CLI configuration")

// Diag is a problem at a place in a configuration file.
type Diag struct {
	File         string
	Line, Column int
	Message      string
}

func (d Diag) String() string {
	if d.Line == 0 {
		return d.File + ": " + d.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Message)
}

// Error lists the problems in the configuration files.
type Error struct{ Diags []Diag }

func (e *Error) Error() string {
	s := make([]string, len(e.Diags))
	for i, d := range e.Diags {
		s[i] = d.String()
	}
	return strings.Join(s, "\n")
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

// Load finds and reads the CLI configuration files the way the clients do,
// with env giving environment variables (os.Getenv in real use) and home the
// home directory ("" means env("HOME")):
//
//   - TF_CLI_CONFIG_FILE (or the legacy TERRAFORM_CONFIG) names the only
//     file both clients read; the config directory is then skipped.
//   - Otherwise Terraform reads ~/.terraformrc and OpenTofu ~/.tofurc
//     (~/.terraformrc when only that exists, $XDG_CONFIG_HOME/opentofu/tofurc
//     when neither does), then both read the *.tfrc and *.tfrc.json files of
//     ~/.terraform.d (OpenTofu: $XDG_CONFIG_HOME/opentofu when ~/.terraform.d
//     does not exist).
//
// Load returns what it could read even when some file is malformed; the
// error then lists every problem as file:line:column.
func Load(env func(string) string, home string) (*Config, error) {
	if home == "" {
		home = env("HOME")
	}
	c := &Config{Tokens: backends.TokenMap{}, TokenFiles: map[string]string{}}
	var diags []Diag
	for _, src := range locate(env, home) {
		b, err := hclinput.ReadFile(src.Path)
		big := (*hclinput.TooLargeError)(nil)
		switch {
		case err == nil:
		case errors.As(err, &big):
			c.Files = append(c.Files, src.File)
			diags = append(diags, Diag{File: src.Path, Message: "File too large: " + big.Detail()})
			continue
		case errors.Is(err, os.ErrNotExist) && src.envName != "":
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s names %s, which does not exist (the clients then read no configuration file either)", src.envName, src.Path))
			continue
		case errors.Is(err, os.ErrNotExist):
			continue
		default:
			c.Warnings = append(c.Warnings, err.Error())
			continue
		}
		c.Files = append(c.Files, src.File)
		diags = append(diags, c.parse(b, src.Path)...)
	}
	c.checkSingleInstallation()
	c.Mirrors = uniqueMirrors(c.Installations)
	if len(diags) > 0 {
		return c, &Error{Diags: diags}
	}
	return c, nil
}

// Mirrors returns the mirrors the user's CLI configuration names, for
// commands given no place: Load(env, home).Mirrors.
func Mirrors(env func(string) string, home string) ([]Method, error) {
	c, err := Load(env, home)
	if c == nil {
		return nil, err
	}
	return c.Mirrors, err
}

// Credentials returns the bearer tokens for HTTP places: the TF_TOKEN_*
// variables of environ first (as the clients let them override the files),
// then the credentials blocks.
func (c *Config) Credentials(environ []string) backends.Credentials {
	return backends.CredentialsChain{backends.EnvCredentials(environ), c.Tokens}
}

type source struct {
	File
	envName string // the variable that named the file, if one did
}

func locate(env func(string) string, home string) []source {
	for _, name := range []string{"TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"} {
		if p := env(name); p != "" {
			return []source{{File: File{Path: p, Clients: []string{"terraform", "tofu"}}, envName: name}}
		}
	}
	var out []source
	add := func(path, client string) {
		for i := range out {
			if out[i].Path == path {
				out[i].Clients = append(out[i].Clients, client)
				return
			}
		}
		out = append(out, source{File: File{Path: path, Clients: []string{client}}})
	}
	if home == "" {
		return nil
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	xdg := env("XDG_CONFIG_HOME")

	tfrc := filepath.Join(home, ".terraformrc")
	tofurc := filepath.Join(home, ".tofurc")
	add(tfrc, "terraform")
	switch {
	case xdg != "" && !exists(tfrc) && !exists(tofurc):
		add(filepath.Join(xdg, "opentofu", "tofurc"), "tofu")
	case exists(tfrc) && !exists(tofurc):
		add(tfrc, "tofu")
	default:
		add(tofurc, "tofu")
	}

	tfDir := filepath.Join(home, ".terraform.d")
	tofuDir := tfDir
	if xdg != "" && !exists(tfDir) {
		tofuDir = filepath.Join(xdg, "opentofu")
	}
	for _, d := range []struct{ dir, client string }{{tfDir, "terraform"}, {tofuDir, "tofu"}} {
		entries, err := os.ReadDir(d.dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !(strings.HasSuffix(n, ".tfrc") || strings.HasSuffix(n, ".tfrc.json")) {
				continue
			}
			add(filepath.Join(d.dir, n), d.client)
		}
	}
	return out
}

// checkSingleInstallation warns as each client would fail: more than one
// provider_installation block across the files it reads.
func (c *Config) checkSingleInstallation() {
	for _, client := range []string{"terraform", "tofu"} {
		var where []string
		for _, in := range c.Installations {
			for _, f := range c.Files {
				if f.Path == in.File && contains(f.Clients, client) {
					where = append(where, fmt.Sprintf("%s:%d", in.File, in.Line))
				}
			}
		}
		if len(where) > 1 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s refuses more than one provider_installation block, and its configuration has %d (%s)", client, len(where), strings.Join(where, ", ")))
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func uniqueMirrors(ins []Installation) []Method {
	seen := map[string]bool{}
	var out []Method
	for _, in := range ins {
		for _, m := range in.Methods {
			if m.Kind == Direct || seen[m.Place] {
				continue
			}
			seen[m.Place] = true
			out = append(out, m)
		}
	}
	return out
}

// OCICredentialsFor returns the oci_credentials block that applies to a
// repository: the one with the longest matching repository prefix, then the
// one for the whole registry, as OpenTofu picks them. registry is HOST[:PORT].
func (c *Config) OCICredentialsFor(registry, repository string) (OCICredentials, bool) {
	best, bestLen := OCICredentials{}, -1
	for _, oc := range c.OCICredentials {
		if !strings.EqualFold(oc.Registry, registry) {
			continue
		}
		n := 0
		if oc.RepositoryPath != "" {
			if repository != oc.RepositoryPath && !strings.HasPrefix(repository, oc.RepositoryPath+"/") {
				continue
			}
			n = strings.Count(oc.RepositoryPath, "/") + 1
		}
		if n > bestLen {
			best, bestLen = oc, n
		}
	}
	return best, bestLen >= 0
}

// Summary lists the files read, for messages.
func (c *Config) Summary() string {
	if len(c.Files) == 0 {
		return "no CLI configuration file found"
	}
	var ps []string
	for _, f := range c.Files {
		ps = append(ps, f.Path)
	}
	return strings.Join(ps, ", ")
}
