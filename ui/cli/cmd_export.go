package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends/bundle"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/report"
)

const exportLong = `Write the selected packages of SRC into one file, BUNDLE (a .tar), to carry
across an air gap and land there with tfmirror import.

The packages are synced, as tfmirror sync does (each archive verified against
every hash SRC states), into a staging mirror beside BUNDLE; then BUNDLE is
written whole and renamed into place. It is a tar of that filesystem mirror
(the zips, the index.json and VERSION.json documents, the provenance of
versions whose source kept it) with a manifest first that states every file's
size and SHA-256 and every archive's h1: and zh:, and the manifest's SHA-256
last. tar -xf alone turns it into a mirror the clients install from.

The same packages make the same bytes: the entries are sorted, their owners,
modes and times fixed. Nothing is written unless every package wanted was
synced; exits 1 otherwise.

With --spec FILE (or --from DIR) the spec says which providers, versions and
platforms; SRC, when given, is read instead of the spec's sources.

--policy FILE and --require-signature apply the trust policy as sync and
import do: a version signed by a key the policy does not pin for its provider,
or (with --require-signature, or OPENTOFU_ENFORCE_GPG_VALIDATION=true) one
without a valid signature, is not exported, and no bundle is written (exit 1).`

const exportExample = `  tfmirror export registry://registry.terraform.io providers.tar -p hashicorp/aws -v "~> 5.0" --platform linux_amd64
  tfmirror export ./mirror providers.tar
  tfmirror export providers.tar --spec mirror.hcl
  tfmirror export ./mirror providers.tar --spec mirror.hcl`

type exportFlags struct {
	sel   selectionFlags
	spec  specFlags
	trust trustFlags
	jobs  int
	json  bool
}

