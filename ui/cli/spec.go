package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/report"
)

// specHelp explains --spec and --from; the help of sync and diff include it.
const specHelp = `With --spec FILE, what to mirror comes from a mirror spec (see the README's
"Declarative mirrors"): every destination it names is made to hold every
provider version it wants, for its platforms, from its source (by default
each provider's origin registry); SRC and DST are not given. For example:

  destinations = ["./mirror", "oci://registry.corp/tf/${namespace}/${type}"]
  platforms    = ["linux_amd64", "darwin_arm64"]
  from         = ["../infra"]    # the providers these configurations require
  deny         = ["hashicorp/template"]

  provider "hashicorp/aws" {
    versions = "~> 5.0"           # or "latest", "latest 3", "latest 2, ~> 5.0"
  }
  provider "hashicorp/random" {
    versions  = "latest"
    platforms = ["linux_amd64"]
  }

--from DIR (repeatable) takes the providers the Terraform configurations under
DIR require: the required_providers of every module a configuration calls,
their constraints merged as terraform merges them (the newest version all of
them allow), or the version its .terraform.lock.hcl locks, whose hashes then
also check the archives. .terraform/ and hidden directories are skipped. With
--spec it adds to the spec's from; without, [SRC] DST are given (no SRC: each
provider's origin registry) and --platform names the platforms.

Exits 1 when anything wanted is missing or failed.`

// specFlags are --spec and --from.
type specFlags struct {
	file string
	from []string
}

func (s *specFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.file, "spec", "", "a mirror spec `FILE`: its destinations, providers, platforms and sources (SRC and DST are not given)")
	f.StringSliceVar(&s.from, "from", nil, "take the providers and versions the configurations and lock files under `DIR` require (repeatable)")
}

func (s *specFlags) set() bool { return s.file != "" || len(s.from) > 0 }

// args checks the positional arguments: none with --spec, [SRC] DST with
// --from alone, otherwise SRC and DST.
func (s *specFlags) args() cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case s.file != "" && len(args) > 0:
			return usageErr("%s --spec takes no SRC or DST: the spec names its source and destinations (got %q)", cmd.Name(), args)
		case s.file == "" && len(s.from) > 0 && (len(args) < 1 || len(args) > 2):
			return usageErr("%s --from takes [SRC] DST (without SRC, each provider's origin registry); got %d arguments", cmd.Name(), len(args))
		case !s.set():
			return exactArgs(2, "SRC and DST")(cmd, args)
		}
		return nil
	}
}

// load is the spec the flags describe: the file, with --from's
// directories added; or, from --from alone, [SRC] DST and --platform.
func (s *specFlags) load(args []string, sel *selectionFlags) (*spec.Spec, error) {
	if len(sel.providers) > 0 || sel.version != "" || sel.lock != "" {
		return nil, usageErr("--provider, --version and --lock do not go with --spec or --from: the spec and the configurations say what to mirror")
	}
	var from []string
	for _, d := range s.from {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usageErr("--from %s: %v", d, err)
		}
		from = append(from, abs)
	}
	if s.file != "" {
		if len(sel.platforms) > 0 {
			return nil, usageErr("--platform does not go with --spec: the spec's platforms say which")
		}
		sp, err := spec.Load(s.file)
		if err != nil {
			return nil, err
		}
		sp.From = append(sp.From, from...)
		return sp, nil
	}
	base, err := sel.baseSelection()
	if err != nil {
		return nil, err
	}
	sp := &spec.Spec{Path: "--from", From: from, Destinations: args[len(args)-1:], Platforms: base.Platforms, DefaultRegistry: spec.DefaultRegistry}
	if len(args) == 2 {
		sp.Source = args[0]
	}
	return sp, nil
}

// wanted loads the spec the flags name and resolves it (wanted).
func (s *specFlags) wanted(ctx context.Context, env *Env, st streams, args []string, sel *selectionFlags) (*spec.Spec, *spec.Wanted, error) {
	sp, err := s.load(args, sel)
	if err != nil {
		return nil, nil, err
	}
	w, err := wanted(ctx, env, st, sp)
	return sp, w, err
}

// wanted resolves sp against its sources, opened with the command's place
// options, and prints what was left out.
func wanted(ctx context.Context, env *Env, st streams, sp *spec.Spec) (*spec.Wanted, error) {
	open := func(ctx context.Context, arg string) (backends.Reader, error) {
		return openPlace(ctx, arg, env.placeOptions())
	}
	return wantedWith(ctx, st, sp, open)
}

// wantedWith is wanted with the sources opened by open.
func wantedWith(ctx context.Context, st streams, sp *spec.Spec, open spec.Opener) (*spec.Wanted, error) {
	w, err := sp.Wanted(ctx, open)
	if err != nil {
		return nil, err
	}
	mods, modNotes := sp.WantedModules()
	for _, n := range append(w.Notes, modNotes...) {
		st.tell("note: %s", n)
	}
	if len(w.Destinations) == 0 || len(w.Destinations[0].Providers)+len(w.Problems) == 0 {
		if len(mods) == 0 {
			return nil, usageErr("%s: nothing to mirror: no provider or module is wanted (the configurations under from require none, or allow/deny leave none)", sp.Path)
		}
	}
	return w, nil
}

