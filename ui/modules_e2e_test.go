package ui

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// TestModulesEndToEnd runs the UI as a program in a fixed-size virtual
// terminal over provider mirrors and module places: a real module registry
// over TLS and a directory. Switch to Modules, queue a version the directory
// lacks, watch the job land and the directory's column turn present; the
// zip is then on disk.
func TestModulesEndToEnd(t *testing.T) {
	w := newWorld(t)
	mw := newModWorld(t)
	cfg := w.config()
	cfg.Modules = mw.config()
	tm, waitFor, press := newProgram(t, cfg)

	waitFor("acme/cloud", "m modules")
	press("m")
	waitFor("acme/network/aws", "registry://example.com", "0.9.0", listed)
	press("enter") // into the versions: the cursor is on 2.0.0, which the directory lacks
	press("enter")
	waitFor("1 to fetch and pack")
	press("enter")
	waitFor("1 done", "network/aws 2.0.0 → 2", "zh ✓")
	// The directory is listed again and Details says it holds 2.0.0.
	waitFor("[2] ◇ ./modules")

	press("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(e2eWait)).(Model)
	if c := final.jobs.Tracker().Counts(); c[engine.Done] != 1 {
		t.Errorf("final model: jobs %v", c)
	}
	if got := strings.Join(moduleMarksAt(t, final, "2.0.0"), ""); got != "◇◇" {
		t.Errorf("final model: 2.0.0 marks %s, want present in both", got)
	}
	zr, err := zip.OpenReader(mw.zipPath("2.0.0"))
	if err != nil {
		t.Fatalf("the package is not in the directory: %v", err)
	}
	defer zr.Close()
	found := false
	for _, f := range zr.File {
		if f.Name == "main.tf" {
			found = true
		}
	}
	if !found {
		t.Errorf("the zip lacks main.tf")
	}
	filepath.WalkDir(mw.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}
