package cli

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui"
)

// uiFlags are the flags of tfmirror [ui].
type uiFlags struct {
	sel     selectionFlags
	jobs    int
	modules []string
	spec    string
	locks   []string
	from    []string
	// commandTypos are the commands a place argument may be a typo of
	// (cobra's suggestions, from the command tree).
	commandTypos func(arg string) []string
}

func (u *uiFlags) add(cmd *cobra.Command) {
	u.commandTypos = func(arg string) []string {
		root := cmd.Root()
		if root.SuggestionsMinimumDistance <= 0 {
			root.SuggestionsMinimumDistance = 2 // cobra's default, set only when it suggests itself
		}
		return root.SuggestionsFor(arg)
	}
	u.sel.addBase(cmd)
	cmd.Flags().StringArrayVar(&u.locks, "lock", nil, "open on a .terraform.lock.hcl `FILE` (repeatable): its providers at their locked versions, the platforms it covers as columns, its gaps ○ (L queues them)")
	cmd.Flags().StringSliceVar(&u.from, "from", nil, "open on every .terraform.lock.hcl under `DIR` (repeatable), as --lock opens one")
	jobsVar(cmd.Flags(), &u.jobs, engine.DefaultJobs(), "how many archives to transfer at once")
	cmd.Flags().StringVar(&u.spec, "spec", "", "open on a mirror spec `FILE`: its destinations and sources are the mirrors, its wanted versions the rows of the matrix, S queues every gap")
	cmd.Flags().StringSliceVar(&u.modules, "module", nil, "show the module `[HOST/]NAMESPACE/NAME/SYSTEM` in the Modules view (m), beside providers (repeatable)")
}

// typosOf are the commands arg may be a typo of.
func (u *uiFlags) typosOf(arg string) []string {
	if u.commandTypos == nil {
		return nil
	}
	return u.commandTypos(arg)
}

func newUICmd(env *Env) *cobra.Command {
	var u uiFlags
	cmd := &cobra.Command{
		Use:   "ui [MIRROR...]",
		Short: "Browse, compare and sync mirrors in the terminal UI (the default command)",
		Long: `Open the terminal UI over the places given (directories, https://HOST/PATH/,
oci://REGISTRY/TEMPLATE, registry://HOST), or, with none, over the mirrors of
your Terraform/OpenTofu CLI configuration.

Pick a provider on the left (each shows its newest version); the matrix
shows its versions (rows) and platforms (columns), with one mark per compared
mirror: ◇ hashes stated and agreeing, not recomputed; ● verified (recomputed
from the bytes and matching what is stated); ◐ present, nothing stated to
compare; ○ missing; ≠ hashes differ from the first mirror's; ✗ verification
failed; - excluded by the CLI configuration's include/exclude (no gap);
! cannot list; · loading. / filters versions by text or by constraint
(>= 2.0, ~> 5.0), o shows only versions some mirror lacks. Select cells
(space, r for a row, c for a column), press enter to queue them to a writable
mirror; jobs run in the background while you browse, and each archive's
hashes are checked before it lands. v verifies; e shows every error and
warning in full; ? shows every key.

Network mirrors and registries cannot list their providers: name them with
--provider. --version and --platform narrow the matrix.

A release directory (goreleaser's dist/, or release zips with their
SHA256SUMS, .sig and the publisher's key beside them) is a read-only place:
name its provider with -p HOST/NAMESPACE/TYPE and check its signature with
--signing-key KEY. Its platforms are cells; selected and queued to an OCI
mirror (or any writable place) they land as tfmirror push lands them, the
signed SHA256SUMS kept beside them and the signer named in Details.

With --module, the UI opens on the Modules view (m switches between it and
providers): the modules named, and for the chosen one its versions against
every place that holds modules (registry://HOST, oci://REGISTRY/TEMPLATE, a
directory) with ◇ present, ○ missing, ≠ digest differs (OCI places), ! no
location. Details shows where each package lives. Select versions (space),
press enter to fetch and pack them into an OCI place or a directory.
NAMESPACE/NAME/SYSTEM means the module on the one registry:// place given, or
on registry.opentofu.org; --version narrows the versions.

With --spec FILE (no places given), the UI opens on a mirror spec: its
destinations are the compared mirrors, its sources follow; each provider's
matrix has a row for every version the spec wants, landed or not, and for no
other (o shows only those with gaps). S queues every
gap: each wanted package a destination lacks, from its source, to that
destination, confirmed in the queue dialog.

With --lock FILE (repeatable) or --from DIR (every .terraform.lock.hcl under
DIR, as check --from finds them), the UI opens on lock files: the list is
every locked provider, also those no place holds ("not in any"), each with
how many packages the compared mirrors lack, or "ok"; each matrix has the
locked versions as rows and, as columns, the platforms the lock covers: a
lock names hashes, not platforms, and a hash is tied to a platform by an
archive some place holds or a signed SHA256SUMS a place keeps (or an origin
registry:// signs with) naming the package zip, the rule check applies.
--platform adds columns. A gap ○ is a package init would miss on that
platform. Hashes tied to no package (the zh: of a release's _manifest.json,
which terraform providers lock records) are shown under the matrix and in
Details, never as gaps. L queues every gap from a source you pick, confirmed
in the queue dialog.`,
		Example: `  tfmirror ui ./mirror /srv/terraform/providers
  tfmirror ./mirror https://mirror.corp/terraform/providers/ -p registry.terraform.io/hashicorp/aws
  tfmirror ui ./mirror --version "~> 5.0" --platform linux_amd64 --platform darwin_arm64
  tfmirror ui registry://registry.opentofu.org ./modules --module terraform-aws-modules/vpc/aws -v ">= 5.0"
  tfmirror ui --spec mirror.hcl
  tfmirror ui ./dist 'oci://registry.example.com/tf/${namespace}/${type}' -p registry.opentofu.org/acme/alpha --signing-key dist/acme.asc`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUI(cmd.Context(), env, &u, args, streamsOf(cmd))
		},
	}
	u.add(cmd)
	return cmd
}

