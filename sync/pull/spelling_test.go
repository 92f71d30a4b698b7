package pull

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/idna"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// A deny pattern refuses its registry's provider however a client spells
// the hostname in a path: case, punycode, :443, another port; a trailing
// dot is no provider address at all (nothing is asked of any upstream).
func TestDenyMatchesEverySpelling(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.hcl")
	os.WriteFile(file, []byte(`deny = ["registry.example.com/acme/alpha", "bücher.example/acme/alpha"]`+"\n"), 0o644)
	s, err := spec.LoadPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	pol := &Policy{Spec: s}
	for _, host := range []string{"registry.example.com", "REGISTRY.Example.COM", "registry.example.com:443",
		"registry.example.com:8443", "Registry.Example.Com:8443", "xn--bcher-kva.example", "BÜCHER.example:8443"} {
		h := host
		if u, err := idna.Lookup.ToUnicode(h); err == nil {
			h = u // as the handler reads a path's hostname
		}
		p, err := backends.NewProvider(h, "acme", "alpha")
		if err != nil {
			t.Errorf("%s: %v", host, err)
			continue
		}
		if why := pol.provider(p); !strings.Contains(why, "deny") {
			t.Errorf("%s/acme/alpha: not refused (%q)", host, why)
		}
		if why := pol.provider(backends.Provider{Hostname: p.Hostname, Namespace: "acme", Type: "beta"}); why != "" {
			t.Errorf("%s/acme/beta is refused too: %q", host, why)
		}
	}
	if _, err := backends.NewProvider("registry.example.com.", "acme", "alpha"); err == nil {
		t.Error("a hostname with a trailing dot makes a provider address")
	}
}
