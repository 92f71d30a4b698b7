// Package format writes quantities the way both front ends show them: the
// terminal UI and the command line's reports.
package format
