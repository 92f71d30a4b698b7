package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
)

// tell writes a line of the command's messages on stderr. What it says
// names files and places anyone may have named (a directory in a --from
// tree, a spec's destinations, a path given on the command line): their
// control characters are written out (\x1b), never sent to the terminal.
func tell(cmd *cobra.Command, format string, args ...any) {
	fmt.Fprintln(cmd.ErrOrStderr(), backends.Printable(fmt.Sprintf(format, args...)))
}
