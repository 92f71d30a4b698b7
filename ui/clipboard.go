package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// copyNext copies to the terminal's clipboard (OSC 52, which terminals
// pass on to the system's, also over SSH) the next of what Details shows
// that can be copied: each press of y the next hash of the cell under the
// cursor, or the next place's location of a module version.
func (m *Model) copyNext() tea.Cmd {
	items := m.details.Copyables()
	if len(items) == 0 {
		m.setStatus(statusInfo, "nothing to copy here: y copies the hashes Details shows for the cell under the cursor")
		return nil
	}
	if subject := m.details.Subject(); subject != m.copySubject {
		m.copySubject, m.copyNextAt = subject, 0
	}
	it := items[m.copyNextAt%len(items)]
	m.copyNextAt++
	what := fmt.Sprintf("%s (%s)", it.Text, it.About)
	if strings.Contains(it.Text, "\n") {
		what = it.About // a block of lines: named, not shown
	}
	m.setStatus(statusInfo, fmt.Sprintf("copied %s, %d of %d; y: the next", what, (m.copyNextAt-1)%len(items)+1, len(items)))
	return tea.SetClipboard(it.Text)
}
