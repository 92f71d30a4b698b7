package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/modules/rewrite"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

// moduleTemplateHelp explains the OCI repository template for modules; the
// help texts of sync and modules rewrite include it.
const moduleTemplateHelp = `An OCI destination for modules is oci://REGISTRY[:PORT]/PATH, where PATH may
use ${hostname}, ${namespace}, ${name} and ${system} (the parts of the module
address HOST/NAMESPACE/NAME/SYSTEM), e.g.
oci://registry.corp/modules/${namespace}/${name}-${system} (quote it in
shells). Values are lowercased and characters OCI repository names do not
allow become "-". Each version is one image manifest (artifactType
application/vnd.opentofu.modulepkg, one archive/zip layer) tagged with the
version, "+" written "_". A template without placeholders names one
repository, for one module.`

// moduleFlags is --module, which turns ls and sync to modules.
type moduleFlags struct{ modules []string }

func (m *moduleFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&m.modules, "module", nil, "list or sync the packages of the module `[HOST/]NAMESPACE/NAME/SYSTEM` instead of providers (repeatable)")
}

func (m *moduleFlags) set() bool { return len(m.modules) > 0 }

// moduleArgs parses --module values; NAMESPACE/NAME/SYSTEM means that module
// on defaultHost.
func moduleArgs(raw []string, defaultHost string) ([]modules.Module, error) {
	var out []modules.Module
	seen := map[modules.Module]bool{}
	for _, s := range raw {
		m, err := modules.ParseModule(s, defaultHost)
		if err != nil {
			return nil, usageErr("--module: %v", err)
		}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out, nil
}

// onlyModuleSelection refuses provider selection flags next to --module.
func onlyModuleSelection(sel *selectionFlags) (backends.VersionConstraint, error) {
	if len(sel.providers) > 0 || len(sel.platforms) > 0 {
		return backends.VersionConstraint{}, usageErr("--module lists modules, which have no --provider or --platform")
	}
	c, err := backends.ParseVersionConstraint(sel.version)
	if err != nil {
		return c, usageErr("--version: %v", err)
	}
	return c, nil
}

// defaultModuleHost is the host NAMESPACE/NAME/SYSTEM means at a place: the
// registry's own, or OpenTofu's default registry for mirrors.
func defaultModuleHost(arg string) string {
	if s, err := place.Parse(arg); err == nil && s.Kind == place.Registry {
		if h, err := backends.NormalizeHostname(s.Target); err == nil {
			return h
		}
	}
	return modules.DefaultHost
}

// runModulesLs is ls --module.
func runModulesLs(ctx context.Context, env *Env, arg string, sel *selectionFlags, raw []string, asJSON bool, st streams) error {
	c, err := onlyModuleSelection(sel)
	if err != nil {
		return err
	}
	mods, err := moduleArgs(raw, defaultModuleHost(arg))
	if err != nil {
		return err
	}
	l, err := modplace.Open(ctx, arg, env.placeOptions())
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	rows := []report.ModuleRow{}
	failed := false
	for _, m := range mods {
		ls, err := l.ListModule(ctx, m, c)
		for _, w := range ls.Warnings {
			fmt.Fprintln(st.stderr, "warning:", w)
		}
		if err != nil {
			fmt.Fprintf(st.stderr, "tfmirror: %v\n", err)
			failed = true
			continue
		}
		if len(ls.Items) == 0 {
			fmt.Fprintf(st.stderr, "tfmirror: %s: %s: no version matches %q\n", l, m, c)
			failed = true
		}
		for _, it := range ls.Items {
			row := report.ModuleRow{Module: m.String(), Version: it.Version.String(), Listed: it.Listed, Location: it.Location, Digest: it.Digest, SHA256: it.SHA256, Revision: it.Revision}
			if row.Listed == row.Version {
				row.Listed = ""
			}
			if it.Err != nil {
				row.Error = it.Err.Error()
				failed = true
			}
			rows = append(rows, row)
		}
	}
	if err := report.ModuleRows(st.stdout, rows, asJSON); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failed {
		return errProblem
	}
	return nil
}

type moduleSyncFlags struct {
	jobs                  int
	force, dryRun, asJSON bool
}

// modulesSync is sync --module: the registry's packages of the selected
// versions are fetched, packed and stored in DST; each version's source
// address is printed at the end.
func modulesSync(ctx context.Context, env *Env, args []string, sel *selectionFlags, raw []string, f moduleSyncFlags, st streams) error {
	ms, err := openModuleSync(ctx, env, args, sel, raw)
	if err != nil {
		return err
	}
	defer ms.close()
	specs, unsupplied := ms.specs(ctx, st, f.force)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if f.dryRun {
		var rows []report.ModuleRow
		for _, s := range specs {
			rows = append(rows, report.ModuleRow{Module: s.Module.String(), Version: s.Version.String(), Location: s.Location.String()})
		}
		if err := report.ModuleRows(st.stdout, rows, f.asJSON); err != nil {
			return err
		}
		if unsupplied > 0 {
			return errProblem
		}
		return nil
	}
	rep := env.syncReporter(st, f.asJSON, false)
	sum := ms.run(ctx, env, st, rep, specs, f)
	sum.Unsupplied = unsupplied
	rep.Finish(sum)
	return summaryErr(ctx, sum)
}

// run carries out the module jobs on an engine of their own, reporting
// to rep (which the caller finishes), and prints where each version
// landed.
func (ms *moduleSync) run(ctx context.Context, env *Env, st streams, rep *report.SyncReporter, specs []sync.ModuleJobSpec, f moduleSyncFlags) sync.Summary {
	rep.Noun("modules")
	tasks := sync.ModuleTasks(specs)
	eng := env.engine(ctx, f.jobs)
	sum := sync.RunTasks(ctx, eng, ms.reg.String(), ms.dst.String(), rep, tasks)
	results := sync.ModuleResults(tasks)
	for _, r := range results {
		if r.Err == nil && r.Stored.Present {
			sum.Done, sum.Present = sum.Done-1, sum.Present+1 // nothing moved: it was there
		}
	}
	report.ModuleSources(st.stdout, results, f.asJSON)
	return sum
}

// moduleSync is what sync --module works with: the registry, the modules
// named on it, the constraint, the destination and a builder that packs
// packages in a temp dir.
type moduleSync struct {
	reg     *modules.Registry
	mods    []modules.Module
	c       backends.VersionConstraint
	dst     modules.Writer
	builder *fetch.Builder
	close   func()
}

// openModuleSync checks sync --module's arguments and opens its places.
func openModuleSync(ctx context.Context, env *Env, args []string, sel *selectionFlags, raw []string) (*moduleSync, error) {
	c, err := onlyModuleSelection(sel)
	if err != nil {
		return nil, err
	}
	if c.IsZero() {
		return nil, usageErr("%s: syncing modules needs --version (e.g. \"~> 5.0\", \">= 1.2, < 2.0\" or latest): a registry keeps every release ever made", args[0])
	}
	o := env.placeOptions()
	reg, err := modplace.OpenRegistry(args[0], o)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	mods, err := moduleArgs(raw, reg.Host())
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if m.Host != reg.Host() {
			return nil, usageErr("--module %s: the source is the registry %s; name modules on it (NAMESPACE/NAME/SYSTEM)", m, reg.Host())
		}
	}
	dst, err := modplace.OpenWriter(ctx, args[1], o)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if err := distinctRepositories(args[1], dst, mods); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "tfmirror-modules-")
	if err != nil {
		return nil, err
	}
	builder, err := modplace.Builder(o, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, &exitError{code: exitUsage, err: err}
	}
	// The builder's git mirrors are inside tmp, removed with it.
	return &moduleSync{reg: reg, mods: mods, c: c, dst: dst, builder: builder,
		close: func() { _ = builder.Close(); os.RemoveAll(tmp) }}, nil
}

