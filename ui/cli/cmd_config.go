package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/ui/report"
)

// configFlags are config's options, bound to its flags.
type configFlags struct{ asJSON bool }

func newConfigCmd(env *Env) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the mirrors and credentials your Terraform/OpenTofu CLI configuration names",
		Long: `Read the CLI configuration the clients read and show what tfmirror takes from
it: which files (TF_CLI_CONFIG_FILE alone when set, else ~/.terraformrc,
~/.tofurc and the *.tfrc files of ~/.terraform.d), the mirrors of their
provider_installation block as place arguments for the other commands (with
include/exclude patterns), the hosts that have a token (credentials blocks or
TF_TOKEN_* variables; tokens are never printed), and the oci_credentials
blocks. Bearer tokens found here are used for https:// and registry:// places.

Exits 2 when a file is malformed (file:line:column), after showing what the
other files hold.`,
		Example: `  tfmirror config
  tfmirror config --json | jq -r '.mirrors[].place'
  TF_CLI_CONFIG_FILE=ci.tfrc tfmirror config`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConfig(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	cmd.AddCommand(newConfigSuggestCmd(env))
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print {"files","mirrors","credentials","oci_credentials","warnings","errors"}`)
	return cmd
}

// runConfig shows what the CLI configuration names: mirrors, hosts with a
// token, oci_credentials; a malformed file exits 2 after the rest is shown.
func runConfig(_ context.Context, _ *Env, f *configFlags, _ []string, st streams) error {
	c, err := cliconfig.Load(os.Getenv, "")
	if c == nil {
		return err
	}
	envTokens := backends.EnvTokens(os.Environ())
	if f.asJSON {
		if jerr := report.ConfigJSON(st.stdout, c, envTokens, err); jerr != nil {
			return jerr
		}
	} else {
		report.Config(st.stdout, c, envTokens)
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(st.stderr, "warning:", w)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	return nil
}
