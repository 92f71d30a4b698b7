package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion is the module version, VCS revision and Go version the binary
// was built from, as the build info records them.
func buildVersion() string {
	version, commit, dirty := "(devel)", "", false
	info, ok := debug.ReadBuildInfo()
	goVersion := "unknown"
	if ok {
		goVersion = info.GoVersion
		if v := info.Main.Version; v != "" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	out := "tfmirror " + version
	if commit != "" {
		out += ", commit " + commit[:min(12, len(commit))]
		if dirty {
			out += " (modified)"
		}
	}
	return out + ", " + goVersion
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print tfmirror's version, the commit it was built from, and the Go version",
		Example: "  tfmirror version\n  tfmirror --version",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), buildVersion())
			return err
		},
	}
}
