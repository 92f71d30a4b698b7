package theme

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Mark is what one mirror has for one package, as a matrix cell shows it.
// Only a filled mark says "verified": hashes stated by a place are shown
// apart from hashes recomputed from the bytes, and a failed recomputation
// apart from two places stating different hashes.
type Mark int

const (
	// MarkLoading: the mirror's listing has not arrived yet.
	MarkLoading Mark = iota
	// MarkMissing: the mirror lacks the package.
	MarkMissing
	// MarkVerified: present, its hashes recomputed from the bytes and
	// matching what is stated, and agreeing with the other mirrors'.
	MarkVerified
	// MarkStated: present, and the hashes stated for it agree with the
	// other mirrors'; nothing has recomputed them yet.
	MarkStated
	// MarkUnverified: present, but nothing states hashes it can be
	// compared by.
	MarkUnverified
	// MarkDiffers: present with hashes that differ from the reference
	// mirror's.
	MarkDiffers
	// MarkFailed: recomputing its hashes contradicted what is stated, or
	// failed.
	MarkFailed
	// MarkError: the mirror could not be listed.
	MarkError
	// MarkNotApplicable: absent from a mirror that the CLI configuration
	// does not use for the provider (include/exclude), so not a gap.
	MarkNotApplicable
	numMarks
)

// Glyph returns the one-cell symbol of a mark.
func (m Mark) Glyph() string {
	return [...]string{"·", "○", "●", "◇", "◐", "≠", "✗", "!", "-"}[m]
}

// Label names a mark in the legend and in Details.
func (m Mark) Label() string {
	return [...]string{"loading", "missing", "verified (recomputed)", "stated, not recomputed", "nothing stated to compare",
		"hashes differ", "verification failed", "cannot list", "excluded by CLI config"}[m]
}

// Short names a mark where room is tight.
func (m Mark) Short() string {
	return [...]string{"loading", "missing", "verified", "stated", "unstated", "differs", "failed", "error", "n/a"}[m]
}

// String names a mark in test output.
func (m Mark) String() string { return m.Short() }

// Styles is every style the UI uses, built once and passed down; nothing
// builds a style while rendering.
type Styles struct {
	Border        lipgloss.Style
	BorderFocused lipgloss.Style
	Title         lipgloss.Style
	TitleFocused  lipgloss.Style
	Header        lipgloss.Style // column headings
	Dim           lipgloss.Style
	Bold          lipgloss.Style
	Cursor        lipgloss.Style // the cursor row of a list
	Selected      lipgloss.Style // the selection marker
	OK            lipgloss.Style
	Bad           lipgloss.Style // failures: red and bold, never colour alone
	Warn          lipgloss.Style
	Info          lipgloss.Style
	Accent        lipgloss.Style
	Compared      lipgloss.Style // a mirror in the comparison, in the header
	Key           lipgloss.Style // a key in dialogs

	// Glyphs are the marks pre-rendered: plain, under the cursor, and in a
	// selected cell.
	Glyphs       [numMarks]string
	CursorGlyphs [numMarks]string
	SelGlyphs    [numMarks]string

	Help      help.Styles
	TextInput textinput.Styles
}

