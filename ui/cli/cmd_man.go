package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manFlags are man's options: how the pages of the command tree are
// written into a directory (bound to the tree by the constructor).
type manFlags struct {
	write func(dir string) error
}

func newManCmd() *cobra.Command {
	var f manFlags
	cmd := &cobra.Command{
		Use:   "man DIR",
		Short: "Write tfmirror's man pages (section 1) into DIR",
		Long: `Write a man page for tfmirror and for each of its commands into DIR
(created if need be), made from the same help as --help, by cobra's
generator: tfmirror.1, tfmirror-sync.1, ... Install them where man looks,
e.g. /usr/local/share/man/man1, or read one with man -l DIR/tfmirror-sync.1.`,
		Example: `  tfmirror man ./man && man -l ./man/tfmirror-sync.1
  sudo tfmirror man /usr/local/share/man/man1`,
		Args: exactArgs(1, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMan(cmd.Context(), nil, &f, args, streamsOf(cmd))
		},
	}
	f.write = func(dir string) error {
		root := cmd.Root()
		root.DisableAutoGenTag = true // the pages do not change from build to build
		return doc.GenManTree(root, &doc.GenManHeader{Title: "TFMIRROR", Section: "1", Source: "tfmirror"}, dir)
	}
	return cmd
}

// runMan writes the man pages into args[0], made if need be.
func runMan(_ context.Context, _ *Env, f *manFlags, args []string, st streams) error {
	if err := os.MkdirAll(args[0], 0o755); err != nil {
		return usageErr("man: %v", err)
	}
	if err := f.write(args[0]); err != nil {
		return fmt.Errorf("man: %w", err)
	}
	fmt.Fprintf(st.stdout, "man pages written to %s\n", args[0])
	return nil
}
