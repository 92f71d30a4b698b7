package cli

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	gosync "sync"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/report"
)

const syncLong = `Copy the packages DST lacks from SRC, concurrently. Each archive streams into a
hidden temp file in DST and is hashed as it arrives, then checked against every
hash the source states (a registry's signed SHA256SUMS, a mirror's index, an OCI
digest) and the lock file given with --lock, before it is renamed into place: no
half-written or unverified archive is ever visible. zh: is always computed; h1:
(every entry inflated) where some evidence needs it: a source or lock file that
states h1: without a matching zh:, or a source whose only word is the bytes' own
address (an OCI digest, a directory without index documents); --hashes all
computes it everywhere. DST's index documents are rewritten once per provider
and list the hashes verified or computed, never others.

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

` + moduleTemplateHelp

const syncExample = `  tfmirror sync --spec mirror.hcl
  tfmirror sync ./mirror --from ../infra --from ../platform --platform linux_amd64 --platform darwin_arm64
  tfmirror sync registry://registry.terraform.io ./mirror -p hashicorp/aws -v "~> 5.0" --platform linux_amd64 --platform darwin_arm64
  tfmirror sync ./mirror oci://registry.corp/tf/'${namespace}/${type}' --jobs 8
  tfmirror sync https://mirror.corp/tf/ ./mirror -p registry.terraform.io/hashicorp/null --dry-run
  tfmirror sync registry://registry.opentofu.org oci://registry.corp/modules/'${namespace}/${name}-${system}' --module terraform-aws-modules/vpc/aws -v "~> 5.0"`

// syncFlags are sync's own flags.
type syncFlags struct {
	sel                                             selectionFlags
	mods                                            moduleFlags
	spec                                            specFlags
	trust                                           trustFlags
	asJSON, dryRun, force, verifyExisting, unpacked bool
	jobs                                            int
	dstOptions                                      func(*place.Options) // publish's, on DST's
}

