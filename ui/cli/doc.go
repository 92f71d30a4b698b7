// Package cli is tfmirror's command line: one file per command (cmd_*.go),
// each parsing its flags into a selection, opening places, making one call
// into sync and handing the result to a reporter. Advice about which flag to
// pass lives here, not in the layers below.
package cli
