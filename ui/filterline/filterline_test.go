package filterline_test

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/tfmirror/tfmirror/ui/filterline"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func TestFilterLine(t *testing.T) {
	keys := filterline.DefaultKeyMap()
	styles := theme.New()
	f := filterline.New(&styles, "filter")
	if f.Shown() || f.Typing() || f.View(lipgloss.Style{}) != "" {
		t.Fatal("a new line is not hidden")
	}
	f.Start()
	var changed bool
	for _, r := range "aws" {
		f, changed, _ = f.Update(tea.KeyPressMsg{Code: r, Text: string(r)}, keys)
		if !changed {
			t.Fatalf("typing %q did not change the filter", r)
		}
	}
	f, changed, _ = f.Update(tea.KeyPressMsg{Code: tea.KeyEnter}, keys)
	if changed || f.Typing() || f.Value() != "aws" || !f.Shown() || f.View(lipgloss.Style{}) != "/aws" {
		t.Fatalf("after enter: typing=%v value=%q view=%q", f.Typing(), f.Value(), f.View(lipgloss.Style{}))
	}
	f.Start()
	f, changed, _ = f.Update(tea.KeyPressMsg{Code: tea.KeyEscape}, keys)
	if !changed || f.Typing() || f.Value() != "" || f.Shown() {
		t.Fatalf("after esc: changed=%v typing=%v value=%q", changed, f.Typing(), f.Value())
	}
}
