package cli

import (
	"context"
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

// diffFlags are diff's options, bound to its flags.
type diffFlags struct {
	sel                    selectionFlags
	spec                   specFlags
	asJSON, verifyExisting bool
}

func newDiffCmd(env *Env) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff SRC DST [selection] | diff --spec FILE | diff [SRC] DST --from DIR",
		Short: "Show the sync plan: what DST lacks, has, or has with different hashes",
		Long:  diffLong + specHelp,
		Example: `  tfmirror diff --spec mirror.hcl --json
  tfmirror diff ./mirror --from ../infra --platform linux_amd64
  tfmirror diff registry://registry.terraform.io ./mirror -p hashicorp/aws -v "~> 5.0" --platform linux_amd64
  tfmirror diff ./mirror oci://registry.corp/tf/'${namespace}/${type}' --json`,
		Args: f.spec.args(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	f.spec.add(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	cmd.Flags().BoolVar(&f.verifyExisting, "verify-existing", false, "recompute the hashes of archives already in DST instead of trusting what DST states")
	return cmd
}

// runDiff prints the plan of syncing SRC to DST, or the spec's plans.
func runDiff(ctx context.Context, env *Env, f *diffFlags, args []string, st streams) error {
	if f.spec.set() {
		sp, w, err := f.spec.wanted(ctx, env, st, args, &f.sel)
		if err != nil {
			return err
		}
		return specDiff(ctx, env, st, sp, w, f.asJSON, f.verifyExisting)
	}
	s, err := f.sel.selection()
	if err != nil {
		return err
	}
	if err := needsVersion(args[0], s); err != nil {
		return err
	}
	src, err := openPlace(ctx, args[0], env.placeOptions())
	if err != nil {
		return err
	}
	dst, cleanup, err := openDiffDst(ctx, env, args[1])
	if err != nil {
		return err
	}
	defer cleanup()
	plan, err := sync.MakePlan(ctx, src, dst, s, sync.PlanOptions{VerifyExisting: f.verifyExisting, Hashing: env.hashing()})
	st.warnings(src)
	st.warnings(dst)
	if err != nil {
		return err
	}
	findings := plan.Findings()
	if err := report.Findings(st.stdout, findings, f.asJSON); err != nil {
		return err
	}
	if !f.asJSON {
		fmt.Fprintf(st.stderr, "%s -> %s: %s\n", src, dst, report.Summary(findings))
	}
	if plan.Count(sync.StatusMissing)+plan.Count(sync.StatusConflict) > 0 {
		return errProblem
	}
	return nil
}

// openDiffDst opens diff's DST; a directory that does not exist yet is an
// empty mirror, so a first sync can be previewed.
func openDiffDst(ctx context.Context, env *Env, arg string) (backends.Reader, func(), error) {
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
	r, err := openPlace(ctx, arg, env.placeOptions())
	return r, func() {}, err
}
