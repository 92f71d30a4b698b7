package cli

import (
	"strings"
	"testing"
)

// TestCLILsProviderAddressHints: a provider's address given where a place
// goes (no such directory) is a usage error that says how to name its
// registry.
func TestCLILsProviderAddressHints(t *testing.T) {
	r := run(t, cleanEnv(t), "ls", "registry.terraform.io/hashicorp/aws")
	if r.code != 2 || !strings.Contains(r.stderr, "registry://registry.terraform.io -p hashicorp/aws") {
		t.Errorf("ls HOST/NS/TYPE: exit %d, want 2 and the registry:// hint:\n%s", r.code, r.stderr)
	}
}