// distinctRepositories refuses an OCI template that would put two modules
// in one repository.
func distinctRepositories(arg string, dst modules.Writer, mods []modules.Module) error {
	store, ok := dst.(*modoci.Store)
	if !ok {
		return nil
	}
	repos := map[string]modules.Module{}
	for _, m := range mods {
		r, err := store.Repository(m)
		if err != nil {
			return usageErr("%v", err)
		}
		if prev, dup := repos[r]; dup {
			return usageErr("%s: %s and %s would share the repository %s; use ${namespace}, ${name} and ${system} in the template", arg, prev, m, r)
		}
		repos[r] = m
	}
	return nil
}

// specs lists the selected versions of every module and returns their
// jobs, and how many versions (or modules) could not be supplied; it says
// why for each on stderr.
func (ms *moduleSync) specs(ctx context.Context, st streams, force bool) ([]sync.ModuleJobSpec, int) {
	errw := st.stderr
	var specs []sync.ModuleJobSpec
	unsupplied := 0
	for _, m := range ms.mods {
		ls, err := ms.reg.ListModule(ctx, m, ms.c)
		for _, w := range ls.Warnings {
			fmt.Fprintln(errw, "warning:", w)
		}
		if err != nil {
			fmt.Fprintf(errw, "tfmirror: %v\n", err)
			unsupplied++
			continue
		}
		if len(ls.Items) == 0 {
			fmt.Fprintf(errw, "tfmirror: %s: %s: no version matches %q\n", ms.reg, m.Short(), ms.c)
			unsupplied++
			continue
		}
		ss, unavailable := sync.ModuleJobs(ls, ms.reg.String(), ms.builder, ms.dst, force)
		for _, it := range unavailable {
			fmt.Fprintf(errw, "unavailable %s %s: skipped: %v\n", m, it.Version, it.Err)
			unsupplied++
		}
		specs = append(specs, ss...)
	}
	return specs, unsupplied
}

func newModulesCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "modules",
		Short: "Work with mirrored module packages (rewrite configurations to use them)",
		Long: `Module packages are mirrored with the provider commands and --module:

  tfmirror ls registry://HOST --module NAMESPACE/NAME/SYSTEM [-v CONSTRAINT]
  tfmirror sync registry://HOST DST --module NAMESPACE/NAME/SYSTEM -v CONSTRAINT

and configurations are pointed at the mirror with tfmirror modules rewrite.

` + moduleTemplateHelp,
		Example: `  tfmirror sync registry://registry.opentofu.org oci://registry.corp/modules/'${namespace}/${name}-${system}' --module terraform-aws-modules/vpc/aws -v "~> 5.0"
  tfmirror modules rewrite ./infra --oci oci://registry.corp/modules/'${namespace}/${name}-${system}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown command %q for %q; see %s --help", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newModulesRewriteCmd(env))
	return cmd
}

// modulesRewriteFlags are modules rewrite's options, bound to its flags.
type modulesRewriteFlags struct {
	tmpl, defaultHost string
	write, byTag      bool
}

func newModulesRewriteCmd(env *Env) *cobra.Command {
	var o modulesRewriteFlags
	cmd := &cobra.Command{
		Use:   "rewrite DIR --oci TEMPLATE [--write] [--tag]",
		Short: "Point a configuration's registry modules at their mirrored oci:// packages",
		Long: `Rewrite the module blocks of the configuration in DIR (its .tf and .tofu files,
not subdirectories) whose source is a registry address,
[HOST/]NAMESPACE/NAME/SYSTEM[//SUBDIR], to the oci:// address of the newest
mirrored version their version argument allows (no version argument: the newest
that is not a prerelease), pinned by digest (--tag: by tag). The version
argument is removed: OpenTofu installs oci:// sources (OpenTofu 1.10 and later)
and refuses version constraints on them. Other sources, comments and
formatting are left as they are.

The unified diff is printed; files are changed only with --write (atomically).
Blocks that cannot be rewritten (nothing mirrored, no version matches, a
computed source or version) are listed on stderr and make the exit status 1.

NAMESPACE/NAME/SYSTEM sources mean the module on --default-host
(registry.opentofu.org, OpenTofu's default); it matters only to templates that
use ${hostname}.

` + moduleTemplateHelp,
		Example: `  tfmirror modules rewrite ./infra --oci oci://registry.corp/modules/'${namespace}/${name}-${system}'
  tfmirror modules rewrite ./infra --oci oci://registry.corp/modules/'${namespace}/${name}-${system}' --write
  tfmirror modules rewrite . --oci oci://registry.corp/m/'${hostname}/${namespace}/${name}/${system}' --default-host registry.terraform.io --tag`,
		Args: exactArgs(1, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runModulesRewrite(cmd.Context(), env, &o, args, streamsOf(cmd))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tmpl, "oci", "", "the OCI mirror's `TEMPLATE`, as given to sync: oci://REGISTRY/PATH with ${hostname}, ${namespace}, ${name}, ${system}")
	f.BoolVar(&o.write, "write", false, "change the files (default: only print the diff)")
	f.BoolVar(&o.byTag, "tag", false, "pin by tag (?tag=VERSION) instead of by digest")
	f.StringVar(&o.defaultHost, "default-host", modules.DefaultHost, "the registry host NAMESPACE/NAME/SYSTEM sources mean")
	return cmd
}

// runModulesRewrite points the registry module blocks of the configuration
// in args[0] at their mirrored oci:// packages.
func runModulesRewrite(ctx context.Context, env *Env, o *modulesRewriteFlags, args []string, st streams) error {
	tmpl := o.tmpl
	if tmpl == "" {
		return usageErr("modules rewrite needs --oci TEMPLATE, e.g. %s", modules.ExampleTemplate)
	}
	if !strings.HasPrefix(tmpl, "oci://") {
		tmpl = "oci://" + tmpl
	}
	store, err := modplace.OpenOCI(tmpl, env.placeOptions())
	if err != nil {
		return usageErr("--oci: %v", err)
	}
	if fi, err := os.Stat(args[0]); err != nil || !fi.IsDir() {
		return usageErr("%s: not a directory", args[0])
	}
	files, problems, err := rewrite.Rewrite(ctx, args[0], rewrite.Options{Resolver: store, DefaultHost: o.defaultHost, ByTag: o.byTag})
	if err != nil {
		return err
	}
	return reportRewrite(ctx, st.stdout, st.stderr, files, problems, o.write)
}

func reportRewrite(ctx context.Context, out, errw io.Writer, files []rewrite.File, problems []rewrite.Problem, write bool) error {
	changed, blocks := 0, 0
	for _, f := range files {
		d := f.Diff()
		if d == "" {
			continue
		}
		fmt.Fprint(out, d)
		changed++
		blocks += len(f.Changes)
		if write {
			if err := f.Write(); err != nil {
				return fmt.Errorf("write %s: %w", f.Path, err)
			}
		}
	}
	for _, p := range problems {
		fmt.Fprintf(errw, "not rewritten: %s\n", p)
	}
	switch {
	case blocks == 0 && len(problems) > 0:
		fmt.Fprintf(errw, "no module block rewritten; %d could not be (see above)\n", len(problems))
	case blocks == 0:
		fmt.Fprintln(errw, "no module block to rewrite")
	case write:
		fmt.Fprintf(errw, "%d module blocks rewritten in %d files\n", blocks, changed)
	default:
		fmt.Fprintf(errw, "%d module blocks would be rewritten in %d files (run again with --write to change them)\n", blocks, changed)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(problems) > 0 {
		return errProblem
	}
	return nil
}
