package spec_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/spec"
)

func openFS(ctx context.Context, arg string) (backends.Reader, error) {
	return fs.Open(arg, arg, fs.Options{Create: true})
}

// Wanted resolves provider blocks and configurations against the source:
// each ask pins what it selects there (a constraint's versions, "latest N",
// a lock file's version with its hashes), the union per provider; what
// cannot be had is a problem naming who asked; denied providers are left out
// with a note. Plan then plans each destination, and a sync of the plans
// lands exactly the pinned versions.
func TestWantedAndPlan(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	upstream := filepath.Join(root, "upstream")
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/acme/beta", "example.com/acme/gamma"},
		[]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}, []string{"linux_amd64", "darwin_arm64"})
	backendtest.WritePacked(t, upstream, seeds)
	tree(t, root, map[string]string{
		"infra/main.tf": `terraform {
  required_providers {
    alpha = { source = "example.com/acme/alpha", version = "~> 1.0" }
    gamma = { source = "example.com/acme/gamma" }
    delta = { source = "example.com/acme/delta" }
  }
}
`,
		"infra/.terraform.lock.hcl": fmt.Sprintf(`provider "example.com/acme/alpha" {
  version = "1.1.0"
  hashes  = ["zh:%s"]
}
`, strings.Repeat("0", 64)),
		"app/main.tf": `terraform {
  required_providers {
    beta = { source = "example.com/acme/beta", version = "~> 9.0" }
  }
}
`,
	})
	p := writeSpec(t, root, `
destinations = ["./dst"]
source       = "./upstream"
platforms    = ["linux_amd64"]
from         = ["./infra", "./app"]
deny         = ["example.com/acme/gamma"]

provider "example.com/acme/alpha" {
  versions = "latest 2"
}
provider "example.com/acme/beta" {
  versions  = "= 1.0.0"
  platforms = ["darwin_arm64", "linux_amd64"]
}
`)
	s, err := spec.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Wanted(ctx, openFS)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Destinations) != 1 || w.Destinations[0].Place != filepath.Join(root, "dst") {
		t.Fatalf("destinations: %+v", w.Destinations)
	}
	got := map[string]string{}
	for _, r := range w.Destinations[0].Providers {
		var vs []string
		for _, v := range r.Versions() {
			vs = append(vs, v.String())
		}
		got[r.Provider.Type] = strings.Join(vs, " ") + " on " + fmt.Sprint(r.Selection.Platforms)
	}
	want := map[string]string{
		// latest 2 (2.0.0, 1.2.0) and the lock file's 1.1.0.
		"alpha": "2.0.0 1.2.0 1.1.0 on [linux_amd64]",
		// = 1.0.0; app's ~> 9.0 matches nothing: a problem.
		"beta": "1.0.0 on [darwin_arm64 linux_amd64]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resolved %v, want %v", got, want)
	}
	alpha := w.Destinations[0].Providers[0]
	if from := alpha.From["1.1.0"]; len(from) != 2 || !strings.HasSuffix(from[0], "infra/main.tf:3") || !strings.HasSuffix(from[1], ".terraform.lock.hcl") {
		t.Errorf("alpha 1.1.0 asked for by %q", from)
	}
	if from := alpha.From["2.0.0"]; len(from) != 1 || from[0] != p+":8" {
		t.Errorf("alpha 2.0.0 asked for by %q", from)
	}
	var problems []string
	for _, pr := range w.Problems {
		problems = append(problems, pr.Provider.Type+": "+pr.Detail+" ["+strings.Join(pr.From, " ")+"]")
	}
	if len(problems) != 2 || !strings.Contains(problems[0], `beta: no version of example.com/acme/beta in `) || !strings.Contains(problems[0], `"latest, ~> 9.0"`) ||
		!strings.Contains(problems[0], "app/main.tf:3") || !strings.Contains(problems[1], "delta") || !strings.Contains(problems[1], "infra/main.tf:5") {
		t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if len(w.Notes) != 1 || !strings.Contains(w.Notes[0], "example.com/acme/gamma: left out: deny example.com/acme/gamma") {
		t.Errorf("notes: %q", w.Notes)
	}

	dst, err := fs.Open("dst", filepath.Join(root, "dst"), fs.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	planned, err := spec.Plan(ctx, w.Destinations[0], dst, sync.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var plans []*sync.Plan
	for _, pl := range planned {
		if pl.Err != nil {
			t.Fatalf("%s: %v", pl.Provider, pl.Err)
		}
		plans = append(plans, pl.Plan)
	}
	sum := sync.Sync(ctx, engine.NewEngine(ctx, engine.Options{Jobs: 2}), dst, false, sinkFunc(func(engine.Event) {}), plans...)
	var held []string
	for _, p := range sum.Held {
		held = append(held, p.String())
	}
	// alpha 1.1.0 fails: the lock file's hash matches no archive.
	if sum.Done != 4 || len(sum.Failed) != 1 || sum.Failed[0].Info.Package.Version.String() != "1.1.0" {
		t.Errorf("sync: done %d, failed %d; held %q", sum.Done, len(sum.Failed), held)
	}
}

type sinkFunc func(engine.Event)

func (f sinkFunc) Show(ev engine.Event) { f(ev) }