// problemRows are the spec's unavailable wants, and the providers whose
// plan failed, as rows.
func problemRows(w *spec.Wanted) []report.SpecFinding {
	var out []report.SpecFinding
	for _, p := range w.Problems {
		f := sync.Finding{Package: backends.Package{Provider: p.Provider}, Status: sync.StatusUnavailable, Detail: p.Detail}
		if v, err := backends.ParseVersion(p.Version); err == nil {
			f.Package.Version = v
		}
		out = append(out, report.SpecFinding{Finding: f, Source: p.Source, From: p.From})
	}
	return out
}

// plannedRows are one destination's plan as rows, each naming what asked
// for its version; a provider whose plan failed is one error row.
func plannedRows(dst string, planned []spec.Planned) []report.SpecFinding {
	var out []report.SpecFinding
	for _, p := range planned {
		if p.Err != nil {
			out = append(out, report.SpecFinding{Finding: sync.Finding{Package: backends.Package{Provider: p.Provider}, Status: sync.StatusError, Detail: p.Err.Error()},
				Destination: dst, Source: p.Source.String(), From: allFrom(p.Resolved)})
			continue
		}
		for _, f := range p.Plan.Findings() {
			out = append(out, report.SpecFinding{Finding: f, Destination: dst, Source: p.Source.String(), From: p.From[f.Package.Version.String()]})
		}
	}
	return out
}

func allFrom(r spec.Resolved) []string {
	var out []string
	for _, v := range r.Versions() {
		out = append(out, r.From[v.String()]...)
	}
	return out
}

// specSync is sync --spec / --from: each destination in turn is planned
// and synced on an engine of its own; then the spec's modules; one summary.
func specSync(ctx context.Context, env *Env, f *syncFlags, args []string, st streams) error {
	sp, w, err := f.spec.wanted(ctx, env, st, args, &f.sel)
	if err != nil {
		return err
	}
	if f.dryRun {
		return specDiff(ctx, env, st, sp, w, f.asJSON, f.verifyExisting)
	}
	if err := specModuleRepositories(ctx, env, sp); err != nil {
		return err
	}
	pol, err := f.trust.trustPolicy()
	if err != nil {
		return err
	}
	aud, err := f.trust.openAudit("sync")
	if err != nil {
		return err
	}
	rep := env.lockReporter(st, f.asJSON, firstPlace(w), w.Assumed)
	problems := problemRows(w)
	for _, p := range problems {
		rep.Unavailable(p)
	}
	var sums []sync.Summary
	for _, d := range w.Destinations {
		o := env.placeOptions()
		o.Unpacked = f.unpacked
		dst, err := place.OpenWriter(ctx, d.Place, o)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		planned, err := spec.Plan(ctx, d, dst, sync.PlanOptions{VerifyExisting: f.verifyExisting, Hashing: env.hashing(), Trust: pol})
		if err != nil {
			return st.closeAudit(aud, err)
		}
		var plans []*sync.Plan
		for _, row := range plannedRows(d.Place, planned) {
			if row.Finding.Status == sync.StatusError {
				problems = append(problems, row)
				rep.Unavailable(row)
			}
		}
		for _, p := range planned {
			if p.Plan != nil {
				plans = append(plans, p.Plan)
			}
		}
		drep := env.syncReporter(st, f.asJSON, false)
		sum := sync.Sync(ctx, env.engine(ctx, f.jobs), dst, f.force, withAudit(drep, aud), plans...)
		drep.FinishDestination(sum)
		sums = append(sums, sum)
		if ctx.Err() != nil {
			break
		}
	}
	modSums, modErr := specModules(ctx, env, st, sp, moduleSyncFlags{jobs: f.jobs, force: f.force, asJSON: f.asJSON})
	sums = append(sums, modSums...)
	rep.FinishSpec(sp.Path, sums, len(problems))
	if err := st.closeAudit(aud, nil); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, s := range sums {
		if !s.OK() {
			return errProblem
		}
	}
	if len(problems) > 0 {
		return errProblem
	}
	return modErr
}

// specModules syncs the spec's module blocks (those allow and deny leave
// in), each with sync --module's code on an engine of its own, and
// returns their summaries; the first error opening one is returned once
// all have run.
func specModules(ctx context.Context, env *Env, st streams, sp *spec.Spec, f moduleSyncFlags) ([]sync.Summary, error) {
	var sums []sync.Summary
	var first error
	mods, _ := sp.WantedModules()
	for _, m := range mods {
		if ctx.Err() != nil {
			break
		}
		sel := &selectionFlags{version: m.Versions.String()}
		ms, err := openModuleSync(ctx, env, []string{m.Source, m.Destination}, sel, []string{m.Addr.String()})
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		specs, unsupplied := ms.specs(ctx, st, f.force)
		rep := env.syncReporter(st, f.asJSON, false)
		sum := ms.run(ctx, env, st, rep, specs, f)
		sum.Unsupplied = unsupplied
		rep.FinishDestination(sum)
		sums = append(sums, sum)
		ms.close()
	}
	return sums, first
}

