package cli

import "github.com/spf13/cobra"

// tell is streams.tell for a command not yet given its streams.
func tell(cmd *cobra.Command, format string, args ...any) { streamsOf(cmd).tell(format, args...) }
