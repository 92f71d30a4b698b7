package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	gosync "sync"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

const pruneLong = `Remove old packages from DST, a filesystem mirror or an OCI mirror. The plan
comes first: one row per package, remove or keep, and why. Nothing is removed
without --yes, or a "y" to the question asked when stdin is a terminal.

  --keep N            keep the newest N versions of each provider
  --spec FILE         keep only what the mirror spec FILE wants of DST: its
                      providers, at the versions it resolves to, for its
                      platforms (DST must be one of its destinations)
  --keep-locked DIR   keep every version a .terraform.lock.hcl under DIR locks
                      (repeatable; .terraform/ directories are skipped)

--keep and --spec say what goes (with both, what either drops); --keep-locked
only what stays, whatever they say. A provider the spec cannot resolve (its
source cannot be read) is kept whole. A version the spec wants that DST does
not hold for a platform (not synced yet, or it cannot be: a signature or the
policy refuses it, its download fails, the registry lists a version it does
not have) keeps the newest older version DST holds of that platform in its
place: prune never leaves a provider with less than the spec can have.
--keep-locked DIR follows links to directories (each directory read once).

A filesystem mirror is changed under each provider's lock, the one sync holds:
index.json and the <version>.json documents are rewritten without the packages
first, and only then are the archives deleted, so no index ever lists an
archive that is gone. A kill in between leaves archives that no index lists:
verify reports them, and the next prune removes them. A package another writer
replaced or listed after the plan was made is left.

An OCI mirror: each version's index is pushed again without the platforms
removed (and read back, as sync does, so another writer's platforms are
kept), a tag left with no platform is deleted, and then the platforms'
manifests are deleted where the registry allows deletes; where it does not,
prune says so. The zip blobs go with the registry's garbage collection.

Exits 1 when a package the plan removes is still there afterwards, 2 when the
command line is wrong.`

const pruneExample = `  tfmirror prune ./mirror --keep 3                      # the plan only
  tfmirror prune ./mirror --keep 3 --keep-locked ../infra --keep-locked ../platform --yes
  tfmirror prune ./mirror --spec mirror.hcl --yes
  tfmirror prune oci://registry.corp/tf/'${hostname}/${namespace}/${type}' --keep 5 -p hashicorp/aws --yes --json`

type pruneFlags struct {
	keep      int
	spec      string
	lockDirs  []string
	providers []string
	yes       bool
	asJSON    bool
	trust     trustFlags // --audit only
}

