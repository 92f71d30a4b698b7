package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

const diffLong = `Compare the selected packages of SRC with DST and print the plan a sync would
carry out, one row per package: missing (DST lacks it), present (same hashes),
conflict (DST has a different archive), unavailable (SRC does not offer it).
Only listings and stated hashes are read, so it is fast; --verify-existing
recomputes the hashes of the archives already in DST.

Exits 1 when DST lacks something or holds a different archive, so it works as a
CI check.

With --spec or --from, the plan of every destination, each row naming the
spec blocks, configuration files and lock files that ask for its version
(--json: "destination", "source" and "from" fields); rows with status
unavailable are versions no source offers. Each version a module block
selects is a row too (--json: "module" in place of "provider"): missing, or
present when its destination holds that version (sync compares the contents
when it builds the package). `

func newDiffCmd(env *Env) *cobra.Command {
	var sel selectionFlags
	var sf specFlags
	var asJSON, verifyExisting bool
	cmd := &cobra.Command{
		Use:   "diff SRC DST [selection] | diff --spec FILE | diff [SRC] DST --from DIR",
		Short: "Show the sync plan: what DST lacks, has, or has with different hashes",
		Long:  diffLong + specHelp,
		Example: `  tfmirror diff --spec mirror.hcl --json
  tfmirror diff ./mirror --from ../infra --platform linux_amd64
  tfmirror diff registry://registry.terraform.io ./mirror -p hashicorp/aws -v "~> 5.0" --platform linux_amd64
  tfmirror diff ./mirror oci://registry.corp/tf/'${namespace}/${type}' --json`,
		Args: sf.args(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sf.set() {
				sp, err := sf.load(args, &sel)
				if err != nil {
					return err
				}
				w, err := wanted(cmd.Context(), env, streamsOf(cmd), sp)
				if err != nil {
					return err
				}
				return specDiff(cmd, env, sp, w, asJSON, verifyExisting)
			}
			s, err := sel.selection()
			if err != nil {
				return err
			}
			if err := needsVersion(args[0], s); err != nil {
				return err
			}
			src, err := openPlace(cmd.Context(), args[0], env.placeOptions())
			if err != nil {
				return err
			}
			dst, cleanup, err := openDiffDst(cmd, env, args[1])
			if err != nil {
				return err
			}
			defer cleanup()
			plan, err := sync.MakePlan(cmd.Context(), src, dst, s, sync.PlanOptions{VerifyExisting: verifyExisting, Hashing: env.hashing()})
			printWarnings(cmd, src)
			printWarnings(cmd, dst)
			if err != nil {
				return err
			}
			findings := plan.Findings()
			if err := report.Findings(cmd.OutOrStdout(), findings, asJSON); err != nil {
				return err
			}
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s -> %s: %s\n", src, dst, report.Summary(findings))
			}
			if plan.Count(sync.StatusMissing)+plan.Count(sync.StatusConflict) > 0 {
				return errProblem
			}
			return nil
		},
	}
	sel.add(cmd)
	sf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	cmd.Flags().BoolVar(&verifyExisting, "verify-existing", false, "recompute the hashes of archives already in DST instead of trusting what DST states")
	return cmd
}

// openDiffDst opens diff's DST; a directory that does not exist yet is an
// empty mirror, so a first sync can be previewed.
func openDiffDst(cmd *cobra.Command, env *Env, arg string) (backends.Reader, func(), error) {
	sp, err := place.Parse(arg)
	if err == nil && sp.Kind == place.FS {
		if _, statErr := os.Stat(sp.Target); errors.Is(statErr, os.ErrNotExist) {
			empty, err := os.MkdirTemp("", "tfmirror-diff-")
			if err != nil {
				return nil, nil, err
			}
			m, err := fs.Open(arg, empty, fs.Options{Hashing: env.hashing()})
			return m, func() { os.RemoveAll(empty) }, err
		}
	}
	r, err := openPlace(cmd.Context(), arg, env.placeOptions())
	return r, func() {}, err
}
