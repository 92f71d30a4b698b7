package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
)

type outdatedRow struct{ Provider, Version, Status, Newest, Source, Detail string }

func outdatedRows(t *testing.T, r result) []outdatedRow {
	t.Helper()
	var rows []outdatedRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("outdated --json: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	return rows
}

// rowsText is "VERSION STATUS" for each row, in order.
func rowsText(rows []outdatedRow) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Version+" "+r.Status)
	}
	return strings.Join(out, ", ")
}

// outdated compares a mirror with each provider's origin registry (or
// --source): the releases it lacks that --version wants are missing (exit
// 1), and those newer than its newest that it does not want are newer.
func TestOutdated(t *testing.T) {
	var versions []registrytest.Version
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0", "2.1.0-beta1"} {
		versions = append(versions, registrytest.Version{Version: v, Archives: map[string][]byte{
			"linux_amd64": backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, "linux_amd64"), ""),
		}})
	}
	reg := registrytest.New(t, registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: versions})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, reg.CertPEM(), 0o644)
	env := cleanEnv(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	if r := run(t, env, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", "1.0.0", "--ca-cert", ca); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r := run(t, env, "outdated", mirror, "--ca-cert", ca, "--json")
	rows := outdatedRows(t, r)
	if r.code != 1 || rowsText(rows) != "2.1.0-beta1 newer, 2.0.0 missing, 1.1.0 missing" {
		t.Fatalf("outdated: exit %d, rows %s\n%s", r.code, rowsText(rows), r.stderr)
	}
	if row := rows[1]; row.Provider != reg.Host()+"/acme/alpha" || row.Newest != "1.0.0" || row.Source != "registry://"+reg.Host() {
		t.Errorf("row %+v", row)
	}

	r = run(t, env, "outdated", mirror, "--ca-cert", ca, "-v", "~> 1.0", "--json")
	if rows := outdatedRows(t, r); r.code != 1 || rowsText(rows) != "2.1.0-beta1 newer, 2.0.0 newer, 1.1.0 missing" {
		t.Fatalf("outdated -v ~> 1.0: exit %d, rows %s", r.code, rowsText(rows))
	}
	r = run(t, env, "outdated", mirror, "--ca-cert", ca, "-v", "1.0.0")
	if r.code != 0 || !hasLineWith(r.stdout, "newer", "2.0.0", "1.0.0") || !strings.Contains(r.stderr, "3 newer") {
		t.Fatalf("outdated -v 1.0.0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// --source: another mirror, for every provider.
	other := sourceMirror(t, backendtest.Seeds(t, []string{reg.Host() + "/acme/alpha"}, []string{"1.0.0", "3.0.0"}, []string{"linux_amd64"}))
	r = run(t, env, "outdated", mirror, "--source", other, "--json")
	if rows := outdatedRows(t, r); r.code != 1 || rowsText(rows) != "3.0.0 missing" || rows[0].Source != other {
		t.Fatalf("outdated --source: exit %d, rows %+v", r.code, rows)
	}
	// An upstream that cannot be read is a row of its own, and a problem.
	r = run(t, env, "outdated", mirror, "--source", "registry://127.0.0.1:1", "--json")
	if rows := outdatedRows(t, r); r.code != 1 || len(rows) != 1 || rows[0].Status != "error" || !strings.Contains(rows[0].Detail, "127.0.0.1:1") {
		t.Fatalf("outdated from an unreachable source: exit %d, rows %+v", r.code, rows)
	}
	// Up to date.
	if r := run(t, env, "sync", "registry://"+reg.Host(), mirror, "-p", "acme/alpha", "-v", ">= 1.1.0", "--ca-cert", ca); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, env, "outdated", mirror, "--ca-cert", ca)
	if r.code != 0 || strings.Contains(r.stdout, "missing") {
		t.Fatalf("outdated after the sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "outdated", mirror, "--source", "ftp://x"); r.code != 2 {
		t.Fatalf("outdated --source ftp://x: exit %d, want 2\n%s", r.code, r.stderr)
	}
}