func newPruneCmd(env *Env) *cobra.Command {
	var f pruneFlags
	cmd := &cobra.Command{
		Use:     "prune DST [--keep N] [--keep-locked DIR...] [--spec FILE] [--yes]",
		Short:   "Remove old packages from a mirror, keeping the newest and the locked ones",
		Long:    pruneLong,
		Example: pruneExample,
		Args:    exactArgs(1, "DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrune(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.keep, "keep", 0, "keep the newest `N` versions of each provider, remove the older ones")
	fl.StringVar(&f.spec, "spec", "", "remove what the mirror spec `FILE` does not want of DST (its providers, versions and platforms); DST must be one of its destinations")
	fl.StringSliceVar(&f.lockDirs, "keep-locked", nil, "keep every version a .terraform.lock.hcl under `DIR` locks (repeatable)")
	fl.StringSliceVarP(&f.providers, "provider", "p", nil, "prune only this provider, HOST/NAMESPACE/TYPE or NAMESPACE/TYPE (repeatable)")
	fl.BoolVarP(&f.yes, "yes", "y", false, "remove what the plan says without asking")
	fl.BoolVar(&f.asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}: the plan (remove, keep), or with --yes what was done (keep, removed, left, error; warning and waiting: an OCI lock taken over, waited for)`)
	f.trust.addAudit(cmd)
	return cmd
}

// runPrune is prune: the retention from the flags, the plan, a
// confirmation, one call into sync.Prune, the result.
func runPrune(ctx context.Context, env *Env, f *pruneFlags, args []string, st streams) error {
	dstArg := args[0]
	ret, err := f.retention(ctx)
	if err != nil {
		return err
	}
	if f.spec != "" {
		s, w, d, err := specFor(ctx, env, st, f.spec, dstArg)
		if err != nil {
			return err
		}
		ret.Wanted = w.Retention(s, d)
	}
	r, err := openPlace(ctx, dstArg, env.placeOptions())
	if err != nil {
		return err
	}
	dst, ok := r.(backends.Remover)
	if !ok {
		return usageErr("%s: prune removes packages from a filesystem or OCI mirror; this place cannot be changed", dstArg)
	}
	plan, err := sync.PlanPrune(ctx, dst, ret)
	st.warnings(dst)
	if err != nil {
		return noCatalogue(err)
	}
	remove, _ := plan.Count()
	if !f.asJSON || !f.yes || remove == 0 {
		if err := report.Findings(st.stdout, plan.Findings(), f.asJSON); err != nil {
			return err
		}
		if !f.asJSON {
			fmt.Fprintf(st.stderr, "%s: %s\n", dst, report.Summary(plan.Findings()))
		}
	}
	if remove == 0 {
		return nil
	}
	if !f.yes && !st.confirm(fmt.Sprintf("Remove %d packages from %s? [y/N] ", remove, dst)) {
		fmt.Fprintln(st.stderr, "nothing removed: run again with --yes to remove them")
		return nil
	}
	aud, err := f.trust.openAudit("prune")
	if err != nil {
		return err
	}
	notices := func() []sync.Finding { return nil }
	if f.asJSON {
		notices = env.collectNotices(st)
	}
	res := auditPrune(ctx, aud, dst, plan, func() sync.PruneResult { return sync.Prune(ctx, dst, plan) })
	return st.closeAudit(aud, reportPrune(ctx, st, dst, plan, res, notices(), f.asJSON))
}

// collectNotices makes what the places say as it happens (an OCI
// repository lock waited for, taken over) rows of a JSON array, status
// waiting or warning, until the returned function ends it and gives them;
// a wait is also said on stderr at once, for whoever watches.
func (env *Env) collectNotices(st streams) func() []sync.Finding {
	var mu gosync.Mutex
	var rows []sync.Finding
	env.noticeMu.Lock()
	env.notices = func(n backends.Notice) {
		status := sync.StatusWarning
		if n.Kind == backends.NoticeWaiting {
			status = sync.StatusWaiting
			fmt.Fprintf(st.stderr, "%s: %s\n", n.Kind, backends.Printable(n.Message))
		}
		mu.Lock()
		rows = append(rows, sync.Finding{Status: status, Detail: n.Message})
		mu.Unlock()
	}
	env.noticeMu.Unlock()
	return func() []sync.Finding {
		env.noticeMu.Lock()
		env.notices = nil
		env.noticeMu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		return rows
	}
}

// retention is the rules the flags describe, with the lock files read.
func (f *pruneFlags) retention(ctx context.Context) (sync.Retention, error) {
	var ret sync.Retention
	if f.keep < 0 {
		return ret, usageErr("--keep %d: want a number of versions, 1 or more", f.keep)
	}
	if f.keep == 0 && f.spec == "" {
		return ret, usageErr("prune needs --keep N or --spec FILE to say what goes (--keep-locked only says what stays)")
	}
	ret.Keep = f.keep
	for _, p := range f.providers {
		pf, err := backends.ParseProviderFilter(p)
		if err != nil {
			return ret, usageErr("--provider: %v", err)
		}
		ret.Providers = append(ret.Providers, pf)
	}
	locked, err := lockedUnder(ctx, f.lockDirs)
	if err != nil {
		return ret, err
	}
	ret.Locked = locked
	return ret, nil
}

// lockedUnder reads every lock file under dirs. A lock file that cannot be
// read is a usage error: prune must not remove what it might lock.
func lockedUnder(ctx context.Context, dirs []string) (sync.LockedVersions, error) {
	locked := sync.LockedVersions{}
	for _, dir := range dirs {
		files, err := lockfile.Find(ctx, dir)
		if err != nil {
			return nil, usageErr("--keep-locked: %w", err)
		}
		if len(files) == 0 {
			return nil, usageErr("--keep-locked %s: no %s under it", dir, lockfile.DefaultName)
		}
		for _, file := range files {
			lf, err := lockfile.Load(file)
			if err != nil {
				return nil, usageErr("--keep-locked: %v", err)
			}
			for _, l := range lf.Providers() {
				locked.Add(l.Addr, l.Version, file)
			}
		}
	}
	return locked, nil
}

// confirm asks on the terminal; without one (a script, a pipe) the answer
// is no.
func (st streams) confirm(question string) bool {
	in, ok := st.stdin.(*os.File)
	if !ok || !term.IsTerminal(in.Fd()) {
		return false
	}
	fmt.Fprint(st.stderr, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

// reportPrune writes what prune did for each package the plan removed:
// removed, left or error (with --json, after the places' notices and the
// rows the plan kept, so the array describes every package and says what
// happened to the place); the place's notes on stderr.
func reportPrune(ctx context.Context, st streams, dst backends.Reader, plan *sync.PrunePlan, res sync.PruneResult, notices []sync.Finding, asJSON bool) error {
	rows := res.Findings
	if asJSON {
		rows = notices
		for _, f := range plan.Findings() {
			if f.Status == sync.StatusKeep {
				rows = append(rows, f)
			}
		}
		rows = append(rows, res.Findings...)
	} else {
		fmt.Fprintln(st.stdout)
	}
	if err := report.Findings(st.stdout, rows, asJSON); err != nil {
		return err
	}
	for _, n := range res.Notes {
		st.tell("note: %s", n)
	}
	if !asJSON {
		fmt.Fprintf(st.stderr, "%s: %s\n", dst, report.Summary(res.Findings))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !res.OK() {
		return errProblem
	}
	return nil
}