// defaultMirror is a mirror the user's CLI configuration names: a place
// argument, and which providers the clients install from it.
type defaultMirror struct {
	arg   string
	scope *ui.Scope // nil: every provider
}

// defaultMirrors are the mirrors the user's CLI configuration names in
// provider_installation, as place arguments, in order, for commands given
// none.
func defaultMirrors() ([]string, error) {
	ms, err := configuredMirrors()
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.arg
	}
	return out, err
}

// configuredMirrors are defaultMirrors with their include and exclude
// patterns, for the UI, which shows a provider a mirror is not used for as
// not applicable there, not missing.
func configuredMirrors() ([]defaultMirror, error) {
	c, err := cliconfig.Load(os.Getenv, "")
	if c == nil {
		return nil, err
	}
	var out []defaultMirror
	for _, m := range c.Mirrors {
		if m.Place == "" {
			continue
		}
		d := defaultMirror{arg: m.Place}
		if len(m.Include)+len(m.Exclude) > 0 {
			d.scope = &ui.Scope{Include: m.Include, Exclude: m.Exclude, DefaultHosts: clientHosts(c, m.File)}
		}
		out = append(out, d)
	}
	return out, err
}

// clientHosts are the default registries of the clients that read file:
// what a pattern written there without a hostname means.
func clientHosts(c *cliconfig.Config, file string) []string {
	var out []string
	for _, f := range c.Files {
		if f.Path != file {
			continue
		}
		for _, client := range f.Clients {
			switch client {
			case "terraform":
				out = append(out, "registry.terraform.io")
			case "tofu":
				out = append(out, "registry.opentofu.org")
			}
		}
	}
	return out
}

const noMirrorHelp = `no mirror given, and your Terraform/OpenTofu CLI configuration names none.

Open the UI on one or more places:
  tfmirror ui ./mirror https://mirror.corp/terraform/providers/

or add a mirror to ~/.terraformrc (or ~/.tofurc):
  provider_installation {
    filesystem_mirror {
      path = "/srv/terraform/providers"
    }
    direct {}
  }

or try the UI on a sample world:
  tfmirror demo`

