package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
)

// specMirror writes a mirror spec into dir: its destination is mirror, its
// source upstream, and it wants alpha ~> 1.1 and gamma for linux_amd64.
func specMirror(t *testing.T, dir, mirror, upstream string) string {
	t.Helper()
	p := filepath.Join(dir, "mirror.hcl")
	os.WriteFile(p, []byte(`
destinations = [`+quote(mirror)+`]
source       = `+quote(upstream)+`
platforms    = ["linux_amd64"]

provider "example.com/acme/alpha" {
  versions = "~> 1.1"
}
provider "example.com/acme/gamma" {
  versions = ">= 1.0"
}
`), 0o644)
	return p
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// prune --spec removes what the spec does not want of its destination:
// versions outside its constraints, platforms it does not name, providers
// it does not name (unless locked); outdated --spec compares the mirror with
// the spec's sources and versions, the providers it lacks included.
func TestPruneAndOutdatedWithSpec(t *testing.T) {
	upstream := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/gamma"},
		[]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	mirror := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta"},
		[]string{"1.0.0", "1.1.0", "1.2.0"}, []string{"linux_amd64", "darwin_arm64"}))
	dir := t.TempDir()
	specFile := specMirror(t, dir, mirror, upstream)
	configs := t.TempDir()
	lockFile(t, filepath.Join(configs, ".terraform.lock.hcl"), map[string]string{"example.com/acme/beta": "1.0.0"})

	r := run(t, nil, "prune", mirror, "--spec", specFile, "--keep-locked", configs)
	if r.code != 0 || !strings.Contains(r.stderr, "8 remove, 4 keep") ||
		!hasLineWith(r.stdout, "remove", "alpha", "1.0.0", "linux_amd64", "does not want it (it wants 1.2.0, 1.1.0)") ||
		!hasLineWith(r.stdout, "remove", "alpha", "1.2.0", "darwin_arm64", "it wants the platforms linux_amd64") ||
		!hasLineWith(r.stdout, "remove", "beta", "1.1.0", "linux_amd64", "it wants no version of example.com/acme/beta") ||
		!hasLineWith(r.stdout, "keep", "beta", "1.0.0", "locked by") ||
		!hasLineWith(r.stdout, "keep", "alpha", "1.2.0", "linux_amd64", "wanted by spec "+specFile) {
		t.Fatalf("prune --spec plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "prune", mirror, "--spec", specFile, "--keep-locked", configs, "--yes"); r.code != 0 {
		t.Fatalf("prune --spec --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := strings.Join(held(t, mirror), "\n")
	want := "example.com/acme/alpha 1.1.0 linux_amd64\nexample.com/acme/alpha 1.2.0 linux_amd64\nexample.com/acme/beta 1.0.0 darwin_arm64\nexample.com/acme/beta 1.0.0 linux_amd64"
	if got != want {
		t.Fatalf("after prune --spec the mirror holds\n%s\nwant\n%s", got, want)
	}

	r = run(t, nil, "outdated", mirror, "--spec", specFile, "--json")
	rows := outdatedRows(t, r)
	var text []string
	for _, row := range rows {
		text = append(text, row.Provider+" "+row.Version+" "+row.Status)
	}
	if r.code != 1 || strings.Join(text, ", ") != "example.com/acme/alpha 2.0.0 newer, example.com/acme/gamma 2.0.0 missing, example.com/acme/gamma 1.2.0 missing, example.com/acme/gamma 1.1.0 missing, example.com/acme/gamma 1.0.0 missing" {
		t.Fatalf("outdated --spec: exit %d\n%s\n%s", r.code, strings.Join(text, "\n"), r.stderr)
	}

	// A spec whose source cannot be read says so, and prune keeps what it
	// cannot judge.
	broken := specMirror(t, t.TempDir(), mirror, "registry://127.0.0.1:1")
	r = run(t, nil, "prune", mirror, "--spec", broken)
	if r.code != 0 || !strings.Contains(r.stderr, "2 remove, 2 keep") || !hasLineWith(r.stdout, "keep", "alpha", "1.1.0", "cannot say which versions it wants") {
		t.Fatalf("prune --spec with an unreadable source: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The place must be one of the spec's destinations.
	other := t.TempDir()
	for _, args := range [][]string{{"prune", other, "--spec", specFile}, {"outdated", other, "--spec", specFile}, {"outdated", mirror, "--spec", specFile, "--source", upstream}} {
		if r := run(t, nil, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}