// New builds the styles. The colour profile (NO_COLOR, a dumb terminal) is
// applied by Bubble Tea when it writes the frame; every state that colour
// shows is also shown by a glyph or an attribute, so nothing is lost without
// it.
func New() Styles {
	// ANSI basic colours, so they follow the terminal's own theme.
	colGreen, colRed, colYellow := lipgloss.Color("2"), lipgloss.Color("1"), lipgloss.Color("3")
	colBlue, colCyan, colGray := lipgloss.Color("4"), lipgloss.Color("6"), lipgloss.Color("8")
	s := Styles{
		Border:        lipgloss.NewStyle().Foreground(colGray),
		BorderFocused: lipgloss.NewStyle().Foreground(colCyan),
		Title:         lipgloss.NewStyle(),
		TitleFocused:  lipgloss.NewStyle().Bold(true).Foreground(colCyan),
		Header:        lipgloss.NewStyle().Bold(true),
		Dim:           lipgloss.NewStyle().Foreground(colGray),
		Bold:          lipgloss.NewStyle().Bold(true),
		Cursor:        lipgloss.NewStyle().Reverse(true),
		Selected:      lipgloss.NewStyle().Foreground(colBlue).Bold(true),
		OK:            lipgloss.NewStyle().Foreground(colGreen),
		Bad:           lipgloss.NewStyle().Foreground(colRed).Bold(true),
		Warn:          lipgloss.NewStyle().Foreground(colYellow),
		Info:          lipgloss.NewStyle().Foreground(colCyan),
		Accent:        lipgloss.NewStyle().Foreground(colCyan).Bold(true),
		Compared:      lipgloss.NewStyle().Bold(true).Underline(true),
		Key:           lipgloss.NewStyle().Bold(true).Foreground(colCyan),
	}
	markStyles := [numMarks]lipgloss.Style{
		MarkLoading:       s.Dim,
		MarkMissing:       s.Dim,
		MarkVerified:      s.OK,
		MarkStated:        lipgloss.NewStyle(), // green is for verified only
		MarkUnverified:    s.Warn,
		MarkDiffers:       s.Bad,
		MarkFailed:        s.Bad,
		MarkError:         s.Bad,
		MarkNotApplicable: s.Dim,
	}
	for m := range numMarks {
		g := m.Glyph()
		s.Glyphs[m] = markStyles[m].Render(g)
		s.CursorGlyphs[m] = markStyles[m].Reverse(true).Render(g)
		s.SelGlyphs[m] = markStyles[m].Underline(true).Render(g)
	}
	s.Help = help.DefaultDarkStyles()
	s.Help.ShortKey = lipgloss.NewStyle().Bold(true)
	s.Help.FullKey = lipgloss.NewStyle().Bold(true)
	s.Help.ShortDesc = lipgloss.NewStyle()
	s.Help.FullDesc = lipgloss.NewStyle()
	s.Help.ShortSeparator = s.Dim
	s.Help.FullSeparator = s.Dim
	s.Help.Ellipsis = s.Dim
	s.TextInput = textinput.DefaultDarkStyles()
	s.TextInput.Cursor.Blink = false // a steady cursor: no timer, no animation
	return s
}

// Fit truncates s (which may hold ANSI styling) to w cells and pads it with
// spaces to exactly w.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// Width is the display width of s, ignoring ANSI styling.
func Width(s string) int { return ansi.StringWidth(s) }

// Truncate cuts s to at most w cells, ending with an ellipsis when cut.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// TruncateLeft cuts s to at most w cells keeping its end, for paths and
// URLs whose tail is the telling part.
func TruncateLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n <= w {
		return s
	}
	return "…" + ansi.TruncateLeft(s, n-w+1, "")
}

// Box draws a bordered box of exactly w x h cells with title set into the
// top border, around lines (cut or padded to fit). A focused box has a heavy
// border, so focus shows without colour.
func (s Styles) Box(title string, lines []string, w, h int, focused bool) string {
	if w < 2 || h < 2 {
		return ""
	}
	bs, ts := s.Border, s.Title
	tl, tr, bl, br, hz, vt := "┌", "┐", "└", "┘", "─", "│"
	if focused {
		bs, ts = s.BorderFocused, s.TitleFocused
		tl, tr, bl, br, hz, vt = "┏", "┓", "┗", "┛", "━", "┃"
	}
	inner := w - 2
	var b strings.Builder
	b.Grow((w + 16) * h)
	// Top border: "┌ title ───┐".
	top := ""
	if title != "" && inner > 4 {
		t := Truncate(title, inner-3)
		top = bs.Render(hz) + ts.Render(" "+t+" ")
		rest := inner - 1 - Width(t) - 2
		if rest > 0 {
			top += bs.Render(strings.Repeat(hz, rest))
		}
	} else {
		top = bs.Render(strings.Repeat(hz, inner))
	}
	b.WriteString(bs.Render(tl) + top + bs.Render(tr))
	left, right := bs.Render(vt), bs.Render(vt)
	for i := range h - 2 {
		b.WriteByte('\n')
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		b.WriteString(left + Fit(line, inner) + right)
	}
	b.WriteByte('\n')
	b.WriteString(bs.Render(bl + strings.Repeat(hz, inner) + br))
	return b.String()
}
