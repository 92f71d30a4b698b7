// Package theme holds what every pane of the terminal UI shares: the Styles
// built once at start, the marks of the platform matrix, and the box and
// text-fitting helpers the panes draw with.
package theme
