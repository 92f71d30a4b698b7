package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

func newSyncCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var mods moduleFlags
	var asJSON, dryRun, force, verifyExisting, unpacked bool
	var jobs int
	cmd := &cobra.Command{
		Use:   "sync SRC DST [selection]",
		Short: "Copy the selected packages from SRC to DST, verified and atomically",
		Long: `Copy the packages DST lacks from SRC, concurrently. Each archive streams into a
hidden temp file in DST while its zh: hash is computed, then its h1: hash, and
both are checked against every hash the source states (a registry's signed
SHA256SUMS, a mirror's index, an OCI digest) and the lock file given with
--lock, before it is renamed into place: no half-written or unverified archive
is ever visible. DST's index documents are rewritten once per provider.

Incremental: packages DST already holds with the same hashes are skipped
without reading them (--verify-existing recomputes them). A package DST holds
with different hashes is a conflict and is left alone unless --force.
Transient errors (timeouts, resets, 5xx) are retried with backoff. Ctrl-C
cancels cleanly. Exits 1 when any package could not be synced.

With --module, sync mirrors module packages from a module registry
(registry://HOST; --version is required) into DST, an OCI registry or a
directory (DIR/HOST/NAMESPACE/NAME/SYSTEM/VERSION.zip). Each package is fetched
from the location the registry returns (an https archive, git:: with ?ref=
using the system's git, //subdir kept) and packed as a zip exactly as OpenTofu
extracts it; DST is left alone when it holds the same contents, and a version
DST holds with other contents is a conflict unless --force. At the end the
oci://...?digest= address of each version is printed, to use as a module
source (or run tfmirror modules rewrite).

` + moduleTemplateHelp,
		Example: `  tfmirror sync registry://registry.terraform.io ./mirror -p hashicorp/aws -v "~> 5.0" --platform linux_amd64 --platform darwin_arm64
  tfmirror sync ./mirror oci://registry.corp/tf/'${namespace}/${type}' --jobs 8
  tfmirror sync https://mirror.corp/tf/ ./mirror -p registry.terraform.io/hashicorp/null --dry-run
  tfmirror sync registry://registry.opentofu.org oci://registry.corp/modules/'${namespace}/${name}-${system}' --module terraform-aws-modules/vpc/aws -v "~> 5.0"`,
		Args: exactArgs(2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mods.set() {
				return runModulesSync(cmd, g, args, &sel, mods.modules, moduleSyncFlags{jobs: jobs, force: force, dryRun: dryRun, asJSON: asJSON})
			}
			ctx := cmd.Context()
			s, err := sel.selection()
			if err != nil {
				return err
			}
			if err := needsVersion(args[0], s); err != nil {
				return err
			}
			src, err := openPlace(ctx, args[0], g.placeOptions())
			if err != nil {
				return err
			}
			o := g.placeOptions()
			o.Unpacked = unpacked
			dst, err := place.OpenWriter(ctx, args[1], o)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			plan, err := sync.MakePlan(ctx, src, dst, s, sync.PlanOptions{VerifyExisting: verifyExisting, Hashing: g.hashing()})
			printWarnings(cmd, src)
			if err != nil {
				return err
			}
			if dryRun {
				return report.Findings(cmd.OutOrStdout(), plan.Findings(), asJSON)
			}
			specs, left := plan.Jobs(dst, force)
			problems := 0
			for _, it := range left {
				if it.Status == sync.StatusPresent {
					continue
				}
				problems++
				if !asJSON {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s %s: skipped: %s\n", it.Status, it.Archive.Package, it.Detail)
				}
			}
			mode, color, width := outputMode(cmd, asJSON)
			rep := report.NewSyncReporter(cmd.OutOrStdout(), mode, color, width)
			start := time.Now()
			eng := sync.NewEngine(ctx, sync.Options{Jobs: jobs, Hashing: g.hashing()})
			eng.Enqueue(specs...)
			eng.Close()
			t := rep.Run(eng.Events())
			if ctx.Err() == nil {
				for _, p := range plan.StaleIndexes() {
					if err := dst.Flush(ctx, p); err != nil {
						rep.Show(sync.IndexWritten{Dst: dst.String(), Provider: p, Err: err})
					}
				}
			}
			failed := t.Failures()
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s -> %s: %d synced (%s) in %s, %d already present, %d failed, %d skipped\n",
					src, dst, t.Counts()[sync.Done], report.HumanBytes(t.BytesMoved()), time.Since(start).Round(time.Millisecond),
					plan.Count(sync.StatusPresent), len(failed), problems)
				for _, j := range failed {
					fmt.Fprintf(cmd.ErrOrStderr(), "  failed: %s: %v\n", j.Info.Package, j.Err)
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if len(failed)+problems+len(t.IndexFails) > 0 {
				return errProblem
			}
			return nil
		},
	}
	sel.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, `print one JSON event per line, each with a "type" field`)
	f.BoolVar(&dryRun, "dry-run", false, "print the plan and change nothing")
	f.BoolVar(&force, "force", false, "replace archives DST holds with different hashes")
	f.BoolVar(&verifyExisting, "verify-existing", false, "recompute the hashes of archives already in DST instead of trusting what DST states")
	f.BoolVar(&unpacked, "unpacked", false, "write a filesystem DST in the unpacked layout (VERSION/OS_ARCH/ directories)")
	f.IntVar(&jobs, "jobs", sync.DefaultJobs(), "how many archives to transfer at once")
	mods.add(cmd)
	return cmd
}
