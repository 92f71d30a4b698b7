// Package grid is the centre of the UI: one item's versions as rows and, as
// columns, what the view compares (a provider's platforms; the places that
// hold a module), each cell a mark per compared place. It keeps a cursor, a
// selection (of cells, or of whole rows where a column is no choice), a
// version filter (a piece of a version, or a constraint such as ">= 2.0")
// and a "gaps only" switch, and renders only the rows on screen, so a
// provider with thousands of versions scrolls as fast as one with three.
package grid