// runUI opens the places and runs the UI over them.
func runUI(ctx context.Context, env *Env, u *uiFlags, args []string, st streams) error {
	if f, ok := st.stderr.(*os.File); ok && env.debug && term.IsTerminal(f.Fd()) {
		return usageErr("--debug writes to stderr, and the terminal UI is drawn on this terminal: send it elsewhere (tfmirror ui --debug ... 2>debug.log)")
	}
	if u.spec != "" {
		return runUISpec(ctx, env, u, args, st)
	}
	s, versioned, locks, err := uiSelection(ctx, u)
	if err != nil {
		return err
	}
	var scopes []*ui.Scope
	if len(args) == 0 {
		defaults, err := configuredMirrors()
		if err != nil {
			return usageErr("reading your CLI configuration: %v", err)
		}
		if len(defaults) == 0 {
			return usageErr("%s", noMirrorHelp)
		}
		for _, d := range defaults {
			args, scopes = append(args, d.arg), append(scopes, d.scope)
		}
	}
	withModules := len(u.modules) > 0
	mirrors := make([]ui.Mirror, 0, len(args))
	for i, a := range args {
		spec, err := place.Discover(ctx, a)
		if err != nil {
			return usageErr("%v", err)
		}
		// A registry named beside --module and no --provider is there for
		// its modules: it lists no providers, so none are fetched.
		if err := needsVersion(a, versioned); err != nil && (!withModules || len(s.Providers) > 0) {
			return err
		}
		r, err := place.Open(ctx, a, env.placeOptions())
		if err != nil && withModules && isModulePlace(ctx, a, env) {
			continue // a module place only (an OCI template of modules, a directory to create)
		}
		if err != nil && spec.Kind == place.FS {
			r, err = offerToCreate(ctx, env, st, u.typosOf, spec, i+1, err)
		}
		if err != nil {
			if spec.Kind == place.FS {
				if sugg := u.typosOf(a); len(sugg) > 0 && len(mirrors) == 0 {
					return usageErr("%v\n(is %q a typo of the command %q? see tfmirror --help)", err, a, sugg[0])
				}
			}
			return usageErr("%v", err)
		}
		m := ui.Mirror{Reader: r, Kind: string(spec.Kind), Number: i + 1}
		if i < len(scopes) {
			m.Scope = scopes[i]
		}
		mirrors = append(mirrors, m)
	}
	readers := make([]backends.Reader, len(mirrors))
	for i, m := range mirrors {
		readers[i] = m.Reader
	}
	if err := s.HostsUnknown(readers); err != nil && len(mirrors) > 0 {
		return err
	}
	mods, cleanup, err := uiModules(ctx, env, u.modules, args)
	if err != nil {
		return err
	}
	defer cleanup()
	if !st.isTerminal() {
		return usageErr("the UI needs a terminal; in scripts use tfmirror ls, diff, sync or verify")
	}
	return ui.Run(ctx, ui.Config{Mirrors: mirrors, Selection: s, Engine: env.engine(ctx, u.jobs), Modules: mods, Locks: locks})
}

// uiSelection is ui's selection and lock files; versioned is the
// selection as needsVersion sees it: lock files name the versions.
func uiSelection(ctx context.Context, u *uiFlags) (s, versioned sync.Selection, locks *ui.Locks, err error) {
	if s, err = u.sel.selection(); err != nil {
		return s, s, nil, err
	}
	if locks, err = uiLocks(ctx, u.locks, u.from); err != nil {
		return s, s, nil, err
	}
	versioned = s
	if locks != nil {
		versioned.Locked = map[backends.Provider]sync.Locked{}
	}
	return s, versioned, locks, nil
}

// uiLocks reads the lock files of ui --lock and --from (every
// .terraform.lock.hcl under each DIR, as check --from finds them); nil
// when neither is given.
func uiLocks(ctx context.Context, files, from []string) (*ui.Locks, error) {
	if len(files)+len(from) == 0 {
		return nil, nil
	}
	for _, dir := range from {
		paths, err := lockfile.Find(ctx, dir)
		if err != nil {
			return nil, usageErr("--from %w", err)
		}
		if len(paths) == 0 {
			return nil, usageErr("--from %s: no %s under it", dir, lockfile.DefaultName)
		}
		files = append(files, paths...)
	}
	l := &ui.Locks{}
	for _, path := range files {
		f, err := loadLockFile(path)
		if err != nil {
			return nil, err
		}
		l.Files = append(l.Files, path)
		for p, locked := range lockcheck.LockedFromFile(f, path) {
			l.Entries = append(l.Entries, ui.LockEntry{Provider: p, Locked: locked})
		}
	}
	if len(l.Entries) == 0 {
		return nil, usageErr("--lock %s: locks no provider: nothing to show", strings.Join(files, ", "))
	}
	return l, nil
}

