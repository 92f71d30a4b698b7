package grid

// Click acts on a click at (x, y) of the grid's area as View draws it: on
// a cell, or a version, it puts the cursor there, and where the cursor is
// there already and selects is set (the grid had the focus) it selects it
// (as space does; r on a version); on a column's heading it moves to that
// column. It reports whether (x, y) is one of those.
func (m *Model) Click(x, y int, selects bool) bool {
	if x < 0 || y < 0 || x >= m.w || y >= m.h || len(m.data.Rows) == 0 {
		return false
	}
	if y < m.lay.lines {
		if m.left > 0 {
			x-- // the heading starts with the "more" arrow
		}
		c := m.colAt(x)
		if c < 0 || m.opts.Rows {
			return false
		}
		m.moved, m.col = true, c
		m.clamp()
		return true
	}
	i := m.cur.Top + y - m.lay.lines
	if y-m.lay.lines >= m.VisibleRows() || i >= len(m.rows) {
		return false
	}
	c := m.colAt(x)
	if c == -2 {
		return false // past the last column
	}
	m.moved = true
	again := selects && i == m.cur.Pos && (c < 0 || m.opts.Rows || c == m.col)
	m.cur.Pos = i
	if c >= 0 {
		m.col = c
	}
	switch {
	case again && c >= 0 && !m.opts.Rows:
		if cell, ok := m.Cursor(); ok {
			m.toggleAll([]Cell{cell})
		}
	case again:
		m.toggleRow()
	}
	m.clamp()
	return true
}

// Scroll moves the cursor by n rows (negative: up), as the arrows do.
func (m *Model) Scroll(n int) {
	m.moved = true
	m.cur.Pos += n
	m.clamp()
}

// colAt is the column drawn at x of a row: -1 in the version column, -2
// past the last column on screen.
func (m Model) colAt(x int) int {
	if x < m.lay.verW {
		return -1
	}
	pos := m.lay.verW
	for c := m.left; c < len(m.data.Cols) && c < len(m.lay.colW); c++ {
		if x < pos+m.lay.colW[c] {
			if !m.fits(m.left, c) {
				return -2
			}
			return c
		}
		pos += m.lay.colW[c]
	}
	return -2
}
