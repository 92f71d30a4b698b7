package backendtest

import (
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
)

// clientConfigurer: the block a place gives its clients is a CLI
// configuration the clients' own rules read as installing every provider
// asked for from the place itself (the method's place is the place's own
// name) and none of them directly, and it is the same however often it is
// asked for.
func clientConfigurer(t *testing.T, pl Place) {
	seeds := capabilitySeeds(t)
	r := pl.seeded(t, seeds)
	var ps []backends.Provider
	for _, s := range seeds {
		if len(ps) == 0 || ps[len(ps)-1] != s.Package.Provider {
			ps = append(ps, s.Package.Provider)
		}
	}
	cc := r.(backends.ClientConfigurer)
	block, _ := cc.ClientConfig(ps)
	if again, _ := cc.ClientConfig(ps); again != block {
		t.Errorf("ClientConfig gave two blocks for the same providers:\n%s\n%s", block, again)
	}
	cfg, err := cliconfig.Parse([]byte(block), "client.tfrc")
	if err != nil {
		t.Fatalf("the block does not read as a CLI configuration: %v\n%s", err, block)
	}
	if len(cfg.Installations) != 1 {
		t.Fatalf("%d provider_installation blocks, want 1:\n%s", len(cfg.Installations), block)
	}
	for _, p := range ps {
		var used *cliconfig.Method
		for i, m := range cfg.Installations[0].Methods {
			if m.Selects(p, "registry.terraform.io") {
				used = &cfg.Installations[0].Methods[i]
				break
			}
		}
		switch {
		case used == nil:
			t.Errorf("%s: no method of the block installs it:\n%s", p, block)
		case used.Kind == "Direct":
			t.Errorf("%s: the block installs it directly, not from %s:\n%s", p, r, block)
		case used.Place != r.String():
			t.Errorf("%s: the block installs it from %s, not from the place %s:\n%s", p, used.Place, r, block)
		}
	}
}
