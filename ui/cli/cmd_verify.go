package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

// verifyFlags are verify's options, bound to its flags.
type verifyFlags struct {
	sel    selectionFlags
	asJSON bool
}

func newVerifyCmd(env *Env) *cobra.Command {
	var f verifyFlags
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
			return runVerify(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	return cmd
}

// runVerify verifies the selected archives of the place args[0] names.
func runVerify(ctx context.Context, env *Env, f *verifyFlags, args []string, st streams) error {
	asJSON := f.asJSON
	s, err := f.sel.selection()
	if err != nil {
		return err
	}
	if err := needsVersion(args[0], s); err != nil {
		return err
	}
	r, err := openPlace(ctx, args[0], env.placeOptions())
	if err != nil {
		return err
	}
	// Findings are written as verified, a batch at a time (the
	// table's lines keep their cells until the last).
	fw := report.NewFindingWriter(st.stdout, asJSON)
	err = sync.VerifyEach(ctx, r, s, sync.VerifyOptions{Hashing: env.hashing(), Signatures: signatures()}, fw.Add)
	st.warnings(r)
	if err != nil {
		if asJSON && fw.Len() > 0 {
			_ = fw.Close() // the rows of the batches before, a whole array; err is the one to report
		}
		return noCatalogue(err)
	}
	if err := fw.Close(); err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(st.stderr, "%s: %s\n", r, fw.Summary())
	}
	if fw.Count(sync.StatusOK) != fw.Len() {
		return errProblem
	}
	return nil
}
