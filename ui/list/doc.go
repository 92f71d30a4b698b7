// Package list is how the UI's panes move through rows: a Cursor (a
// position and the first row on screen) that the providers and modules
// lists, the grid, the jobs pane and the queue dialog all move with, the
// keys that move it, and Model, the one list of named items (providers,
// modules) with notes and a filter line.
package list