// specModuleRepositories refuses, before anything is read or moves, a
// destination that the spec's module blocks name for several modules
// where its OCI template would put two of them in one repository: sync
// --module's rule, applied across the blocks (each of which is synced or
// planned on its own).
func specModuleRepositories(ctx context.Context, env *Env, sp *spec.Spec) error {
	mods, _ := sp.WantedModules()
	var dests []string
	byDest := map[string][]modules.Module{}
	for _, m := range mods {
		if _, seen := byDest[m.Destination]; !seen {
			dests = append(dests, m.Destination)
		}
		byDest[m.Destination] = append(byDest[m.Destination], m.Addr)
	}
	for _, d := range dests {
		if len(byDest[d]) < 2 {
			continue
		}
		dst, err := modplace.OpenWriter(ctx, d, env.placeOptions())
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		if err := distinctRepositories(d, dst, byDest[d]); err != nil {
			return err
		}
	}
	return nil
}

// specModuleRows are the spec's module blocks (those allow and deny leave
// in) as diff rows: each version the block selects in its registry,
// missing or present in its destination, or unavailable.
func specModuleRows(ctx context.Context, env *Env, st streams, sp *spec.Spec) ([]report.SpecFinding, error) {
	var rows []report.SpecFinding
	mods, _ := sp.WantedModules()
	for _, m := range mods {
		o := env.placeOptions()
		reg, err := modplace.OpenRegistry(m.Source, o)
		if err != nil {
			return nil, usageErr("%s: module %s: %v", m.At, m.Addr, err)
		}
		dst, err := modplace.OpenWriter(ctx, m.Destination, o)
		if err != nil {
			return nil, usageErr("%s: module %s: %v", m.At, m.Addr, err)
		}
		findings, warnings := sync.PlanModule(ctx, reg, dst, m.Addr, m.Versions)
		for _, w := range warnings {
			fmt.Fprintln(st.stderr, "warning:", w)
		}
		for _, f := range findings {
			row := report.SpecFinding{Finding: sync.Finding{Status: f.Status, Detail: f.Detail}, Module: f.Module.String(),
				Destination: m.Destination, Source: m.Source, From: []string{m.At}}
			if f.Version != nil {
				row.ModuleVersion = f.Version.String()
			}
			rows = append(rows, row)
		}
	}
	return rows, ctx.Err()
}

// specDiff is diff --spec (and sync --spec --dry-run): every destination's
// plan, one row per package with what asked for it; exit 1 when any
// destination lacks something wanted or holds something else.
func specDiff(ctx context.Context, env *Env, st streams, sp *spec.Spec, w *spec.Wanted, asJSON, verifyExisting bool) error {
	noteAssumed(st, nil, firstPlace(w), w.Assumed)
	if err := specModuleRepositories(ctx, env, sp); err != nil {
		return err
	}
	rows := problemRows(w)
	for _, d := range w.Destinations {
		dst, cleanup, err := openDiffDst(ctx, env, d.Place)
		if err != nil {
			return err
		}
		planned, err := spec.Plan(ctx, d, dst, sync.PlanOptions{VerifyExisting: verifyExisting, Hashing: env.hashing()})
		st.warnings(dst)
		cleanup()
		if err != nil {
			return err
		}
		rows = append(rows, plannedRows(d.Place, planned)...)
	}
	modRows, err := specModuleRows(ctx, env, st, sp)
	if err != nil {
		return err
	}
	rows = append(rows, modRows...)
	if err := report.SpecFindings(st.stdout, rows, asJSON); err != nil {
		return err
	}
	var findings []sync.Finding
	for _, r := range rows {
		findings = append(findings, r.Finding)
	}
	if !asJSON {
		mods, _ := sp.WantedModules()
		fmt.Fprintf(st.stderr, "%d destinations: %s\n", len(w.Destinations)+len(mods), report.Summary(findings))
	}
	for _, f := range findings {
		if f.Status != sync.StatusPresent {
			return errProblem
		}
	}
	return nil
}

// noteAssumed says which platforms the locks were assumed to be about
// (lockcheck.AssumedLine, the wording check, lock and the UI use too): as
// rep's notices ("note: ..." on stderr, {"type":"note"} lines with
// --json), or on stderr where there is no run.
func noteAssumed(st streams, rep *report.SyncReporter, place string, notes []string) {
	for _, n := range notes {
		if rep == nil {
			st.tell("note: %s", n)
			continue
		}
		rep.Notice(backends.Notice{Kind: "note", Place: place, Message: n})
	}
}

// lockReporter is env.reporter for a run selected by locks, having said
// which platforms they were assumed to be about (noteAssumed).
func (env *Env) lockReporter(st streams, asJSON bool, place string, assumed []string) *report.SyncReporter {
	rep := env.syncReporter(st, asJSON, false)
	noteAssumed(st, rep, place, assumed)
	return rep
}

// firstPlace is w's first destination, for notes about the run.
func firstPlace(w *spec.Wanted) string {
	if len(w.Destinations) == 0 {
		return ""
	}
	return w.Destinations[0].Place
}
