package details

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/ui/format"
	"github.com/tfmirror/tfmirror/ui/jobs"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// Mirror is what one mirror holds of the package.
type Mirror struct {
	Number   int
	Name     string
	Compared bool
	Mark     theme.Mark
	Archive  *backends.Archive
	// Verify is the result of recomputing the hashes, if that was done;
	// Origin says whether by `v` or by a job that landed the archive.
	Verify    *sync.Finding
	Origin    string
	Verifying bool
	Err       error // listing the mirror failed
	// Withheld says why serve's providers.v1 does not offer the package's
	// version from this mirror (no provenance kept); "" where it does.
	Withheld string
}

// Cell is the package under the matrix cursor.
type Cell struct {
	Package backends.Package
	Mirrors []Mirror
	// Ref is the number of the mirror the others are compared with (0:
	// none).
	Ref int
	// Notes are shown under the package's name: what a lock file says of
	// it, in the lock view.
	Notes []string
	// Differs is what a ≠ mark means in this cell ("not the locked
	// package" in the lock view); empty, its hashes differ from Ref's.
	Differs string
}

// Model is the pane. What it shows is wrapped to its width; where that is
// taller than the pane, it scrolls (the root focuses it with tab).
type Model struct {
	styles *theme.Styles
	keys   KeyMap
	cell   *Cell
	job    *engine.TrackedJob
	mod    *ModuleVersion
	src    string // the job's source, numbered
	dst    string
	// subject names what is shown; top, the first line on screen, goes
	// back to 0 when it changes.
	subject string
	top     int
	w, h    int
	// Focused: the keys scroll the pane.
	Focused bool
}

// KeyMap is the pane's keys: it scrolls.
type KeyMap struct{ list.Nav }

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.Bindings()} }

// New returns an empty pane.
func New(styles *theme.Styles) Model {
	return Model{styles: styles, keys: KeyMap{list.DefaultNav("top", "bottom")}}
}

// Keys returns the pane's keys.
func (m Model) Keys() help.KeyMap { return m.keys }

// SetSize sets the area the pane draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Clear shows nothing.
func (m *Model) Clear() { m.cell, m.job, m.mod = nil, nil, nil; m.about("") }

// ShowCell shows a matrix cell.
func (m *Model) ShowCell(c *Cell) {
	m.cell, m.job, m.mod = c, nil, nil
	if c != nil {
		m.about("cell " + c.Package.String())
	}
}

// ShowJob shows a job; src and dst name its places as the header numbers
// them.
func (m *Model) ShowJob(j *engine.TrackedJob, src, dst string) {
	m.job, m.mod, m.src, m.dst = j, nil, src, dst
	m.about("job " + strconv.FormatUint(uint64(j.Info.ID), 10))
}

// about notes what is shown, scrolling back to the top for something new.
func (m *Model) about(subject string) {
	if subject != m.subject {
		m.subject, m.top = subject, 0
	}
}

// Update scrolls.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	c := list.Cursor{Pos: m.top}
	page := max(1, m.h-1)
	last := max(0, len(m.lines())-m.h)
	switch {
	case key.Matches(k, m.keys.Bottom):
		c.Pos = last
	case !m.keys.Move(&c, k, last+1, page):
		return m, nil
	}
	m.top = max(0, min(c.Pos, last))
	return m, nil
}

// Scrolls reports whether what is shown is taller than the pane.
func (m Model) Scrolls() bool { return len(m.lines()) > m.h }

func (m Model) lines() []string {
	switch {
	case m.job != nil:
		return m.jobLines()
	case m.mod != nil:
		return m.moduleLines()
	case m.cell != nil:
		return m.cellLines()
	}
	return nil
}

