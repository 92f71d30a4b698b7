package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
)

// specModuleRow is a module row of diff --spec --json.
type specModuleRow struct {
	Module, Version, Status, Detail, Destination, Source string
	From                                                 []string
	Provider                                             *string
}

// A spec's module blocks, synced from a real module registry into the
// distribution registry: allow and deny patterns of four parts leave
// modules out (a denied one, one no allow pattern matches), with a note
// each; diff --spec --json lists the versions each block wants, missing,
// then present after sync --spec; the sync's one summary counts them, and a
// second sync moves nothing and uploads nothing.
func TestSpecModulesToOCI(t *testing.T) {
	w := newModuleCLIWorld(t)
	host := w.reg.Host()
	w.reg.Add("acme/dns/aws", "1.0.0", modulestest.Download{Location: "/archives/net-1.0.0.zip"})
	w.reg.Add("acme/vpc/gcp", "1.0.0", modulestest.Download{Location: "/archives/net-1.0.0.zip"})
	dir := t.TempDir()
	specPath := writeFile(t, dir, "mirror.hcl", fmt.Sprintf(`allow = ["%[1]s/acme/*/aws"]
deny  = ["%[1]s/acme/dns/*"]

module "%[1]s/acme/net/aws" {
  versions    = ">= 1.0, < 1.2"
  destination = %[2]q
}
module "%[1]s/acme/dns/aws" {
  versions    = "latest"
  destination = %[2]q
}
module "%[1]s/acme/vpc/gcp" {
  versions    = "latest"
  destination = %[2]q
}
`, host, w.template()))
	diffRows := func(wantCode int) []string {
		t.Helper()
		d := run(t, w.env, "diff", "--spec", specPath, "--json")
		if d.code != wantCode {
			t.Fatalf("diff --spec --json: exit %d, want %d\n%s%s", d.code, wantCode, d.stdout, d.stderr)
		}
		var rows []specModuleRow
		if err := json.Unmarshal([]byte(d.stdout), &rows); err != nil {
			t.Fatalf("diff --spec --json: %v\n%s", err, d.stdout)
		}
		var out []string
		for _, r := range rows {
			if r.Provider != nil || r.Destination != w.template() || r.Source != "registry://"+host || len(r.From) != 1 || r.From[0] != specPath+":4" {
				t.Errorf("module row %+v", r)
			}
			out = append(out, r.Status+" "+strings.TrimPrefix(r.Module, host+"/")+" "+r.Version)
		}
		sort.Strings(out)
		for _, n := range []string{"module " + host + "/acme/dns/aws: left out: deny " + host + "/acme/dns/*", "module " + host + "/acme/vpc/gcp: left out: no allow pattern"} {
			if !strings.Contains(d.stderr, n) {
				t.Errorf("diff --spec says nothing of %q:\n%s", n, d.stderr)
			}
		}
		return out
	}
	if got := strings.Join(diffRows(1), ", "); got != "missing acme/net/aws 1.0.0, missing acme/net/aws 1.1.0" {
		t.Errorf("diff before sync: %s", got)
	}

	r := run(t, w.env, "sync", "--spec", specPath, "--json")
	if r.code != 0 {
		t.Fatalf("sync --spec: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if sum := lastJSON(t, r.stdout); sum["type"] != "summary" || sum["done"] != float64(2) || sum["ok"] != true {
		t.Errorf("summary %v: want the two versions of acme/net/aws done", sum)
	}
	ls := run(t, w.env, "ls", w.template(), "--module", host+"/acme/net/aws", "--json")
	var held []map[string]string
	if err := json.Unmarshal([]byte(ls.stdout), &held); err != nil {
		t.Fatalf("decoding ls.stdout: %v\n%s", err, ls.stdout)
	}
	if len(held) != 2 || held[0]["version"] != "1.1.0" || held[1]["version"] != "1.0.0" {
		t.Errorf("the OCI mirror holds %v, want acme/net/aws 1.1.0 and 1.0.0\n%s", held, ls.stderr)
	}
	for _, left := range []string{"acme/dns/aws", "acme/vpc/gcp"} {
		if ls := run(t, w.env, "ls", w.template(), "--module", host+"/"+left); ls.code == 0 {
			t.Errorf("%s was mirrored although left out:\n%s", left, ls.stdout)
		}
	}

	w.oci.ResetRequests()
	r = run(t, w.env, "sync", "--spec", specPath, "--json")
	if r.code != 0 {
		t.Fatalf("second sync --spec: exit %d\n%s", r.code, r.stderr)
	}
	if sum := lastJSON(t, r.stdout); sum["done"] != float64(0) || sum["present"] != float64(2) {
		t.Errorf("second sync summary %v: want nothing done, 2 present", sum)
	}
	if n := w.oci.BlobUploads() + w.oci.Count(http.MethodPut, "/manifests/"); n != 0 {
		t.Errorf("second sync uploaded %d times", n)
	}
	if got := strings.Join(diffRows(0), ", "); got != "present acme/net/aws 1.0.0, present acme/net/aws 1.1.0" {
		t.Errorf("diff after sync: %s", got)
	}
	if d := run(t, w.env, "diff", "--spec", specPath); d.code != 0 || !strings.Contains(d.stdout, "module "+host+"/acme/net/aws") {
		t.Errorf("diff --spec (text): exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// TestSpecModulesShareOneRepository: two module blocks whose destination
// template maps them to one OCI repository are refused by diff --spec,
// sync --spec and its dry run as sync --module refuses them (the same
// message, exit 2), before the registry receives a request.
func TestSpecModulesShareOneRepository(t *testing.T) {
	w := newModuleCLIWorld(t)
	host := w.reg.Host()
	w.reg.Add("acme/vpc/aws", "1.0.0", modulestest.Download{Location: "/archives/net-1.0.0.zip"})
	dst := "oci://" + w.oci.Host() + "/one/repo"
	specPath := writeFile(t, t.TempDir(), "mirror.hcl", fmt.Sprintf(`module "%[1]s/acme/net/aws" {
  versions    = "1.0.0"
  destination = %[2]q
}
module "%[1]s/acme/vpc/aws" {
  versions    = "1.0.0"
  destination = %[2]q
}
`, host, dst))
	want := run(t, w.env, "sync", "registry://"+host, dst, "--module", "acme/net/aws", "--module", "acme/vpc/aws", "-v", "1.0.0")
	if want.code != 2 || !strings.Contains(want.stderr, "would share the repository one/repo") {
		t.Fatalf("sync --module: exit %d\n%s", want.code, want.stderr)
	}
	w.oci.ResetRequests()
	for _, args := range [][]string{
		{"diff", "--spec", specPath},
		{"diff", "--spec", specPath, "--json"},
		{"sync", "--spec", specPath, "--dry-run"},
		{"sync", "--spec", specPath},
	} {
		r := run(t, w.env, args...)
		if r.code != 2 || strings.TrimSpace(r.stderr) != strings.TrimSpace(want.stderr) {
			t.Errorf("%v: exit %d, stderr\n%s\nwant exit 2 and\n%s", args, r.code, r.stderr, want.stderr)
		}
	}
	if reqs := w.oci.Requests(); len(reqs) != 0 {
		t.Errorf("the OCI registry was asked %v", reqs)
	}
}
