package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

func newVerifyCmd(env *Env) *cobra.Command {
	var sel selectionFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify MIRROR [selection]",
		Short: "Recompute every archive's hashes and compare them with what the place states",
		Long: `Recompute the h1: and zh: hashes of every selected archive and compare them with
every source of truth at hand: the mirror's <version>.json, OCI layer digests,
an origin registry's signed SHA256SUMS, and a lock file. Also reports archives
an index lists but that are missing, and archives present that an index does
not list (a network mirror serving the directory hides them; tfmirror sync
lists them). Exits 1 when anything is wrong.`,
		Example: `  tfmirror verify ./mirror
  tfmirror verify ./mirror --provider hashicorp/aws --json`,
		Args: exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sel.selection()
			if err != nil {
				return err
			}
			if err := needsVersion(args[0], s); err != nil {
				return err
			}
			r, err := openPlace(cmd.Context(), args[0], env.placeOptions())
			if err != nil {
				return err
			}
			// Findings are written as verified, a batch at a time (the
			// table's lines keep their cells until the last).
			fw := report.NewFindingWriter(cmd.OutOrStdout(), asJSON)
			err = sync.VerifyEach(cmd.Context(), r, s, sync.VerifyOptions{Hashing: env.hashing(), Signatures: signatures()}, fw.Add)
			printWarnings(cmd, r)
			if err != nil {
				if asJSON && fw.Len() > 0 {
					fw.Close() // the rows of the batches before, a whole array
				}
				return noCatalogue(err)
			}
			if err := fw.Close(); err != nil {
				return err
			}
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", r, fw.Summary())
			}
			if fw.Count(sync.StatusOK) != fw.Len() {
				return errProblem
			}
			return nil
		},
	}
	sel.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	return cmd
}