// View renders the lines on screen; an arrow on the last line says how
// many more are below, one on the first that some are above.
func (m Model) View() string {
	lines := m.lines()
	if len(lines) <= m.h || m.h < 2 {
		return strings.Join(lines[:min(len(lines), max(0, m.h))], "\n")
	}
	top := max(0, min(m.top, len(lines)-m.h))
	shown := append([]string(nil), lines[top:top+m.h]...)
	if below := len(lines) - top - m.h; below > 0 {
		more := "↓ " + strconv.Itoa(below+1) + " more"
		if !m.Focused {
			more += " (tab to scroll)"
		}
		shown[m.h-1] = m.styles.Dim.Render(more)
	}
	if top > 0 {
		shown[0] = theme.Fit(shown[0], max(0, m.w-1)) + m.styles.Dim.Render("↑")
	}
	return strings.Join(shown, "\n")
}

func (m Model) wrap(s string, indent int) []string {
	w := max(8, m.w-indent)
	out := strings.Split(ansi.Wrap(s, w, " /"), "\n")
	pad := strings.Repeat(" ", indent)
	for i := range out {
		out[i] = pad + out[i]
	}
	return out
}

func (m Model) cellLines() []string {
	s := m.styles
	c := m.cell
	lines := []string{s.Bold.Render(c.Package.Version.String() + " " + c.Package.Platform.String())}
	for _, n := range c.Notes {
		lines = append(lines, m.wrap(n, 1)...)
	}
	names := make([]string, len(c.Mirrors))
	for i, mr := range c.Mirrors {
		names[i] = mr.Name
	}
	short := m.shortNames(names)
	for i, mr := range c.Mirrors {
		a := mr.Archive
		size := ""
		if a != nil && a.Size >= 0 {
			size = " " + format.Bytes(a.Size)
		}
		if a != nil && a.Layout == backends.Unpacked {
			size += " unpacked"
		}
		lines = append(lines, m.placeLines(place{mr.Number, mr.Name, short[i], mr.Compared, mr.Mark, mr.Mark.Label(), mr.Err}, a != nil, size)...)
		if mr.Err != nil || a == nil {
			continue
		}
		if mr.Mark == theme.MarkDiffers && !failed(mr.Verify) {
			what := "≠ hashes differ"
			switch {
			case c.Differs != "":
				what = "≠ " + c.Differs
			case c.Ref > 0:
				what += " from [" + strconv.Itoa(c.Ref) + "]'s"
			}
			lines = append(lines, m.wrapStyled(s.Bad.Render, what, 4)...)
		}
		stated := 0
		for _, ev := range a.Evidence {
			for _, h := range ev.Hashes {
				stated++
				lines = append(lines, m.hashLines(h, ev.Source)...)
			}
		}
		if stated == 0 {
			lines = append(lines, "    "+s.Warn.Render("◐ no hashes stated"))
		}
		lines = append(lines, m.verifyLines(mr)...)
		if mr.Withheld != "" {
			lines = append(lines, m.wrapStyled(s.Dim.Render, mr.Withheld, 4)...)
		}
	}
	return lines
}

// hashLines shows a stated hash in full, wrapped, and its source: beside
// the hash's end where both fit, else under it.
func (m Model) hashLines(h hashing.Hash, src hashing.Source) []string {
	// Cut at the width, never at a "/" of base64: the lines read as one.
	lines := strings.Split(ansi.Hardwrap(h.String(), max(8, m.w-4), false), "\n")
	for i := range lines {
		lines[i] = "    " + lines[i]
	}
	last := lines[len(lines)-1]
	if room := m.w - theme.Width(last) - 2; room >= len(src.Kind) {
		lines[len(lines)-1] = last + "  " + m.styles.Dim.Render(sourceLabel(src, room))
		return lines
	}
	return append(lines, "      "+m.styles.Dim.Render(sourceLabel(src, m.w-6)))
}

// place is what Details says of any place before what it holds.
type place struct {
	num      int
	name     string
	short    string // name shortened to the pane, told apart from the others
	compared bool
	mark     theme.Mark
	label    string // the mark's name, where the place lacks the thing
	err      error  // listing the place failed
}