func newExportCmd(env *Env) *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:     "export SRC BUNDLE [selection] | export [SRC] BUNDLE --spec FILE",
		Short:   "Write the selected packages of SRC into one verified, reproducible bundle file",
		Long:    exportLong,
		Example: exportExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.spec.set() && (len(args) < 1 || len(args) > 2) {
				return usageErr("export --spec/--from takes [SRC] BUNDLE (got %d arguments)", len(args))
			}
			if !f.spec.set() {
				return exactArgs(2, "SRC and BUNDLE")(cmd, args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	f.spec.add(cmd)
	f.trust.addPolicy(cmd)
	jobsVar(cmd.Flags(), &f.jobs, engine.DefaultJobs(), "how many archives to transfer at once")
	cmd.Flags().BoolVar(&f.json, "json", false, `print one JSON event per line, each with a "type" field; the last is {"type":"summary",...} with "bundle", "written" and what it holds`)
	return cmd
}

// runExport syncs what is wanted into a staging mirror, then packs it.
func runExport(ctx context.Context, env *Env, f *exportFlags, args []string, st streams) error {
	out := args[len(args)-1]
	if !strings.HasSuffix(strings.ToLower(out), ".tar") {
		return usageErr("export: BUNDLE %q: name a .tar file to write", out)
	}
	// A directory for the bundle that does not exist yet is made, as sync
	// makes its DST; and removed again if nothing is written into it.
	made, err := mkdirFor(out)
	if err != nil {
		return usageErr("export: BUNDLE %s: %v", out, err)
	}
	defer func() {
		if _, statErr := os.Stat(out); statErr != nil {
			removeMade(made)
		}
	}()
	stage, err := bundle.NewStaging(out, env.hashing(), func(dir string) (bundle.Mirror, error) {
		m, err := fs.Open(out+" (staging)", dir, fs.Options{Hashing: env.hashing()})
		if err != nil {
			return nil, err
		}
		return m, nil
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := stage.Remove(); err != nil {
			fmt.Fprintf(st.stderr, "warning: the staging mirror beside %s was not removed: %v (the next export to it removes it)\n", out, err)
		}
	}()
	plans, problems, err := exportPlans(ctx, env, f, args, stage, st)
	if err != nil {
		return err
	}
	rep := env.syncReporter(st, f.json, false)
	for _, p := range problems {
		rep.Unavailable(p)
	}
	sum := sync.Sync(ctx, env.engine(ctx, f.jobs), stage.Mirror, false, rep, plans...)
	if !f.json {
		rep.Finish(sum)
	}
	extra := map[string]any{"bundle": out, "written": false}
	err = packExport(ctx, st, out, sum, len(problems), stage, extra)
	if f.json {
		// The summary is the last line, and says what was written.
		rep.FinishWith(sum, extra)
	}
	return err
}

// packExport writes the bundle when the run had every package wanted, and
// says in extra (the --json summary's fields) what it holds.
func packExport(ctx context.Context, st streams, out string, sum sync.Summary, problems int, stage *bundle.Staging, extra map[string]any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := summaryErr(ctx, sum); err != nil || problems > 0 {
		extra["error"] = "not every package wanted could be had"
		fmt.Fprintf(st.stderr, "%s: not written: not every package wanted could be had\n", out)
		return errProblem
	}
	if sum.Done+sum.Present == 0 {
		extra["error"] = "nothing was selected"
		return &exitError{code: exitProblem, err: fmt.Errorf("%s: not written: nothing was selected", out)}
	}
	man, err := stage.Pack(ctx)
	if err != nil {
		extra["error"] = err.Error()
		return err
	}
	extra["written"] = true
	for k, v := range bundleCounts(man) {
		extra[k] = v
	}
	fmt.Fprintf(st.stderr, "%s: %s\n", out, bundleSummary(man))
	return nil
}

// exportPlans are the plans of what the bundle holds: SRC's selection, or
// the spec's wants (read from SRC when it is given); problems are the
// spec's wants that cannot be had.
func exportPlans(ctx context.Context, env *Env, f *exportFlags, args []string, stage *bundle.Staging, st streams) ([]*sync.Plan, []report.SpecFinding, error) {
	pol, err := f.trust.trustPolicy()
	if err != nil {
		return nil, nil, err
	}
	opts := sync.PlanOptions{Hashing: env.hashing(), Trust: pol}
	if !f.spec.set() {
		s, err := f.sel.selection()
		if err != nil {
			return nil, nil, err
		}
		if err := needsVersion(args[0], s); err != nil {
			return nil, nil, err
		}
		src, err := openPlace(ctx, args[0], env.placeOptions())
		if err != nil {
			return nil, nil, err
		}
		plan, err := sync.MakePlan(ctx, src, stage.Mirror, s, opts)
		st.warnings(src)
		if err != nil {
			return nil, nil, noCatalogue(err)
		}
		return []*sync.Plan{plan}, nil, nil
	}
	sp, err := f.spec.load(args, &f.sel)
	if err != nil {
		return nil, nil, err
	}
	if len(args) == 2 {
		sp.Source = args[0]
		for i := range sp.Providers {
			sp.Providers[i].Source = ""
		}
	}
	if len(sp.Modules) > 0 {
		fmt.Fprintf(st.stderr, "note: %s: its %d module blocks are not exported: a bundle holds providers\n", sp.Path, len(sp.Modules))
	}
	w, err := wanted(ctx, env, st, sp)
	if err != nil {
		return nil, nil, err
	}
	var want []spec.Resolved
	if len(w.Destinations) > 0 {
		want = w.Destinations[0].Providers
	}
	planned, err := spec.Plan(ctx, spec.Destination{Place: args[len(args)-1], Providers: want}, stage.Mirror, opts)
	if err != nil {
		return nil, nil, err
	}
	problems := problemRows(w)
	var plans []*sync.Plan
	for _, p := range planned {
		if p.Plan != nil {
			plans = append(plans, p.Plan)
		}
	}
	for _, row := range plannedRows(args[len(args)-1], planned) {
		if row.Finding.Status == sync.StatusError {
			problems = append(problems, row)
		}
	}
	return plans, problems, nil
}

// bundleCounts are what a bundle holds, by --json field: archives,
// versions, providers, bytes and the versions with their signed SHA256SUMS.
func bundleCounts(m *bundle.Manifest) map[string]any {
	providers, versions, signed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var size int64
	for _, p := range m.Packages {
		providers[p.Provider] = true
		versions[p.Provider+" "+p.Version] = true
		if p.Signer != nil {
			signed[p.Provider+" "+p.Version] = true
		}
	}
	for _, f := range m.Files {
		size += f.Size
	}
	return map[string]any{"archives": len(m.Packages), "versions": len(versions), "providers": len(providers),
		"bundle_bytes": size, "signed_versions": len(signed)}
}

// bundleSummary says what a bundle holds.
func bundleSummary(m *bundle.Manifest) string {
	c := bundleCounts(m)
	s := fmt.Sprintf("%d archives of %d versions of %d providers (%s)", c["archives"], c["versions"], c["providers"], report.HumanBytes(c["bundle_bytes"].(int64)))
	if n := c["signed_versions"].(int); n > 0 {
		s += fmt.Sprintf(", %d versions with their signed SHA256SUMS", n)
	}
	return s
}
