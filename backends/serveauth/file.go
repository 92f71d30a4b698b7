// Package serveauth decides who may use `tfmirror serve`: bearer tokens
// from a file (stored as SHA-256 hashes, each with a name and the
// providers and modules it may read), and client certificates signed by
// a given CA. Its Handler wraps everything serve answers.
package serveauth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/hclinput"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// DefaultRegistry is the hostname of a provider pattern written
// NAMESPACE/TYPE.
const DefaultRegistry = "registry.terraform.io"

// Token is one token a file allows: its name (what logs and metrics
// say), the SHA-256 of the token, and what it may read.
type Token struct {
	Name      string
	Hash      [sha256.Size]byte
	Providers []cliconfig.Pattern
	Modules   []modules.Pattern
}

// Tokens are a file's tokens, by hash.
type Tokens map[[sha256.Size]byte]*Token

// HashToken is the SHA-256 a file stores for token, in hex.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

type fileBody struct {
	Tokens []struct {
		Name      string   `hcl:"name,label"`
		SHA256    string   `hcl:"sha256"`
		Providers []string `hcl:"providers,optional"`
		Modules   []string `hcl:"modules,optional"`
	} `hcl:"token,block"`
}

// Load reads a tokens file (HCL):
//
//	token "ci" {
//	  sha256    = "<hex SHA-256 of the token>"
//	  providers = ["registry.terraform.io/hashicorp/*"]
//	  modules   = ["app.corp/platform/*/*"]
//	}
//
// A token reads nothing its patterns do not name. Errors name the file
// and line; they never quote a hash.
func Load(path string) (Tokens, error) {
	t, _, err := load(path)
	return t, err
}

// load is Load, also returning the file's bytes.
func load(path string) (Tokens, []byte, error) {
	b, err := regular.ReadFile(path, 1<<20)
	if err != nil {
		return nil, nil, fmt.Errorf("--auth: %w", err)
	}
	t, err := parseFile(path, b)
	return t, b, err
}

func parseFile(path string, b []byte) (Tokens, error) {
	f, diags := hclparse.NewParser().ParseHCL(b, path)
	var body fileBody
	if !diags.HasErrors() {
		diags = append(diags, gohcl.DecodeBody(f.Body, nil, &body)...)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("--auth %s", hclinput.Message(diags, true))
	}
	out := Tokens{}
	names := map[string]bool{}
	for _, t := range body.Tokens {
		at := fmt.Sprintf("%s: token %q", path, t.Name)
		tok, err := parseToken(t.Name, t.SHA256, t.Providers, t.Modules)
		if err != nil {
			return nil, fmt.Errorf("--auth %s: %v", at, err)
		}
		if names[t.Name] {
			return nil, fmt.Errorf("--auth %s: a second token of that name", at)
		}
		if out[tok.Hash] != nil {
			return nil, fmt.Errorf("--auth %s: the same token as %q", at, out[tok.Hash].Name)
		}
		names[t.Name] = true
		out[tok.Hash] = tok
	}
	return out, nil
}

func parseToken(name, sum string, provs, mods []string) (*Token, error) {
	if name == "" || backends.Printable(name) != name || strings.ContainsAny(name, " \n\t\"") {
		return nil, fmt.Errorf("a token's name is a word without spaces, quotes or control characters")
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(sum), "sha256:"))
	if err != nil || len(raw) != sha256.Size {
		return nil, fmt.Errorf(`sha256: want the 64 hex digits of the token's SHA-256 (printf %%s "$TOKEN" | sha256sum), never the token`)
	}
	t := &Token{Name: name}
	copy(t.Hash[:], raw)
	for _, s := range provs {
		p, err := cliconfig.ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("providers: %v", err)
		}
		if p.Hostname == "" {
			p.Hostname = DefaultRegistry
		}
		t.Providers = append(t.Providers, p)
	}
	for _, s := range mods {
		m, err := modules.ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("modules: %v", err)
		}
		t.Modules = append(t.Modules, m)
	}
	return t, nil
}
