package grid

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/ui/theme"
)

func (m *Model) relayout() {
	l := layout{verW: len("version") + 2, lines: 1}
	for _, v := range m.data.Rows {
		l.verW = max(l.verW, len(v)+2)
	}
	l.verW = min(l.verW, 24)
	cell := 1 + max(1, m.data.PerCell) // selection slot + marks
	total := l.verW
	l.colW = make([]int, len(m.data.Cols))
	for i, c := range m.data.Cols {
		l.colW[i] = max(theme.Width(c.Head), cell) + 2
		total += l.colW[i]
	}
	if total > m.w {
		l.narrow = true
		for i, c := range m.data.Cols {
			l.colW[i] = max(theme.Width(c.Narrow[0]), theme.Width(c.Narrow[1]), cell) + 1
			if c.Narrow[1] != "" {
				l.lines = 2
			}
		}
	}
	m.lay = l
	m.lay.legend = m.legendLines()
}

// legendItems is the legend of every mark the data holds, in the order the
// view gave, with any mark the view did not describe after them: the legend
// explains every mark on screen and no other.
func (m Model) legendItems() []LegendItem {
	var held uint64 // a bit per mark
	for _, row := range m.data.Marks {
		for _, cell := range row {
			for _, mk := range cell {
				held |= 1 << uint(mk)
			}
		}
	}
	var out []LegendItem
	for _, l := range m.opts.Legend {
		if bit := uint64(1) << uint(l.Mark); held&bit != 0 {
			out = append(out, l)
			held &^= bit
		}
	}
	for mk := theme.Mark(0); held != 0 && mk < 64; mk++ {
		if bit := uint64(1) << uint(mk); held&bit != 0 {
			out = append(out, LegendItem{Mark: mk, Long: mk.Label(), Short: mk.Short()})
			held &^= bit
		}
	}
	return out
}

// legendLines lays the legend out: in full on one line where it fits, else
// short, on two lines where one is not enough.
func (m Model) legendLines() []string {
	s := m.styles
	items := m.legendItems()
	if len(items) == 0 {
		return nil
	}
	long := ""
	for _, l := range items {
		long += s.Glyphs[l.Mark] + " " + s.Dim.Render(l.Long) + "  "
	}
	room := m.w
	if theme.Width(long) <= room {
		return []string{long}
	}
	var lines []string
	line := ""
	for _, l := range items {
		item := s.Glyphs[l.Mark] + " " + s.Dim.Render(l.Short) + " "
		if line != "" && theme.Width(line+item) > room && len(lines) == 0 {
			lines, line = append(lines, line), ""
		}
		line += item
	}
	return append(lines, line)
}

// View renders the grid into its area, row by row, drawing only the rows
// on screen.
func (m Model) View() string {
	if m.w <= 0 || m.h <= 0 || len(m.data.Rows) == 0 {
		return ""
	}
	// Columns on screen, from m.left.
	last := min(m.left, len(m.data.Cols)-1)
	for last+1 < len(m.data.Cols) && m.fits(m.left, last+1) {
		last++
	}
	lines := m.headings(last)
	vis := m.VisibleRows()
	for i := m.cur.Top; i < len(m.rows) && i < m.cur.Top+vis; i++ {
		lines = append(lines, m.rowView(i, last))
	}
	if len(m.rows) == 0 && m.gaps {
		lines = append(lines, m.styles.Dim.Render(" nothing missing in the versions shown (o shows them all)"))
	}
	foot := m.footer()
	for len(lines) < m.h-len(foot) {
		lines = append(lines, "")
	}
	lines = append(lines, foot...)
	// A column wider than the whole area (a very narrow terminal) is cut.
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.w, "")
	}
	return strings.Join(lines, "\n")
}

// headings are the column headings of columns m.left..last, on one line or
// two, with arrows where columns are off screen.
func (m Model) headings(last int) []string {
	s := m.styles
	moreLeft, moreRight := m.left > 0, last < len(m.data.Cols)-1
	out := make([]string, 0, m.h)
	for line := range m.lay.lines {
		var b strings.Builder
		if moreLeft {
			b.WriteString(s.Dim.Render("‹"))
		}
		label := "version"
		if line > 0 {
			label = ""
		}
		b.WriteString(s.Header.Render(theme.Fit(" "+label, m.lay.verW)))
		for c := m.left; c <= last; c++ {
			col := m.data.Cols[c]
			text := col.Head
			if m.lay.narrow {
				text = col.Narrow[line]
			}
			t := theme.Fit(" "+text, m.lay.colW[c])
			if c == m.col && !m.opts.Rows {
				t = s.Accent.Render(t)
			} else {
				t = s.Header.Render(t)
			}
			b.WriteString(t)
		}
		h := b.String()
		if moreRight {
			h = theme.Fit(h, m.w-1) + s.Dim.Render("›")
		}
		out = append(out, h)
	}
	return out
}

// rowView draws screen row i (an index into m.rows), columns m.left..last.
func (m Model) rowView(i, last int) string {
	s := m.styles
	r := m.rows[i]
	v := m.data.Rows[r]
	rowSel := m.opts.Rows && m.sel[Cell{Row: v}]
	var b strings.Builder
	switch {
	case i == m.cur.Pos:
		b.WriteString(s.Accent.Render(theme.Fit("▸"+v, m.lay.verW)))
	case rowSel:
		b.WriteString(s.Selected.Render("+") + theme.Fit(v, m.lay.verW-1))
	default:
		b.WriteString(theme.Fit(" "+v, m.lay.verW))
	}
	for c := m.left; c <= last; c++ {
		var marks []theme.Mark
		if r < len(m.data.Marks) && c < len(m.data.Marks[r]) {
			marks = m.data.Marks[r][c]
		}
		sel := rowSel || m.sel[Cell{v, m.data.Cols[c].Head}]
		b.WriteByte(' ')
		if sel {
			b.WriteString(s.Selected.Render("+"))
		} else {
			b.WriteByte(' ')
		}
		glyphs := &s.Glyphs
		switch {
		case i == m.cur.Pos && (m.opts.Rows || c == m.col):
			glyphs = &s.CursorGlyphs
		case sel:
			glyphs = &s.SelGlyphs
		}
		for _, mk := range marks {
			b.WriteString(glyphs[mk])
		}
		if pad := m.lay.colW[c] - 2 - len(marks); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	return b.String()
}

// footer is the legend, or the filter while it is typed or applied, in
// the lines the legend takes.
func (m Model) footer() []string {
	s := m.styles
	n := ""
	if k := len(m.sel); k > 0 {
		n = s.Selected.Render(strconv.Itoa(k)+" selected") + "  "
	}
	count := strconv.Itoa(len(m.rows)) + " of " + strconv.Itoa(len(m.data.Rows)) + " versions"
	if m.gaps {
		count += ", gaps only"
	}
	out := make([]string, m.footerLines())
	switch {
	case m.filter.Shown():
		if m.filterNote != "" {
			count = m.filterNote
		}
		out[0] = n + m.filter.View(lipgloss.Style{}) + s.Dim.Render("  "+count)
	case m.gaps:
		copy(out, m.lay.legend)
		out[0] = n + s.Accent.Render(count) + "  " + out[0]
	case len(m.lay.legend) > 0:
		copy(out, m.lay.legend)
		out[0] = n + out[0]
	default:
		out[0] = n
	}
	return out
}
