package events

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/internal/keypress"
	"github.com/tfmirror/tfmirror/ui/theme"
)

func pane(log *Log, w, h int) Model {
	s := theme.New()
	m := New(&s, log)
	m.SetSize(w, h)
	return m
}

func press(m Model, keys ...string) Model {
	for _, k := range keys {
		m, _ = m.Update(keypress.Msg(k))
	}
	return m
}

func TestLogCountsAndDedupes(t *testing.T) {
	var l Log
	l.Add(Failure, "[2] mirror ./b: open /tmp/b: no such file or directory")
	l.Add(Warning, "[1] stray file x.zip")
	l.Add(Failure, "[2] mirror ./b: open /tmp/b: no such file or directory") // again, on a refresh
	l.Add(Warning, "[1] stray file x.zip")                                   // said again: the same fact
	l.Add(Warning, "  ")
	if got := len(l.Entries()); got != 2 {
		t.Fatalf("%d entries, want 2: %+v", got, l.Entries())
	}
	if last := l.Entries()[1]; last.Kind != Failure || last.Count != 2 {
		t.Errorf("the repeated failure should move to the end, counted twice: %+v", last)
	}
	if first := l.Entries()[0]; first.Kind != Warning || first.Count != 1 {
		t.Errorf("a warning said again stays as it was: %+v", first)
	}
	if got := l.Summary(); got != "1 error · 1 warning" {
		t.Errorf("summary %q", got)
	}
	for range maxEntries + 10 {
		l.Add(Warning, "w"+strings.Repeat("x", len(l.Entries())))
	}
	if n := len(l.Entries()); n != maxEntries || l.Count(Warning)+l.Count(Failure) != maxEntries {
		t.Errorf("the log grew to %d entries (counts %d, %d), want at most %d", n, l.Count(Warning), l.Count(Failure), maxEntries)
	}
}

// An error quoting what a place sent (a file name, a server's answer) holds
// no terminal control sequence once logged: it would clear the screen
// under the UI or retitle the window.
func TestLogKeepsNoControlCharacters(t *testing.T) {
	var l Log
	l.Add(Failure, "GET https://m/x: HTTP 500: \x1b]0;pwned\x07\x1b[2Jhidden")
	if got := l.Entries()[0].Text; strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b[2Jhidden`) {
		t.Errorf("logged %q", got)
	}
}

// TestPaneShowsEveryErrorInFull: a long error wraps instead of being cut,
// the newest first, and the user can scroll to the older.
func TestPaneShowsEveryErrorInFull(t *testing.T) {
	var l Log
	long := "✗ cloud 2.0.0 linux_amd64: commit (destination ./secondary): mirror ./secondary: registry.terraform.io/acme/cloud 2.0.0 linux_amd64: destination holds a different archive (has zh:34f29ced, incoming zh:d112297c)"
	l.Add(Failure, "first")
	l.Add(Failure, long)
	m := pane(&l, 40, 6)
	v := ansi.Strip(m.View())
	if !strings.Contains(strings.ReplaceAll(v, "\n  ", " "), "(has zh:34f29ced, incoming") || !strings.HasPrefix(v, "✗ ✗ cloud 2.0.0") {
		t.Errorf("the newest error should lead, whole:\n%s", v)
	}
	if strings.Contains(v, "first") || !strings.Contains(v, "↓") {
		t.Errorf("the older event is below, with an arrow saying so:\n%s", v)
	}
	for i, line := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(line); w > 40 {
			t.Errorf("line %d is %d wide: %q", i, w, line)
		}
	}
	m = press(m, "G")
	if v := ansi.Strip(m.View()); !strings.Contains(v, "✗ first") || !strings.Contains(v, "↑") || strings.Contains(v, "↓") {
		t.Errorf("G should scroll to the oldest:\n%s", v)
	}
	m = press(m, "g")
	l.Add(Warning, "newer")
	if v := ansi.Strip(m.View()); !strings.HasPrefix(v, "! newer") {
		t.Errorf("at the top, a new event shows first:\n%s", v)
	}
	if v := ansi.Strip(pane(&Log{}, 40, 4).View()); !strings.Contains(v, "No errors") {
		t.Errorf("an empty pane says so: %q", v)
	}
}
