package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/sync/audit"
	"github.com/tfmirror/tfmirror/ui/report"
)

// streams are where a run function reads and writes: the command's
// standard streams, or a test's buffers. Every command's run function has
// one shape, runX(ctx, env, *xFlags, args, streams): the global options,
// the command's own (bound to its flags by its cobra constructor), the
// arguments and the streams; none touches *cobra.Command (restic's
// runBackup(ctx, opts, gopts, term, args)).
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

// reporter is the sink of a run's events: live progress on a terminal,
// plain lines otherwise, JSON lines with --json; colour only on a terminal
// without NO_COLOR. Job lines go to stdout, the rest to stderr.
func (st streams) reporter(asJSON, push bool) *report.SyncReporter {
	o := report.SyncOptions{Mode: report.Plain, Err: st.stderr, Push: push}
	f, ok := st.stdout.(*os.File)
	switch {
	case asJSON:
		o.Mode = report.JSONLines
	case ok && term.IsTerminal(f.Fd()):
		o.Mode = report.Live
		o.Width, _, _ = term.GetSize(f.Fd())
		_, noColor := os.LookupEnv("NO_COLOR")
		o.Color = !noColor
	}
	return report.NewSyncReporter(st.stdout, o)
}

// closeAudit closes the audit log, if any; a log that could not be written
// whole makes a successful run fail (it did not leave the record asked
// for).
func (st streams) closeAudit(l *audit.Log, err error) error {
	if l == nil {
		return err
	}
	if cerr := l.Close(); cerr != nil {
		fmt.Fprintf(st.stderr, "tfmirror: %v\n", cerr)
		if err == nil {
			return errProblem
		}
	}
	return err
}
