package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/backends/serveauth"
)

// providers.v1 under serve --auth: terraform init and tofu init with only
// a host block and the token in a credentials block for the provider's
// hostname install through the mirror's registry protocol; without the
// token they fail with their own unauthorized message.
func TestProvidersV1UnderAuth(t *testing.T) {
	clients := pullClients(t)
	w := newPullWorld(t, registrytest.Faults{})
	const tok = "tok-REG-0123456789"
	tokens := filepath.Join(t.TempDir(), "tokens.hcl")
	os.WriteFile(tokens, []byte(fmt.Sprintf("token \"ci\" {\n  sha256    = %q\n  providers = [\"127.0.0.1/acme/*\"]\n}\n", serveauth.HashToken(tok))), 0o644)
	cache := filepath.Join(t.TempDir(), "cache")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--auth", tokens)
	caPEM, _ := os.ReadFile(cert)
	withToken := hostBlock(url, "127.0.0.1") + fmt.Sprintf("credentials %q {\n  token = %q\n}\n", "127.0.0.1", tok)
	for name, bin := range clients {
		work := pullConfig(t)
		out, err := runClient(t, bin, caPEM, withToken, work, "init", "-input=false", "-no-color")
		if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
			t.Errorf("%s init through providers.v1 with the token: %v\n%s", name, err, out)
		}
		out, err = runClient(t, bin, caPEM, hostBlock(url, "127.0.0.1"), pullConfig(t), "init", "-input=false", "-no-color")
		if err == nil {
			t.Errorf("%s init through providers.v1 without the token succeeded\n%s", name, out)
		} else {
			t.Logf("%s without the token:\n%s", name, lastLines(out, 6))
		}
	}
	if log := stop(); t.Failed() {
		t.Logf("serve:\n%s", log)
	}
}

// modules.v1 under serve --auth: terraform init and tofu init of the
// module world's configuration, with only a host block and the token in a
// credentials block for the registry's hostname, install the modules and
// the provider through the mirror (the package URL X-Terraform-Get names
// is signed for the token: neither client sends it there); without the
// token they fail.
func TestModulesV1UnderAuth(t *testing.T) {
	clients := pullClients(t)
	w := newModuleWorld(t)
	const tok = "tok-MOD-0123456789"
	tokens := filepath.Join(t.TempDir(), "tokens.hcl")
	os.WriteFile(tokens, []byte(fmt.Sprintf("token \"ci\" {\n  sha256    = %q\n  providers = [\"127.0.0.1/acme/*\"]\n  modules   = [\"127.0.0.1/acme/*/*\"]\n}\n", serveauth.HashToken(tok))), 0o644)
	cache, modcache := filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "modules")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--modules", modcache, "--auth", tokens)
	caPEM, _ := os.ReadFile(cert)
	withToken := hostBlock(url, "127.0.0.1") + fmt.Sprintf("credentials %q {\n  token = %q\n}\n", "127.0.0.1", tok)
	for name, bin := range clients {
		work := t.TempDir()
		writeFile(t, work, "main.tf", modConfig)
		out, err := runClient(t, bin, caPEM, withToken, work, "init", "-input=false", "-no-color")
		if err != nil {
			t.Errorf("%s init of modules through the mirror with the token: %v\n%s", name, err, out)
		} else if got, want := installedModules(t, work), []string{"app", "app.net", "git", "sub"}; !slices.Equal(got, want) {
			t.Errorf("%s installed modules %v, want %v", name, got, want)
		}
		work = t.TempDir()
		writeFile(t, work, "main.tf", modConfig)
		if out, err := runClient(t, bin, caPEM, hostBlock(url, "127.0.0.1"), work, "init", "-input=false", "-no-color"); err == nil {
			t.Errorf("%s init of modules without the token succeeded\n%s", name, out)
		}
	}
	if log := stop(); t.Failed() {
		t.Logf("serve:\n%s", log)
	}
}
