package modlist

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func mods(t *testing.T, addrs ...string) []modules.Module {
	t.Helper()
	var out []modules.Module
	for _, a := range addrs {
		m, err := modules.ParseModule(a, "")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestList(t *testing.T) {
	s := theme.New()
	m := New(&s)
	m.SetSize(40, 5)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "--module") {
		t.Errorf("an empty list should say how to fill it: %q", v)
	}
	ms := mods(t, "a.example/acme/net/aws", "b.example/acme/net/aws", "a.example/acme/dns/gcp")
	m.SetModules(ms)
	m.SetNote(ms[1], "2.0.0")
	v := ansi.Strip(m.View())
	// Two hosts share acme/net/aws: both are named in full.
	for _, want := range []string{"▸a.example/acme/net/aws", " b.example/acme/net/aws", "2.0.0", " acme/dns/gcp"} {
		if !strings.Contains(v, want) {
			t.Errorf("list lacks %q:\n%s", want, v)
		}
	}
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	m, _ = m.Update(down)
	m, _ = m.Update(down)
	m, _ = m.Update(down) // past the end
	if got, _ := m.Selected(); got != ms[2] {
		t.Errorf("selected %s, want the last", got)
	}
	// Replacing the list keeps the cursor on the same module and its note.
	m.SetModules([]modules.Module{ms[2], ms[1]})
	if got, _ := m.Selected(); got != ms[2] || m.Title() != "Modules 2" {
		t.Errorf("after SetModules: selected %s, title %q", got, m.Title())
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "acme/net/aws") || !strings.Contains(v, "2.0.0") {
		t.Errorf("the note was lost:\n%s", v)
	}
}
