package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/ui/report"
)

const lsLong = `List the packages a place holds, one per provider x version x platform, with
the hashes the place states for each (its index documents, OCI digests or
signed checksums) and their size where known.

Without MIRROR, ls lists every mirror your Terraform/OpenTofu CLI configuration
names in provider_installation (see tfmirror config).

Network mirrors (https://HOST/PATH/) and origin registries (registry://HOST)
cannot list their providers: the protocols have no catalogue, so name the
providers to look at with --provider HOST/NAMESPACE/TYPE (or --lock). For a
registry, NAMESPACE/TYPE means that provider on the registry's host, and
--version is required: a registry keeps every release ever made, and listing one
costs a request per version and platform. A registry's packages carry the
hashes of its signed SHA256SUMS; a network mirror's, those of its
<version>.json. Sizes are shown where the place states them.

With --module, ls lists module packages instead: the versions of each module
(--version filters them) and where each package lives: the location a module
registry returns for it, or the oci://...?digest= address or zip path of a
mirrored one (see tfmirror modules --help). NAMESPACE/NAME/SYSTEM means the
module on the registry:// host, or on registry.opentofu.org for mirrors.`

const lsExample = `  tfmirror ls ./mirror
  tfmirror ls                      # the mirrors of your CLI configuration
  tfmirror ls ./mirror --provider hashicorp/aws --version "~> 5.0" --platform linux_amd64
  tfmirror ls ./mirror --json | jq -r '.[].hashes[]'
  tfmirror ls https://mirror.corp/tf/ -p registry.terraform.io/hashicorp/aws -p registry.terraform.io/hashicorp/null
  tfmirror ls registry://registry.terraform.io -p hashicorp/null -v latest
  tfmirror ls registry://registry.opentofu.org --module terraform-aws-modules/vpc/aws -v ">= 5.0"`

func newLsCmd(env *Env) *cobra.Command {
	var sel selectionFlags
	var mods moduleFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls [MIRROR] [selection]",
		Short:   "List the packages in a place: provider, version, platform, hashes",
		Long:    lsLong,
		Example: lsExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("ls takes one MIRROR, or none for the mirrors of your CLI configuration (got %d arguments); see tfmirror ls --help", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				configured, err := defaultMirrors()
				if err != nil {
					return usageErr("reading your CLI configuration: %v (see tfmirror config)", err)
				}
				if len(configured) == 0 {
					return usageErr("ls: no MIRROR given, and your CLI configuration names no mirror in provider_installation (see tfmirror config)")
				}
				args = configured
			}
			if mods.set() {
				return runModulesLs(cmd, env, args[0], &sel, mods.modules, asJSON)
			}
			s, err := sel.selection()
			if err != nil {
				return err
			}
			var all []backends.Archive
			for _, arg := range args {
				if err := needsVersion(arg, s); err != nil {
					return err
				}
				r, err := openPlace(cmd.Context(), arg, env.placeOptions())
				if err != nil {
					return err
				}
				as, err := s.Resolve(cmd.Context(), r)
				printWarnings(cmd, r)
				if err != nil && len(args) > 1 {
					// One configured mirror that cannot be listed (a network
					// mirror with no --provider) does not hide the others.
					fmt.Fprintf(cmd.ErrOrStderr(), "tfmirror: %v\n", noCatalogue(err))
					continue
				}
				if err != nil {
					return noCatalogue(err)
				}
				all = append(all, as...)
			}
			return report.Packages(cmd.OutOrStdout(), all, asJSON)
		},
	}
	sel.add(cmd)
	mods.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of packages")
	return cmd
}
