// Package keypress makes key presses by the names Bubble Tea gives them,
// for the UI's tests.
package keypress
