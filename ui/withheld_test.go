package ui

import (
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
)

// TestDetailsSayWhatProvidersV1Withholds: of a directory that keeps the
// provenance (signed SHA256SUMS) of one version of a provider and not of
// another, Details of the other's cell say that serve's providers.v1 does
// not offer it and why; the signed version's cell says nothing of it.
func TestDetailsSayWhatProvidersV1Withholds(t *testing.T) {
	dir := t.TempDir()
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "2.0.0"}, []string{"linux_amd64"})
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open("./mirror", dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	signed := backendtest.Versions(seeds)[0]
	if signed[0].Package.Version.String() != "1.0.0" {
		t.Fatalf("the seeds begin with %s", signed[0].Package)
	}
	if err := m.WriteProvenance(t.Context(), signed[0].Package.Provider, signed[0].Package.Version, backendtest.NewSigner(t, "acme").Provenance(t, signed)); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Mirrors: []Mirror{{Reader: m, Kind: "fs"}}}, 160, 48)
	h.until("load", loaded)
	h.press("enter")
	const note = "not offered through"
	h.gotoCell("2.0.0", "linux_amd64")
	if s := h.screen(); !strings.Contains(s, note) || !strings.Contains(s, "signed SHA256SUMS kept") {
		t.Errorf("Details of 2.0.0 do not say that providers.v1 leaves it out, and why:\n%s", s)
	}
	h.gotoCell("1.0.0", "linux_amd64")
	if s := h.screen(); strings.Contains(s, note) {
		t.Errorf("Details of the signed 1.0.0 say it is left out:\n%s", s)
	}
}
