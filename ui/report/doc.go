// Package report renders command results as text tables or JSON, for the
// command line and scripts. The terminal UI lives beside it in ui/.
package report