// runUISpec opens the UI on a spec: it resolves the spec against its
// sources, opens its destinations, and hands both to the UI as its mirrors
// (destinations first), with what the spec wants.
func runUISpec(ctx context.Context, env *Env, u *uiFlags, args []string, st streams) error {
	if len(u.locks)+len(u.from) > 0 {
		return usageErr("ui takes --spec or --lock/--from, not both")
	}
	if len(args) > 0 || len(u.modules) > 0 {
		return usageErr("ui --spec takes no places and no --module: the spec names its destinations and sources (got %q)", append(args, u.modules...))
	}
	sf := specFlags{file: u.spec}
	sp, err := sf.load(nil, &u.sel)
	if err != nil {
		return err
	}
	var mirrors []ui.Mirror
	byArg := map[string]backends.Reader{}
	add := func(arg string, r backends.Reader) {
		byArg[arg] = r
		kind := ""
		if ps, err := place.Discover(ctx, arg); err == nil {
			kind = string(ps.Kind)
		}
		mirrors = append(mirrors, ui.Mirror{Reader: r, Kind: kind, Number: len(mirrors) + 1})
	}
	cfg := &ui.Spec{Path: sp.Path}
	for _, d := range sp.Destinations {
		if _, dup := byArg[d]; dup {
			continue
		}
		w, err := place.OpenWriter(ctx, d, env.placeOptions())
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		add(d, w)
	}
	open := func(ctx context.Context, arg string) (backends.Reader, error) {
		if r, ok := byArg[arg]; ok {
			return r, nil
		}
		r, err := openPlace(ctx, arg, env.placeOptions())
		if err == nil {
			add(arg, r)
		}
		return r, err
	}
	if cfg.Wanted, err = wantedWith(ctx, st, sp, open); err != nil {
		return err
	}
	for _, d := range cfg.Wanted.Destinations {
		cfg.Dests = append(cfg.Dests, slices.IndexFunc(mirrors, func(m ui.Mirror) bool { return m.Reader == byArg[d.Place] }))
	}
	if !st.isTerminal() {
		return usageErr("the UI needs a terminal; in scripts use tfmirror diff --spec or sync --spec")
	}
	return ui.Run(ctx, ui.Config{Mirrors: mirrors, Spec: cfg, Engine: env.engine(ctx, u.jobs)})
}

// isModulePlace reports whether arg opens as a module place.
func isModulePlace(ctx context.Context, arg string, env *Env) bool {
	_, err := modplace.Open(ctx, arg, env.placeOptions())
	return err == nil
}

// uiModules opens the UI's places as module places for --module, numbered
// as the header numbers the mirrors; places that hold no modules (network
// mirrors, OCI templates of providers) are left out of the Modules view.
// NAMESPACE/NAME/SYSTEM means the module on the one registry:// place, or
// on OpenTofu's default registry. cleanup removes the builder's temp dir.
func uiModules(ctx context.Context, env *Env, raw, args []string) (ui.ModulesConfig, func(), error) {
	var cfg ui.ModulesConfig
	if len(raw) == 0 {
		return cfg, func() {}, nil
	}
	host, registries := modules.DefaultHost, 0
	o := env.placeOptions()
	for i, a := range args {
		l, err := modplace.Open(ctx, a, o)
		if err != nil {
			continue
		}
		spec, _ := place.Discover(ctx, a)
		if spec.Kind == place.Registry {
			registries++
			host = defaultModuleHost(a)
		}
		cfg.Places = append(cfg.Places, ui.ModulePlace{Lister: l, Kind: string(spec.Kind), Number: i + 1})
	}
	if registries > 1 {
		host = modules.DefaultHost
	}
	mods, err := moduleArgs(raw, host)
	if err != nil {
		return cfg, nil, err
	}
	if len(cfg.Places) == 0 {
		return cfg, nil, usageErr("--module: none of the places holds modules: give registry://HOST, oci://REGISTRY/TEMPLATE, s3://BUCKET/PREFIX or a directory")
	}
	tmp, err := os.MkdirTemp("", "tfmirror-modules-")
	if err != nil {
		return cfg, nil, err
	}
	builder, err := modplace.Builder(o, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return cfg, nil, usageErr("%v", err)
	}
	cfg.Modules, cfg.Builder, cfg.ShowFirst = mods, builder, true
	// The builder's git mirrors are inside tmp, removed with it.
	return cfg, func() { _ = builder.Close(); os.RemoveAll(tmp) }, nil
}