// placeLines begins a place's lines: its number, mark and name, then
// suffix; held reports whether the place holds the thing. A place that
// could not be listed, or that lacks the thing, is said whole.
func (m Model) placeLines(p place, held bool, suffix string) []string {
	s := m.styles
	num := "[" + strconv.Itoa(p.num) + "]"
	if p.compared {
		num = s.Compared.Render(num)
	}
	head := num + " " + s.Glyphs[p.mark] + " "
	name := p.short
	switch {
	case p.err != nil:
		return append([]string{head + name}, m.wrapStyled(s.Bad.Render, "cannot list: "+p.err.Error(), 4)...)
	case !held:
		suffix = " " + p.label
	}
	if suffix == "" {
		return []string{head + name}
	}
	if theme.Width(head+p.name+suffix) <= m.w {
		return []string{head + p.name + s.Dim.Render(suffix)}
	}
	// The name whole where it fits, what follows it on a line of its own.
	return append([]string{head + name}, m.wrapStyled(s.Dim.Render, strings.TrimSpace(suffix), 4)...)
}

// shortNames shortens the names of the places Details lists to the room
// beside their number and mark, told apart from each other (as the header
// does).
func (m Model) shortNames(names []string) []string {
	w := make([]int, len(names))
	for i := range w {
		w[i] = max(6, m.w-len("[1] ◇ "))
	}
	return theme.ShortPlaces(names, w)
}

// sourceLabel names a source of truth in w cells: its kind, then as much of
// its detail (a file, a URL) as fits, keeping the end.
func sourceLabel(src hashing.Source, w int) string {
	kind := string(src.Kind)
	if src.Detail == "" || w-len(kind)-1 < 8 {
		return kind
	}
	return kind + " " + theme.ShortPlace(src.Detail, w-len(kind)-1)
}

func failed(f *sync.Finding) bool {
	return f != nil && (f.Status == sync.StatusMismatch || f.Status == sync.StatusError)
}

// wrapStyled wraps plain text, errors and details from places included:
// their control characters are written out (backends.Printable) and tabs
// made spaces, so that they neither drive the terminal nor break the pane.
func (m Model) wrapStyled(style func(...string) string, text string, indent int) []string {
	ls := m.wrap(strings.ReplaceAll(backends.Printable(text), "\t", " "), indent)
	for i, l := range ls {
		ls[i] = l[:indent] + style(l[indent:])
	}
	return ls
}

func (m Model) verifyLines(mr Mirror) []string {
	s := m.styles
	switch {
	case mr.Verifying:
		return []string{"    " + s.Info.Render("verifying…")}
	case mr.Verify == nil:
		return nil
	}
	f := mr.Verify
	by := "verified"
	if mr.Origin == "transfer" {
		by = "checked on arrival"
	}
	switch f.Status {
	case sync.StatusMismatch, sync.StatusError:
		out := []string{"    " + s.Bad.Render("✗ "+by+": "+string(f.Status))}
		// The pane already names the mirror and the package.
		detail := strings.TrimPrefix(f.Detail, mr.Name+": "+f.Package.String()+": ")
		return append(out, m.wrapStyled(s.Bad.Render, detail, 4)...)
	}
	var out []string
	if f.Result != nil {
		for _, c := range f.Result.Checks {
			if c.Status == hashing.Match {
				out = append(out, "    "+s.OK.Render("✓ "+strings.TrimSuffix(string(c.Scheme), ":")+" "+string(c.Source.Kind)))
			}
		}
		if len(out) == 0 {
			out = append(out, "    "+s.Warn.Render("◐ "+by+": nothing stated to check against"))
		} else {
			head, sum := []string{"    " + s.OK.Render(by)}, f.Result.Sums.H1.Short()
			if theme.Width(head[0]+" "+sum) <= m.w {
				head[0] += s.Dim.Render(" " + sum)
			} else {
				head = append(head, "      "+s.Dim.Render(sum))
			}
			out = append(head, out...)
		}
	}
	return append(out, m.signerLines(f.Signer, 4)...)
}

