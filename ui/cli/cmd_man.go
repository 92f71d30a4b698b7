package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func newManCmd() *cobra.Command {
	return &cobra.Command{
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
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return usageErr("man: %v", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // the pages do not change from build to build
			if err := doc.GenManTree(root, &doc.GenManHeader{Title: "TFMIRROR", Section: "1", Source: "tfmirror"}, args[0]); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "man pages written to %s\n", args[0])
			return nil
		},
	}
}
