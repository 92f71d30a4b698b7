package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// prune --spec never leaves a provider with less than the spec can have:
// the newest release (versions = "latest") cannot be mirrored for one
// platform (its zip fails its hashes at the source, so sync refuses it),
// and prune keeps the newest older version of that platform in its place,
// while removing what the release that did land replaces. Without a stand-in
// (no older version at all) nothing is invented.
func TestPruneSpecKeepsWhatAWantedVersionTheDestinationLacksWouldReplace(t *testing.T) {
	plats := []string{"linux_amd64", "darwin_arm64"}
	upstream := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0", "2.0.0"}, plats))
	// The source's 2.0.0 darwin_arm64 package is not what its index says.
	zip := filepath.Join(upstream, "example.com", "acme", "alpha", "terraform-provider-alpha_2.0.0_darwin_arm64.zip")
	b, err := os.ReadFile(zip)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(zip, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mirror := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, plats))
	dir := t.TempDir()
	specFile := filepath.Join(dir, "mirror.hcl")
	os.WriteFile(specFile, []byte(`destinations = [`+quote(mirror)+`]
source       = `+quote(upstream)+`
platforms    = ["linux_amd64", "darwin_arm64"]
provider "example.com/acme/alpha" {
  versions = "latest"
}
`), 0o644)

	if r := run(t, nil, "sync", "--spec", specFile); r.code != 1 {
		t.Fatalf("sync --spec with a bad package at the source: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := run(t, nil, "prune", mirror, "--spec", specFile)
	if r.code != 0 || !hasLineWith(r.stdout, "keep", "alpha", "1.1.0", "darwin_arm64", "wants 2.0.0, which is not here for darwin_arm64") {
		t.Fatalf("prune --spec plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "prune", mirror, "--spec", specFile, "--yes"); r.code != 0 {
		t.Fatalf("prune --spec --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := strings.Join(held(t, mirror), "\n")
	want := "example.com/acme/alpha 1.1.0 darwin_arm64\nexample.com/acme/alpha 2.0.0 linux_amd64"
	if got != want {
		t.Fatalf("after prune --spec the mirror holds\n%s\nwant\n%s", got, want)
	}
	if r := run(t, nil, "verify", mirror); r.code != 0 {
		t.Fatalf("verify after prune: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Pruned before any sync: 2.0.0 is nowhere here, 1.1.0 stays for it.
	fresh := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, plats))
	os.WriteFile(specFile, []byte(`destinations = [`+quote(fresh)+`]
source       = `+quote(upstream)+`
provider "example.com/acme/alpha" {
  versions = "latest"
}
`), 0o644)
	if r := run(t, nil, "prune", fresh, "--spec", specFile, "--yes"); r.code != 0 {
		t.Fatalf("prune --spec --yes before sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := versionsHeld(t, fresh, "example.com/acme/alpha"); got != "1.1.0" {
		t.Fatalf("pruned before sync, the mirror holds %q, want 1.1.0 (in place of 2.0.0)", got)
	}
}