// signerLines say who signed the package, where its provenance says so.
func (m Model) signerLines(sg *provenance.Signer, indent int) []string {
	if sg == nil {
		return nil
	}
	s := m.styles
	out := []string{strings.Repeat(" ", indent) + s.OK.Render("✓ signed by key "+sg.KeyID)}
	text := "fingerprint " + sg.Fingerprint
	if sg.Source != "" {
		text += ", from " + sg.Source
	}
	if sg.Expired != "" {
		text += "; " + sg.Expired
	}
	return append(out, m.wrapStyled(s.Dim.Render, text, indent+2)...)
}

func (m Model) jobLines() []string {
	s := m.styles
	j := m.job
	var lines []string
	if j.Info.Name != "" {
		// A module job: no platform, and Name is the whole address.
		lines = m.wrap(s.Bold.Render(j.Info.Name), 0)
	} else {
		lines = []string{s.Bold.Render(j.Info.Package.Version.String() + " " + j.Info.Package.Platform.String())}
		lines = append(lines, m.wrap(backends.PrintableLine(j.Info.Package.Provider.String()), 0)...)
	}
	lines = append(lines, m.wrap(backends.PrintableLine("from "+m.src), 0)...)
	lines = append(lines, m.wrap(backends.PrintableLine("to "+m.dst), 0)...)
	state := j.State.String()
	if j.Attempt > 1 {
		state += ", attempt " + strconv.Itoa(j.Attempt)
	}
	switch j.State {
	case engine.Done:
		state += " · " + format.Bytes(j.Bytes) + " in " + j.Elapsed.Round(1e6).String()
	case engine.Running:
		state += " · " + format.Bytes(j.Bytes)
		if j.Info.Size > 0 {
			state += " of " + format.Bytes(j.Info.Size)
		}
		state += " · " + format.Bytes(int64(j.Rate)) + "/s"
	}
	lines = append(lines, state)
	lines = append(lines, m.signerLines(j.Info.Signer, 0)...)
	for _, c := range j.Checks {
		scheme := strings.TrimSuffix(string(c.Scheme), ":")
		switch c.Status {
		case hashing.Match:
			lines = append(lines, s.OK.Render("✓ "+scheme+" ")+s.Dim.Render(sourceLabel(c.Source, m.w-len(scheme)-3)))
		case hashing.Mismatch:
			lines = append(lines, m.wrapStyled(s.Bad.Render, "✗ "+c.String(), 0)...)
		default:
			lines = append(lines, s.Dim.Render("- "+c.Source.String()+": nothing checkable"))
		}
	}
	if j.Err != nil {
		lines = append(lines, m.wrapStyled(s.Bad.Render, "✗ "+jobs.Reason(j.Err), 0)...)
		if full := j.Err.Error(); full != jobs.Reason(j.Err) {
			lines = append(lines, m.wrapStyled(s.Dim.Render, full, 0)...)
		}
	}
	return append(lines, m.clientLines(j)...)
}

// clientLines are, for a job landed in a place whose clients need telling
// (an OCI mirror), push's notes and the block to paste into the OpenTofu
// CLI configuration (y copies it).
func (m Model) clientLines(j *engine.TrackedJob) []string {
	if j.State != engine.Done || j.Client == nil {
		return nil
	}
	s := m.styles
	var lines []string
	for _, n := range j.Client.Notes {
		lines = append(lines, m.wrapStyled(s.Warn.Render, "note: "+n, 0)...)
	}
	lines = append(lines, m.wrapStyled(s.Dim.Render, "Add to the OpenTofu CLI configuration (~/.tofurc, or the file TF_CLI_CONFIG_FILE names; y copies it):", 0)...)
	for _, l := range strings.Split(strings.TrimRight(j.Client.Block, "\n"), "\n") {
		lines = append(lines, m.wrap(backends.PrintableLine(l), 0)...)
	}
	return lines
}