func newSyncCmd(env *Env) *cobra.Command {
	var f syncFlags
	cmd := &cobra.Command{
		Use:     "sync SRC DST [selection] | sync --spec FILE | sync [SRC] DST --from DIR",
		Short:   "Copy the selected packages from SRC to DST, verified and atomically",
		Long:    syncLong + "\n\n" + trustHelp + "\n\n" + specHelp,
		Example: syncExample,
		Args:    f.spec.args(),
		RunE: func(cmd *cobra.Command, args []string) error {
			overlapSyscalls() // every sync lands files, whatever says what to land
			return runSync(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.addRunFlags(cmd, env, "DST", "")
	cmd.Flags().BoolVar(&f.unpacked, "unpacked", false, "write a filesystem DST in the unpacked layout (VERSION/OS_ARCH/ directories)")
	f.mods.add(cmd)
	f.spec.add(cmd)
	f.trust.add(cmd)
	return cmd
}

// addRunFlags adds the selection and the flags of a run into dst (its
// name in the help), sync's and publish's; forceNote follows --force's.
func (f *syncFlags) addRunFlags(cmd *cobra.Command, env *Env, dst, forceNote string) {
	f.sel.add(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, `print one JSON event per line, each with a "type" field; the last is {"type":"summary",...}`)
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	fl.BoolVar(&f.force, "force", false, "replace archives "+dst+" holds with different hashes"+forceNote)
	fl.BoolVar(&f.verifyExisting, "verify-existing", false, "recompute the hashes of archives already in "+dst+" instead of trusting what "+dst+" states")
	jobsVar(fl, &f.jobs, engine.DefaultJobs(), "how many archives to transfer at once")
	env.addHashesFlag(cmd, "in the index documents")
}

// runSync is sync: of a spec (--spec, --from), of modules (--module), or
// of providers from SRC to DST.
func runSync(ctx context.Context, env *Env, f *syncFlags, args []string, st streams) error {
	if f.spec.set() {
		if f.mods.set() {
			return usageErr("--module does not go with --spec or --from: put module blocks in the spec")
		}
		return specSync(ctx, env, f, args, st)
	}
	if f.mods.set() {
		return modulesSync(ctx, env, args, &f.sel, f.mods.modules, moduleSyncFlags{jobs: f.jobs, force: f.force, dryRun: f.dryRun, asJSON: f.asJSON}, st)
	}
	return syncProviders(ctx, env, f, args[0], args[1], st)
}

// syncProviders is sync of providers: plan, one run on an engine, the
// summary.
func syncProviders(ctx context.Context, env *Env, f *syncFlags, srcArg, dstArg string, st streams) error {
	s, err := f.sel.selection()
	if err != nil {
		return err
	}
	if err := needsVersion(srcArg, s); err != nil {
		return err
	}
	src, err := openPlace(ctx, srcArg, env.placeOptions())
	if err != nil {
		return err
	}
	// Refused before DST is created, where that is known without asking.
	if err := s.HostsUnknown([]backends.Reader{src}); err != nil {
		return err
	}
	o := env.placeOptions()
	o.Unpacked = f.unpacked
	if f.dstOptions != nil {
		f.dstOptions(&o)
	}
	dst, err := place.OpenWriter(ctx, dstArg, o)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	pol, err := f.trust.trustPolicy()
	if err != nil {
		return err
	}
	opts := sync.PlanOptions{VerifyExisting: f.verifyExisting, Hashing: env.hashing(), Trust: pol}
	// --lock selects the platforms the lock is about (issue 34): another
	// platform of the version would fail against it, and is none of its
	// business.
	assumed := lockcheck.AboutLocks(ctx, &s, []backends.Reader{src, dst})
	if f.dryRun {
		noteAssumed(st, nil, dst.String(), assumed)
		plan, err := sync.MakePlan(ctx, src, dst, s, opts)
		st.warnings(src)
		if err != nil {
			return err
		}
		return report.Findings(st.stdout, plan.Findings(), f.asJSON)
	}
	aud, err := f.trust.openAudit("sync")
	if err != nil {
		return err
	}
	// The plan goes into the run provider by provider as it is made: a
	// re-sync of 100,000 present archives never holds it whole.
	collectLessOften()
	rep := env.lockReporter(st, f.asJSON, dst.String(), assumed)
	run := sync.NewRun(dst, f.force, withAudit(rep, aud))
	err = sync.PlanEach(ctx, src, dst, s, opts, func(part *sync.Plan) error {
		run.Add(part)
		return nil
	})
	st.warnings(src)
	if err != nil {
		if f.asJSON || ctx.Err() != nil {
			// What was planned has been reported: the summary still ends
			// the output, saying the run did not happen (an interrupt
			// says so as during the run; another error is told once,
			// by itself, in text).
			rep.Finish(run.Abandon(ctx, err))
		}
		return st.closeAudit(aud, err)
	}
	sum := run.Finish(ctx, env.engine(ctx, f.jobs))
	rep.Finish(sum)
	return st.closeAudit(aud, summaryErr(ctx, sum))
}

// collectLessOften lets the heap grow to three times what is live before a
// collection, not twice (unless GOGC says otherwise): a sync streaming its
// plan keeps a few providers' listings live, not its archives, so the
// headroom is a few megabytes, and a no-op re-sync of 100,000 archives
// spends 6 % less CPU (a third fewer collections) for 30 more bytes of
// peak memory an archive; a small sync is not slowed.
func collectLessOften() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}

// overlapSyscalls lets twice as many goroutines run at once as there are
// cores (unless GOMAXPROCS says otherwise). Landing archives in a
// directory is system calls more than computation (creating, writing,
// linking, syncing files), and each holds its goroutine's processor for a
// few to tens of microseconds, too short for the runtime to lend the
// processor to another goroutine meanwhile; with spare processors the
// runnable ones run beside it, and the kernel keeps the cores busy.
// Landing 10,000 tiny archives took 8 % less time (for 4 % more CPU) on 2
// cores; a sync from a registry and a no-op re-sync of 100,000 archives
// took the same. What computes (hashing) stays one worker per core. Once
// per process: a second sync in it (tests run many) does not double again.
var overlapSyscalls = gosync.OnceFunc(func() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2 * runtime.GOMAXPROCS(0))
	}
})
