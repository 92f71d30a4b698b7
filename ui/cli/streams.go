package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
)

// streams are where a run function reads and writes: the command's
// standard streams, or a test's buffers. Run functions take them, with
// their options, instead of the cobra command, as restic's do.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// streamsOf are the streams cobra gives cmd.
func streamsOf(cmd *cobra.Command) streams {
	return streams{stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
}

// tell writes a line of the command's messages on stderr. What it says
// names files and places anyone may have named (a directory in a --from
// tree, a spec's destinations, a path given on the command line): their
// control characters are written out (\x1b), never sent to the terminal.
func (st streams) tell(format string, args ...any) {
	fmt.Fprintln(st.stderr, backends.Printable(fmt.Sprintf(format, args...)))
}

// warnings reports the junk a place tolerated.
func (st streams) warnings(r backends.Reader) {
	if w, ok := r.(backends.Warner); ok {
		for _, msg := range w.Warnings() {
			fmt.Fprintln(st.stderr, "warning:", msg)
		}
	}
}

// isTerminal reports whether the run talks to a terminal both ways.
func (st streams) isTerminal() bool {
	out, ok := st.stdout.(*os.File)
	in, ok2 := st.stdin.(*os.File)
	return ok && ok2 && term.IsTerminal(out.Fd()) && term.IsTerminal(in.Fd())
}
