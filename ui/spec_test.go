package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// specWorld writes a spec over the demo world (source ./primary,
// destination ./secondary) and resolves it as tfmirror ui --spec does:
// the places it opens are the UI's mirrors, the destination first, each
// named as the spec writes it.
func specWorld(t *testing.T) (world, Config) {
	t.Helper()
	w := newWorld(t)
	file := filepath.Join(w.Dir, "mirror.hcl")
	src := `destinations = ["./secondary"]
source       = "./primary"
platforms    = ["darwin_arm64", "linux_amd64"]

provider "registry.terraform.io/acme/cloud" {
  versions = "~> 2.0"
}
provider "registry.terraform.io/acme/dns" {
  versions = ">= 3.1"
}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Spec: &Spec{Path: "mirror.hcl"}}
	byArg := map[string]backends.Reader{}
	open := func(_ context.Context, arg string) (backends.Reader, error) {
		if r, ok := byArg[arg]; ok {
			return r, nil
		}
		rel, err := filepath.Rel(w.Dir, arg)
		if err != nil {
			return nil, err
		}
		r, err := fs.Open("./"+rel, arg, fs.Options{})
		if err != nil {
			return nil, err
		}
		byArg[arg] = r
		cfg.Mirrors = append(cfg.Mirrors, Mirror{Reader: r, Kind: "fs"})
		return r, nil
	}
	for _, d := range sp.Destinations {
		if _, err := open(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Spec.Wanted, err = sp.Wanted(t.Context(), open); err != nil {
		t.Fatal(err)
	}
	for _, d := range cfg.Spec.Wanted.Destinations {
		cfg.Spec.Dests = append(cfg.Spec.Dests, slices.IndexFunc(cfg.Mirrors, func(m Mirror) bool { return m.Reader == byArg[d.Place] }))
	}
	return w, cfg
}

// TestSpecMatrix opens the UI on a spec: the destination is compared, the
// source is not, and the matrix has a row for each wanted version, held or
// not, and for no other: acme/dns 3.2.0, which the destination holds no
// platform of, shows missing; 3.1.0, which it holds, present; 3.0.1, which
// it holds but the spec does not want, has no row.
func TestSpecMatrix(t *testing.T) {
	_, cfg := specWorld(t)
	h := newHarness(t, cfg, 80, 24)
	h.until("load", idle)
	h.press("down") // acme/dns
	h.until("acme/dns listed", func(m Model) bool { return m.prov().current.Type == "dns" && idle(m) })

	v := h.m.prov()
	if v.grid.GapsOnly() {
		t.Errorf("gaps only is on; a spec's rows are the versions it wants, landed or not (o hides the landed)")
	}
	if cmp := v.compared(); len(cmp) != 1 || v.places[cmp[0]].name != "./secondary" {
		t.Errorf("compared %v; want the destination ./secondary alone", cmp)
	}
	rows, plats, marks := matrixData(h.m)
	if !slices.Equal(plats, []string{"darwin_arm64", "linux_amd64"}) {
		t.Errorf("platforms %v; want the spec's", plats)
	}
	at := slices.Index(rows, "3.2.0")
	if at < 0 {
		t.Fatalf("no row for the wanted 3.2.0, which the destination lacks; rows %v", rows)
	}
	for c := range plats {
		if !slices.Equal(marks[at][c], []theme.Mark{theme.MarkMissing}) {
			t.Errorf("3.2.0 %s: marks %v; want missing in the destination", plats[c], marks[at][c])
		}
	}
	if !slices.Equal(rows, []string{"3.2.0", "3.1.0"}) || v.grid.Shown() != 2 {
		t.Errorf("rows %v (%d shown); want the wanted 3.2.0 and 3.1.0, and not 3.0.1", rows, v.grid.Shown())
	}
	golden.RequireEqual(t, []byte(h.screen()))
}

// TestSpecRowsOnceEveryGapLanded: once S has landed every gap, each
// provider's rows are still exactly the versions the spec wants, every
// cell present; no version it does not want shows up as a gap.
func TestSpecRowsOnceEveryGapLanded(t *testing.T) {
	_, cfg := specWorld(t)
	h := newHarness(t, cfg, 80, 24)
	h.until("load", idle)
	h.press("S")
	h.until("the spec's gaps planned", func(m Model) bool { return m.dialog != nil })
	h.press("enter")
	if h.m.dialog != nil {
		h.press("enter")
	}
	h.until("the gaps to land", func(m Model) bool { return jobsEnded(5)(m) && idle(m) && !m.queueActive })
	for _, tc := range []struct {
		typ  string
		want []string
	}{{"cloud", []string{"2.1.0", "2.0.0"}}, {"dns", []string{"3.2.0", "3.1.0"}}} {
		if h.m.prov().current.Type != tc.typ {
			h.press("down")
		}
		h.until("acme/"+tc.typ, func(m Model) bool { return m.prov().current.Type == tc.typ && idle(m) })
		rows, plats, marks := matrixData(h.m)
		if !slices.Equal(rows, tc.want) || h.m.prov().grid.Shown() != len(tc.want) {
			t.Errorf("acme/%s rows %v (%d shown); want the wanted %v", tc.typ, rows, h.m.prov().grid.Shown(), tc.want)
		}
		for r := range rows {
			for c := range plats {
				if slices.Contains(marks[r][c], theme.MarkMissing) {
					t.Errorf("acme/%s %s %s still missing", tc.typ, rows[r], plats[c])
				}
			}
		}
	}
}

// TestSpecQueueGaps presses S in a UI opened on a spec: the dialog
// confirms the spec's gaps (every wanted package the destination lacks,
// from the source; the one that differs is left), and once confirmed the
// jobs land them and the cells turn present.
func TestSpecQueueGaps(t *testing.T) {
	w, cfg := specWorld(t)
	tm, waitFor, press := newProgram(t, cfg)

	waitFor("acme/cloud", "S queue the spec's gaps")
	press("S")
	// acme/cloud 2.1.0 ×2, 2.0.0 darwin_arm64, acme/dns 3.2.0 ×2; 2.0.0
	// linux_amd64 differs; the rest of the 8 wanted is there.
	waitFor("8 wanted package(s) of mirror.hcl to [1] ./secondary", "5 to copy: 5 from [2] ./primary", "1 differ there: skipped")
	press("enter")
	waitFor("5 done")

	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(Model)
	tr := final.jobs.Tracker()
	if c := tr.Counts(); c[engine.Done] != 5 || len(tr.Order) != 5 {
		t.Fatalf("jobs %v (%d); want 5 done", c, len(tr.Order))
	}
	var got []string
	for _, id := range tr.Order {
		got = append(got, tr.Jobs[id].Info.Package.String())
	}
	slices.Sort(got)
	want := []string{
		"registry.terraform.io/acme/cloud 2.0.0 darwin_arm64",
		"registry.terraform.io/acme/cloud 2.1.0 darwin_arm64",
		"registry.terraform.io/acme/cloud 2.1.0 linux_amd64",
		"registry.terraform.io/acme/dns 3.2.0 darwin_arm64",
		"registry.terraform.io/acme/dns 3.2.0 linux_amd64",
	}
	if !slices.Equal(got, want) {
		t.Errorf("queued %v\nwant %v", got, want)
	}
	for _, p := range want {
		var prov, ver, plat string
		fmt.Sscan(p, &prov, &ver, &plat)
		if _, err := os.Stat(archivePath(w.Secondary, prov[len("registry.terraform.io/"):], ver, plat)); err != nil {
			t.Errorf("%s did not land: %v", p, err)
		}
	}
	// The matrix of acme/cloud (shown) no longer has its 2.1.0 gap, and
	// its rows are still the versions the spec wants.
	rows, _, marks := matrixData(final)
	if !slices.Equal(rows, []string{"2.1.0", "2.0.0"}) || final.prov().grid.Shown() != 2 {
		t.Errorf("acme/cloud rows %v (%d shown) once landed; want the wanted 2.1.0 and 2.0.0", rows, final.prov().grid.Shown())
	}
	if at := slices.Index(rows, "2.1.0"); at < 0 || slices.ContainsFunc(marks[at], func(c []theme.Mark) bool { return slices.Contains(c, theme.MarkMissing) }) {
		t.Errorf("acme/cloud 2.1.0 after the jobs: rows %v, marks %v; want present", rows, marks)
	}
}
