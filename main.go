// Command tfmirror browses, compares, syncs and verifies private
// Terraform/OpenTofu provider mirrors. This file only wires the command line;
// the work is done in backends/, sync/, hashing/ and ui/.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	gosync "sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modoci"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/modules/rewrite"
	"github.com/tfmirror/tfmirror/backends/netmirror"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/lockfile"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui"
	"github.com/tfmirror/tfmirror/ui/demo"
	"github.com/tfmirror/tfmirror/ui/report"
)

// Exit codes, as the command-line contract fixes them.
const (
	exitOK      = 0
	exitProblem = 1
	exitUsage   = 2
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// problem is returned when the command ran and found something wrong; the
// report has already said what.
var errProblem = &exitError{code: exitProblem, err: errors.New("problems found (see above)")}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := newRootCmd()
	err := cmd.ExecuteContext(ctx)
	os.Exit(exitCode(cmd, err))
}

func exitCode(cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee != errProblem {
			fmt.Fprintln(cmd.ErrOrStderr(), "tfmirror:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "tfmirror:", err)
	if errors.Is(err, backends.ErrUsage) {
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		return 130
	}
	return exitProblem
}

// globalFlags are shared by every command.
type globalFlags struct {
	maxUnpacked int64
	caCert      string
	plainHTTP   bool
	insecure    bool

	// creds are the credentials every place of one command uses, read once.
	credsOnce gosync.Once
	httpCreds backends.Credentials
	ociCreds  credentials.Store
}

func (g *globalFlags) hashing() hashing.Options { return hashing.Options{MaxUnpacked: g.maxUnpacked} }

func (g *globalFlags) placeOptions() place.Options {
	g.credsOnce.Do(g.loadCredentials)
	return place.Options{Hashing: g.hashing(), CACertFile: g.caCert, PlainHTTP: g.plainHTTP, Insecure: g.insecure,
		Credentials: g.httpCreds, OCICredentials: g.ociCreds}
}

// loadCredentials reads the CLI configuration's credentials blocks and
// oci_credentials, with TF_TOKEN_* and the container tools' files; a
// configuration that does not parse leaves only the environment (`tfmirror
// config` says why).
func (g *globalFlags) loadCredentials() {
	c, _ := cliconfig.Load(os.Getenv, "")
	if c == nil {
		g.httpCreds = backends.EnvCredentials(os.Environ())
		return
	}
	g.httpCreds = c.Credentials(os.Environ())
	ambient, err := oci.DefaultCredentials()
	if err != nil {
		ambient = nil
	}
	g.ociCreds = c.OCIStore(ambient)
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "tfmirror",
		Short: "Browse, compare, sync and verify private Terraform/OpenTofu provider mirrors",
		Long: `tfmirror browses, compares, syncs and verifies private Terraform/OpenTofu
provider mirrors: filesystem mirrors (a directory), network mirrors
(https://HOST/PATH/), origin registries (registry://HOST) and OCI registries in
OpenTofu's oci_mirror layout (oci://REGISTRY/TEMPLATE).`,
		Example: `  tfmirror ls ./mirror
  tfmirror hash ./mirror/registry.terraform.io/hashicorp/null/*.zip
  tfmirror verify ./mirror --provider hashicorp/aws`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().Int64Var(&g.maxUnpacked, "max-unpacked", hashing.DefaultMaxUnpacked,
		"the most bytes hashing one zip may unpack (a guard against zip bombs); -1 for no limit")
	root.PersistentFlags().StringVar(&g.caCert, "ca-cert", "",
		"PEM `FILE` of extra CA certificates to trust for https:// and registry:// places, such as the one tfmirror serve writes")
	root.PersistentFlags().BoolVar(&g.plainHTTP, "plain-http", false, "talk plain HTTP to oci:// registries (local test registries; OpenTofu itself needs HTTPS)")
	root.PersistentFlags().BoolVar(&g.insecure, "insecure", false, "do not verify the TLS certificates of oci:// registries")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(newLsCmd(g), newHashCmd(g), newVerifyCmd(g))
	root.AddCommand(newDiffCmd(g), newSyncCmd(g))
	root.AddCommand(newModulesCmd(g))
	root.AddCommand(newPushCmd(g))
	root.AddCommand(newUICmd(g), newDemoCmd(g))
	// With no subcommand, tfmirror opens the UI (tfmirror [MIRROR...]).
	var rootUI uiFlags
	rootUI.add(root)
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error { return runUI(cmd, g, &rootUI, args) }
	root.AddCommand(newServeCmd(g))
	root.AddCommand(newLockCmd(g), newCheckCmd(g), newConfigCmd(g))
	return root
}

// selectionFlags are the selection shared by ls, verify, diff, sync, lock,
// check and push.
type selectionFlags struct {
	providers []string
	version   string
	platforms []string
	lock      string
}

func (s *selectionFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVarP(&s.providers, "provider", "p", nil, "provider HOST/NAMESPACE/TYPE, or NAMESPACE/TYPE on any host (repeatable)")
	f.StringVarP(&s.version, "version", "v", "", `version constraint ("~> 5.0", ">= 1.2, < 2.0", "= 1.4.2") or "latest"; default every version`)
	f.StringSliceVar(&s.platforms, "platform", nil, "platform OS_ARCH, e.g. linux_amd64 (repeatable); default every platform")
	f.StringVar(&s.lock, "lock", "", "a .terraform.lock.hcl `FILE`: only its providers at their locked versions, and archives are also checked against its hashes")
}

// selection is the selection the flags describe, with --lock's providers,
// versions and hashes.
func (s *selectionFlags) selection() (sync.Selection, error) {
	sel, err := s.baseSelection()
	if err != nil || s.lock == "" {
		return sel, err
	}
	f, err := loadLockFile(s.lock)
	if err != nil {
		return sel, err
	}
	sel.Locked = sync.LockedFromFile(f, s.lock)
	return sel, nil
}

// baseSelection is the selection without --lock, for commands that give the
// flag another meaning (lock writes the file).
func (s *selectionFlags) baseSelection() (sync.Selection, error) {
	var sel sync.Selection
	for _, p := range s.providers {
		f, err := backends.ParseProviderFilter(p)
		if err != nil {
			return sel, usageErr("--provider: %v", err)
		}
		sel.Providers = append(sel.Providers, f)
	}
	c, err := backends.ParseVersionConstraint(s.version)
	if err != nil {
		return sel, usageErr("--version: %v", err)
	}
	sel.Versions = c
	for _, p := range s.platforms {
		plat, err := backends.ParsePlatform(p)
		if err != nil {
			return sel, usageErr("--platform: %v", err)
		}
		sel.Platforms = append(sel.Platforms, plat)
	}
	return sel, nil
}

// needsVersion refuses an origin registry source without --version (or a
// lock file): a registry keeps every release ever made, and reading one costs
// a metadata request per version and platform.
func needsVersion(arg string, s sync.Selection) error {
	if sp, err := place.Parse(arg); err == nil && sp.Kind == place.Registry && s.Versions.IsZero() && s.Locked == nil {
		return usageErr("%s: an origin registry needs --version (e.g. \"~> 5.0\", \">= 1.2, < 2.0\" or latest): it keeps every release ever made", arg)
	}
	return nil
}

// noCatalogue makes "name the providers" a usage error: the place cannot
// list them and the command line named none.
func noCatalogue(err error) error {
	if errors.Is(err, backends.ErrNoCatalogue) {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}

func openPlace(ctx context.Context, arg string, o place.Options) (backends.Reader, error) {
	r, err := place.Open(ctx, arg, o)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return r, nil
}

// printWarnings reports the junk a place tolerated.
func printWarnings(cmd *cobra.Command, r backends.Reader) {
	if w, ok := r.(backends.Warner); ok {
		for _, msg := range w.Warnings() {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", msg)
		}
	}
}

func newLsCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var mods moduleFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [MIRROR] [selection]",
		Short: "List the packages in a place: provider, version, platform, hashes",
		Long: `List the packages a place holds, one per provider x version x platform, with
the hashes the place states for each (its index documents, OCI digests or
signed checksums) and their size where known.

Without MIRROR, ls lists every mirror your Terraform/OpenTofu CLI configuration
names in provider_installation (see tfmirror config).

Network mirrors (https://HOST/PATH/) and origin registries (registry://HOST)
cannot list their providers: the protocols have no catalogue, so name the
providers to look at with --provider HOST/NAMESPACE/TYPE (or --lock). For a
registry, NAMESPACE/TYPE means that provider on the registry's host, and
--version is required: a registry keeps every release ever made, and listing one
costs a request per version and platform. A registry's packages carry the
hashes of its signed SHA256SUMS; a network mirror's, those of its
<version>.json. Sizes are shown where the place states them.

With --module, ls lists module packages instead: the versions of each module
(--version filters them) and where each package lives: the location a module
registry returns for it, or the oci://...?digest= address or zip path of a
mirrored one (see tfmirror modules --help). NAMESPACE/NAME/SYSTEM means the
module on the registry:// host, or on registry.opentofu.org for mirrors.`,
		Example: `  tfmirror ls ./mirror
  tfmirror ls                      # the mirrors of your CLI configuration
  tfmirror ls ./mirror --provider hashicorp/aws --version "~> 5.0" --platform linux_amd64
  tfmirror ls ./mirror --json | jq -r '.[].hashes[]'
  tfmirror ls https://mirror.corp/tf/ -p registry.terraform.io/hashicorp/aws -p registry.terraform.io/hashicorp/null
  tfmirror ls registry://registry.terraform.io -p hashicorp/null -v latest
  tfmirror ls registry://registry.opentofu.org --module terraform-aws-modules/vpc/aws -v ">= 5.0"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("ls takes one MIRROR, or none for the mirrors of your CLI configuration (got %d arguments); see tfmirror ls --help", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				configured, err := defaultMirrors()
				if err != nil {
					return usageErr("reading your CLI configuration: %v (see tfmirror config)", err)
				}
				if len(configured) == 0 {
					return usageErr("ls: no MIRROR given, and your CLI configuration names no mirror in provider_installation (see tfmirror config)")
				}
				args = configured
			}
			if mods.set() {
				return runModulesLs(cmd, g, args[0], &sel, mods.modules, asJSON)
			}
			s, err := sel.selection()
			if err != nil {
				return err
			}
			var all []backends.Archive
			for _, arg := range args {
				if err := needsVersion(arg, s); err != nil {
					return err
				}
				r, err := openPlace(cmd.Context(), arg, g.placeOptions())
				if err != nil {
					return err
				}
				as, err := s.Resolve(cmd.Context(), r)
				printWarnings(cmd, r)
				if err != nil && len(args) > 1 {
					// One configured mirror that cannot be listed (a network
					// mirror with no --provider) does not hide the others.
					fmt.Fprintf(cmd.ErrOrStderr(), "tfmirror: %v\n", noCatalogue(err))
					continue
				}
				if err != nil {
					return noCatalogue(err)
				}
				all = append(all, as...)
			}
			return report.Packages(cmd.OutOrStdout(), all, asJSON)
		},
	}
	sel.add(cmd)
	mods.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of packages")
	return cmd
}

func newHashCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "hash PATH...",
		Short: "Print the h1: and zh: hashes of provider zips and unpacked directories",
		Long: `Print the hashes Terraform and OpenTofu use for provider packages: h1: (Go's
dirhash over the files in a zip or an unpacked directory) and zh: (SHA-256 of
the zip file; zips only). The values are those the clients write in
.terraform.lock.hcl and in a mirror's <version>.json.`,
		Example: `  tfmirror hash terraform-provider-null_3.2.1_linux_amd64.zip
  tfmirror hash ./mirror/registry.terraform.io/hashicorp/null/3.2.1/linux_amd64 --json`,
		Args: minArgs(1, "PATH..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rows []report.HashRow
			failed := false
			for _, p := range args {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				sums, err := hashing.HashPath(p, g.hashing())
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "tfmirror: hash %s: %v\n", p, err)
					failed = true
					continue
				}
				rows = append(rows, report.HashRow{Path: p, H1: sums.H1, ZH: sums.ZH})
			}
			if err := report.Hashes(cmd.OutOrStdout(), rows, asJSON); err != nil {
				return err
			}
			if failed {
				return errProblem
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"path","h1","zh"}`)
	return cmd
}

func newVerifyCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify MIRROR [selection]",
		Short: "Recompute every archive's hashes and compare them with what the place states",
		Long: `Recompute the h1: and zh: hashes of every selected archive and compare them with
every source of truth at hand: the mirror's <version>.json, OCI layer digests,
an origin registry's signed SHA256SUMS, and a lock file. Also reports archives
an index lists but that are missing. Exits 1 when anything is wrong.`,
		Example: `  tfmirror verify ./mirror
  tfmirror verify ./mirror --provider hashicorp/aws --json`,
		Args: exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sel.selection()
			if err != nil {
				return err
			}
			if err := needsVersion(args[0], s); err != nil {
				return err
			}
			r, err := openPlace(cmd.Context(), args[0], g.placeOptions())
			if err != nil {
				return err
			}
			findings, err := sync.VerifyPlace(cmd.Context(), r, s, g.hashing())
			printWarnings(cmd, r)
			if err != nil {
				return noCatalogue(err)
			}
			if err := report.Findings(cmd.OutOrStdout(), findings, asJSON); err != nil {
				return err
			}
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", r, report.Summary(findings))
			}
			for _, f := range findings {
				if f.Status != sync.StatusOK {
					return errProblem
				}
			}
			return nil
		},
	}
	sel.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	return cmd
}

// minArgs is cobra.MinimumNArgs as a usage error that names the arguments.
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s takes %s (got %d arguments); see %s --help", cmd.Name(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// exactArgs is cobra.ExactArgs with a message that names the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s takes %s (got %d arguments); see %s --help", cmd.Name(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func newDiffCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var asJSON, verifyExisting bool
	cmd := &cobra.Command{
		Use:   "diff SRC DST [selection]",
		Short: "Show the sync plan: what DST lacks, has, or has with different hashes",
		Long: `Compare the selected packages of SRC with DST and print the plan a sync would
carry out, one row per package: missing (DST lacks it), present (same hashes),
conflict (DST has a different archive), unavailable (SRC does not offer it).
Only listings and stated hashes are read, so it is fast; --verify-existing
recomputes the hashes of the archives already in DST.

Exits 1 when DST lacks something or holds a different archive, so it works as a
CI check.`,
		Example: `  tfmirror diff registry://registry.terraform.io ./mirror -p hashicorp/aws -v "~> 5.0" --platform linux_amd64
  tfmirror diff ./mirror oci://registry.corp/tf/'${namespace}/${type}' --json`,
		Args: exactArgs(2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sel.selection()
			if err != nil {
				return err
			}
			if err := needsVersion(args[0], s); err != nil {
				return err
			}
			src, err := openPlace(cmd.Context(), args[0], g.placeOptions())
			if err != nil {
				return err
			}
			dst, err := openPlace(cmd.Context(), args[1], g.placeOptions())
			if err != nil {
				return err
			}
			plan, err := sync.MakePlan(cmd.Context(), src, dst, s, sync.PlanOptions{VerifyExisting: verifyExisting, Hashing: g.hashing()})
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
	cmd.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	cmd.Flags().BoolVar(&verifyExisting, "verify-existing", false, "recompute the hashes of archives already in DST instead of trusting what DST states")
	return cmd
}

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

// outputMode picks live progress on a terminal, plain lines otherwise, and
// colour only on a terminal without NO_COLOR.
func outputMode(cmd *cobra.Command, asJSON bool) (report.SyncMode, bool, int) {
	if asJSON {
		return report.JSONLines, false, 0
	}
	f, ok := cmd.OutOrStdout().(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return report.Plain, false, 0
	}
	width, _, err := term.GetSize(f.Fd())
	if err != nil {
		width = 80
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	return report.Live, !noColor, width
}

func newServeCmd(g *globalFlags) *cobra.Command {
	var addr, certFile, keyFile, certOut string
	cmd := &cobra.Command{
		Use:   "serve DIR [--addr HOST:PORT] [--tls-cert F --tls-key F] [--cert-out FILE]",
		Short: "Serve a filesystem mirror as a network mirror over HTTPS",
		Long: `Serve a filesystem mirror directory over HTTPS with the Provider Network Mirror
Protocol, so Terraform and OpenTofu can install from it with a network_mirror
block. index.json and <version>.json are built from the zips on disk (a
directory without them is fine); hashes are computed on first request and
cached. Where the directory's own <version>.json states hashes that the zip
does not match, only those are served, so clients refuse the zip. Unpacked
packages are not served. Nothing outside DIR is served, symlinks included.

Without --tls-cert/--tls-key a self-signed certificate is made for 127.0.0.1,
::1, localhost and the --addr host, and written to --cert-out (default: a file
in the temp directory; the path is printed). Clients trust it with
SSL_CERT_FILE (set SSL_CERT_DIR to it as well), tfmirror with --ca-cert.

One line per request goes to stderr. Ctrl-C or SIGTERM stops it gracefully.
Mirrors must be served at an https URL, and provider hostnames with a port do
not work through network mirrors in either client.`,
		Example: `  tfmirror serve ./mirror
  tfmirror serve ./mirror --addr 0.0.0.0:8443 --tls-cert mirror.crt --tls-key mirror.key
  tfmirror serve ./mirror --addr 127.0.0.1:9443 --cert-out ./mirror-ca.pem &
  SSL_CERT_FILE=./mirror-ca.pem SSL_CERT_DIR=./mirror-ca.pem terraform init`,
		Args: exactArgs(1, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (certFile == "") != (keyFile == "") {
				return usageErr("serve: give both --tls-cert and --tls-key, or neither for a self-signed certificate")
			}
			if certFile != "" && certOut != "" {
				return usageErr("serve: --cert-out is where a generated certificate goes; with --tls-cert there is none")
			}
			sp, err := place.Parse(args[0])
			if err != nil || sp.Kind != place.FS {
				return usageErr("serve: %s: give a filesystem mirror directory", args[0])
			}
			m, err := fs.Open(args[0], sp.Target, fs.Options{Hashing: g.hashing()})
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			out := cmd.OutOrStdout()
			err = netmirror.Serve(cmd.Context(), m, netmirror.ServeOptions{
				Addr: addr, CertFile: certFile, KeyFile: keyFile, CertOut: certOut,
				Logger:  log.New(cmd.ErrOrStderr(), "", log.LstdFlags),
				Hashing: g.hashing(),
				Ready: func(s netmirror.Serving) {
					fmt.Fprintf(out, "Serving %s as a network mirror at %s\n", args[0], s.URL)
					if s.CertOut != "" {
						fmt.Fprintf(out, "Self-signed certificate (for %s) written to %s\n", strings.Join(s.Hosts, ", "), s.CertOut)
						fmt.Fprintf(out, "Clients trust it with: SSL_CERT_FILE=%s SSL_CERT_DIR=%s\n", s.CertOut, s.CertOut)
						fmt.Fprintf(out, "tfmirror trusts it with: --ca-cert %s\n", s.CertOut)
					}
					fmt.Fprintf(out, "\nAdd to the CLI configuration (~/.terraformrc, or the file TF_CLI_CONFIG_FILE names):\n\n")
					fmt.Fprintf(out, "provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n\n", s.URL)
					fmt.Fprintln(out, "Requests are logged to stderr; Ctrl-C stops.")
				},
			})
			printWarnings(cmd, m)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", netmirror.DefaultAddr, "HOST:PORT to listen on (port 0 picks a free one)")
	f.StringVar(&certFile, "tls-cert", "", "PEM certificate to serve (with --tls-key)")
	f.StringVar(&keyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&certOut, "cert-out", "", "where to write the generated self-signed certificate (default: tfmirror-serve-PORT.pem in the temp directory)")
	return cmd
}

// uiFlags are the flags of tfmirror [ui].
type uiFlags struct {
	sel     selectionFlags
	jobs    int
	modules []string
}

func (u *uiFlags) add(cmd *cobra.Command) {
	u.sel.add(cmd)
	cmd.Flags().IntVar(&u.jobs, "jobs", sync.DefaultJobs(), "how many archives to transfer at once")
	cmd.Flags().StringSliceVar(&u.modules, "module", nil, "show the module `[HOST/]NAMESPACE/NAME/SYSTEM` in the Modules view (m), beside providers (repeatable)")
}

func newUICmd(g *globalFlags) *cobra.Command {
	var u uiFlags
	cmd := &cobra.Command{
		Use:   "ui [MIRROR...]",
		Short: "Browse, compare and sync mirrors in the terminal UI (the default command)",
		Long: `Open the terminal UI over the places given (directories, https://HOST/PATH/,
oci://REGISTRY/TEMPLATE, registry://HOST), or, with none, over the mirrors of
your Terraform/OpenTofu CLI configuration.

Pick a provider on the left; the matrix shows its versions (rows) and
platforms (columns), with one mark per compared mirror: ● present (hashes
stated and agreeing), ◐ present but not yet verified, ○ missing, ✗ hashes
differ. Select cells (space, r for a row, c for a column), press enter to
queue them to a writable mirror; jobs run in the background while you browse,
and each archive's hashes are checked before it lands. v verifies, ? shows
every key.

Network mirrors and registries cannot list their providers: name them with
--provider. --version and --platform narrow the matrix.

With --module, the UI opens on the Modules view (m switches between it and
providers): the modules named, and for the chosen one its versions against
every place that holds modules (registry://HOST, oci://REGISTRY/TEMPLATE, a
directory) with ● present, ○ missing, ✗ digest differs (OCI places), ! no
location. Details shows where each package lives. Select versions (space),
press enter to fetch and pack them into an OCI place or a directory.
NAMESPACE/NAME/SYSTEM means the module on the one registry:// place given, or
on registry.opentofu.org; --version narrows the versions.`,
		Example: `  tfmirror ui ./mirror /srv/terraform/providers
  tfmirror ./mirror https://mirror.corp/terraform/providers/ -p registry.terraform.io/hashicorp/aws
  tfmirror ui ./mirror --version "~> 5.0" --platform linux_amd64 --platform darwin_arm64
  tfmirror ui registry://registry.opentofu.org ./modules --module terraform-aws-modules/vpc/aws -v ">= 5.0"`,
		RunE: func(cmd *cobra.Command, args []string) error { return runUI(cmd, g, &u, args) },
	}
	u.add(cmd)
	return cmd
}

// defaultMirrors returns the mirrors of the user's Terraform/OpenTofu CLI
// configuration as place arguments, for the UI when it is given none.
// SEAM: backends/cliconfig (being written) will supply them; until it lands
// there are none and the UI explains how to name one.
// defaultMirrors are the mirrors the user's CLI configuration names in
// provider_installation, as place arguments, in order.
func defaultMirrors() ([]string, error) {
	ms, err := cliconfig.Mirrors(os.Getenv, "")
	var out []string
	for _, m := range ms {
		if m.Place != "" {
			out = append(out, m.Place)
		}
	}
	return out, err
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
func runUI(cmd *cobra.Command, g *globalFlags, u *uiFlags, args []string) error {
	ctx := cmd.Context()
	s, err := u.sel.selection()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		if args, err = defaultMirrors(); err != nil {
			return usageErr("reading your CLI configuration: %v", err)
		}
		if len(args) == 0 {
			return usageErr("%s", noMirrorHelp)
		}
	}
	withModules := len(u.modules) > 0
	mirrors := make([]ui.Mirror, 0, len(args))
	for i, a := range args {
		spec, err := place.Parse(a)
		if err != nil {
			return usageErr("%v", err)
		}
		// A registry named beside --module and no --provider is there for
		// its modules: it lists no providers, so none are fetched.
		if err := needsVersion(a, s); err != nil && (!withModules || len(s.Providers) > 0) {
			return err
		}
		r, err := place.Open(ctx, a, g.placeOptions())
		if err != nil && withModules && isModulePlace(ctx, a, g) {
			continue // a module place only (an OCI template of modules, a directory to create)
		}
		if err != nil {
			if spec.Kind == place.FS {
				root := cmd.Root()
				if root.SuggestionsMinimumDistance <= 0 {
					root.SuggestionsMinimumDistance = 2 // cobra's default, set only when it suggests itself
				}
				if sugg := root.SuggestionsFor(a); len(sugg) > 0 && len(mirrors) == 0 {
					return usageErr("%v\n(is %q a typo of the command %q? see tfmirror --help)", err, a, sugg[0])
				}
			}
			return usageErr("%v", err)
		}
		mirrors = append(mirrors, ui.Mirror{Reader: r, Kind: string(spec.Kind), Number: i + 1})
	}
	mods, cleanup, err := uiModules(ctx, g, u.modules, args)
	if err != nil {
		return err
	}
	defer cleanup()
	if !isTerminal(cmd) {
		return usageErr("the UI needs a terminal; in scripts use tfmirror ls, diff, sync or verify")
	}
	return ui.Run(ctx, ui.Config{Mirrors: mirrors, Selection: s, Engine: sync.Options{Jobs: u.jobs, Hashing: g.hashing()}, Modules: mods})
}

// isModulePlace reports whether arg opens as a module place.
func isModulePlace(ctx context.Context, arg string, g *globalFlags) bool {
	_, err := modplace.Open(ctx, arg, g.modplaceOptions())
	return err == nil
}

// uiModules opens the UI's places as module places for --module, numbered
// as the header numbers the mirrors; places that hold no modules (network
// mirrors, OCI templates of providers) are left out of the Modules view.
// NAMESPACE/NAME/SYSTEM means the module on the one registry:// place, or
// on OpenTofu's default registry. cleanup removes the builder's temp dir.
func uiModules(ctx context.Context, g *globalFlags, raw, args []string) (ui.ModulesConfig, func(), error) {
	var cfg ui.ModulesConfig
	if len(raw) == 0 {
		return cfg, func() {}, nil
	}
	host, registries := modules.DefaultHost, 0
	o := g.modplaceOptions()
	for i, a := range args {
		l, err := modplace.Open(ctx, a, o)
		if err != nil {
			continue
		}
		spec, _ := place.Parse(a)
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
		return cfg, nil, usageErr("--module: none of the places holds modules: give registry://HOST, oci://REGISTRY/TEMPLATE or a directory")
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
	return cfg, func() { builder.Close(); os.RemoveAll(tmp) }, nil
}

// isTerminal reports whether the command talks to a terminal both ways.
func isTerminal(cmd *cobra.Command) bool {
	out, ok := cmd.OutOrStdout().(*os.File)
	in, ok2 := cmd.InOrStdin().(*os.File)
	return ok && ok2 && term.IsTerminal(out.Fd()) && term.IsTerminal(in.Fd())
}

func newDemoCmd(g *globalFlags) *cobra.Command {
	var keep string
	var rate, jobs int
	var noUI bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the UI over a sample world built in a temp dir",
		Long: `Build a small sample world and open the UI on it, so every feature can be tried
with no setup:

  [1] an HTTPS network mirror on 127.0.0.1 (self-signed certificate) serving
      [2], its downloads slowed (--rate) so transfers can be watched;
  [2] a filesystem mirror, "primary", with four synthetic providers
      (acme/cloud, acme/dns, acme/queue, acme/legacy: real zips holding a small
      script), several versions and up to five platforms, with index documents
      stating hashes;
  [3] a second filesystem mirror, "secondary", that lacks some platforms and
      versions, and holds one archive (acme/cloud 2.0.0 linux_amd64) with
      different content;
  [4] a module registry on 127.0.0.1 (self-signed certificate) offering
      acme/network/aws and acme/cluster/aws, a few versions each;
  [5] a directory of module packages, "modules", holding acme/network/aws
      1.0.0 only.

Queue what [3] lacks from [1] (select cells, enter), watch the hashes checked
as each archive lands, and try v (verify) on the archive that differs. Press m
for the Modules view: select versions [5] lacks (space), enter, and they are
fetched from [4], packed and stored.

Everything is removed on exit unless --keep DIR is given.`,
		Example: `  tfmirror demo
  tfmirror demo --keep /tmp/world
  tfmirror demo --keep /tmp/world --no-ui   # build it, print the places, exit`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if noUI && keep == "" {
				return usageErr("--no-ui builds a world to keep: give --keep DIR too")
			}
			if !noUI && !isTerminal(cmd) {
				return usageErr("the demo UI needs a terminal (--keep DIR --no-ui builds the world without it)")
			}
			dir := keep
			if dir == "" {
				tmp, err := os.MkdirTemp("", "tfmirror-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = tmp
			} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return usageErr("--keep %s: the directory is not empty; give a new or empty one", dir)
			}
			world, err := demo.Build(ctx, dir)
			if err != nil {
				return err
			}
			if noUI {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n%s\n", world.Primary, world.Secondary)
				return nil
			}
			srv, err := world.Serve(ctx, demo.ServeOptions{BytesPerSecond: rate})
			if err != nil {
				return err
			}
			defer srv.Close()
			// The network mirror first: jobs take their source from the first
			// mirror holding a package, and its slowed downloads show progress.
			net, err := srv.Open()
			if err != nil {
				return err
			}
			mirrors := []ui.Mirror{{Reader: net, Kind: string(place.NetMirror)}}
			for _, d := range []string{world.Primary, world.Secondary} {
				r, err := place.Open(ctx, d, g.placeOptions())
				if err != nil {
					return err
				}
				mirrors = append(mirrors, ui.Mirror{Reader: r, Kind: string(place.FS)})
			}
			mods, closeModules, err := demoModules(ctx, g, world, len(mirrors)+1)
			if err != nil {
				return err
			}
			defer closeModules()
			err = ui.Run(ctx, ui.Config{Mirrors: mirrors, Engine: sync.Options{Jobs: jobs, Hashing: g.hashing()}, Modules: mods})
			if keep != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "the demo world is kept in %s\n", keep)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&keep, "keep", "", "build the world in DIR (new or empty) and keep it after exit")
	f.IntVar(&rate, "rate", 1<<20, "bytes per second the network mirror serves archives at (0: full speed)")
	f.IntVar(&jobs, "jobs", 4, "how many archives to transfer at once")
	f.BoolVar(&noUI, "no-ui", false, "with --keep: build the world, print the two mirror directories, and exit")
	return cmd
}

// demoModules serves the demo's module registry and opens it and the
// world's module directory as module places numbered from num.
func demoModules(ctx context.Context, g *globalFlags, world *demo.World, num int) (ui.ModulesConfig, func(), error) {
	var cfg ui.ModulesConfig
	srv, err := world.ServeModules(ctx)
	if err != nil {
		return cfg, nil, err
	}
	reg, err := srv.Open()
	if err == nil {
		cfg.Modules, err = srv.Modules()
	}
	var dir modules.Writer
	if err == nil {
		dir, err = modplace.OpenWriter(ctx, world.Modules, g.modplaceOptions())
	}
	tmp := ""
	if err == nil {
		tmp, err = os.MkdirTemp("", "tfmirror-demo-modules-")
	}
	if err != nil {
		srv.Close()
		return cfg, nil, err
	}
	builder := srv.Builder(tmp)
	cfg.Places = []ui.ModulePlace{{Lister: reg, Kind: string(place.Registry), Number: num}, {Lister: dir, Kind: string(place.FS), Number: num + 1}}
	cfg.Builder = builder
	return cfg, func() { builder.Close(); os.RemoveAll(tmp); srv.Close() }, nil
}

func newPushCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var asJSON, force bool
	var jobs int
	cmd := &cobra.Command{
		Use:   "push SRC... OCI_DST [selection]",
		Short: "Push release zips, or a mirror's archives, into an OCI registry for OpenTofu's oci_mirror",
		Long: `Push provider release zips into an OCI registry in the layout OpenTofu's
oci_mirror installation method reads, then print the provider_installation
block to paste into the OpenTofu CLI configuration.

SRC is a release zip (goreleaser's terraform-provider-NAME_1.2.3_linux_amd64.zip)
or a place (a filesystem mirror directory, https://, registry://, oci://), of
which every selected archive is pushed. OCI_DST is oci://REGISTRY[:PORT]/TEMPLATE,
the oci_mirror repository_template: ${hostname}, ${namespace} and ${type} stand
for the provider's address (quote it in the shell).

Zips: a zip's name gives only the provider's type, so name the provider with
--provider HOSTNAME/NAMESPACE/TYPE; NAMESPACE/TYPE means the provider on
registry.opentofu.org, as in OpenTofu configuration. Version and platform come
from the standard file name; for other names give an exact --version and one
--platform. With a place as SRC, --provider, --version and --platform select.

Each zip's h1: and zh: are computed before it is pushed and checked again on
the staged copy. Each platform becomes an image manifest holding the zip as its
single archive/zip layer; each version an image index tagged with the version
("+" written as "_"). Platforms already in the registry are kept; a platform
already there with the same zip is skipped without uploading, one with a
different zip is refused unless --force.

Credentials are those docker and podman use (docker login / podman login, their
credential helpers). --plain-http talks HTTP to local registries; --insecure
skips TLS verification; --ca-cert trusts an extra CA. Exits 1 when any archive
failed.`,
		Example: `  tfmirror push --provider acme/alpha dist/*.zip 'oci://registry.example.com/providers/${namespace}/${type}'
  tfmirror push -p example.com/acme/alpha terraform-provider-alpha_1.2.3_linux_amd64.zip 'oci://localhost:5000/${hostname}/${namespace}/${type}' --plain-http
  tfmirror push ./mirror 'oci://registry.example.com/providers/${namespace}/${type}' -p hashicorp/aws -v "~> 5.0" --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("push takes SRC... and OCI_DST (got %d arguments); see %s --help", len(args), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := sel.selection()
			if err != nil {
				return err
			}
			dstArg := args[len(args)-1]
			if spec, err := place.Parse(dstArg); err != nil || spec.Kind != place.OCI {
				return usageErr("push: the last argument must be oci://REGISTRY[:PORT]/TEMPLATE, not %q", dstArg)
			}
			dst, err := place.OpenWriter(ctx, dstArg, g.placeOptions())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			mirror, ok := dst.(*oci.Mirror)
			if !ok {
				return usageErr("push: %s is not an OCI mirror", dstArg)
			}
			srcs, err := pushSources(cmd, g, sel, s, args[:len(args)-1])
			if err != nil {
				return err
			}

			out := cmd.OutOrStdout()
			emit := func(m map[string]any) {
				b, _ := json.Marshal(m)
				fmt.Fprintf(out, "%s\n", b)
			}
			var specs []sync.JobSpec
			landed := map[backends.Provider]bool{}
			present, problems := 0, 0
			for _, src := range srcs {
				plan, err := sync.MakePlan(ctx, src, dst, s, sync.PlanOptions{Hashing: g.hashing()})
				printWarnings(cmd, src)
				if err != nil {
					return err
				}
				jobs, left := plan.Jobs(dst, force)
				specs = append(specs, jobs...)
				for _, it := range left {
					pkg := it.Archive.Package
					switch {
					case it.Status == sync.StatusPresent:
						present++
						landed[pkg.Provider] = true
					default:
						problems++
					}
					if asJSON {
						emit(map[string]any{"type": string(it.Status), "provider": pkg.Provider.String(), "version": pkg.Version.String(),
							"platform": pkg.Platform.String(), "src": src.String(), "dst": dst.String(), "detail": it.Detail})
					} else if it.Status == sync.StatusPresent {
						fmt.Fprintf(out, "= %s: already in %s (%s)\n", pkg, dst, it.Detail)
					} else {
						fmt.Fprintf(cmd.ErrOrStderr(), "%s %s: skipped: %s\n", it.Status, pkg, it.Detail)
					}
				}
			}

			mode, color, width := outputMode(cmd, asJSON)
			start := time.Now()
			eng := sync.NewEngine(ctx, sync.Options{Jobs: jobs, Hashing: g.hashing()})
			eng.Enqueue(specs...)
			eng.Close()
			var t *sync.Tracker
			if mode == report.Plain {
				t = report.PushPlain(out, eng.Events())
			} else {
				t = report.NewSyncReporter(out, mode, color, width).Run(eng.Events())
			}
			printWarnings(cmd, dst)
			for _, j := range t.Jobs {
				if j.State == sync.Done {
					landed[j.Info.Package.Provider] = true
				}
			}
			failed := t.Failures()
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d pushed (%s) in %s, %d already there, %d failed, %d skipped\n",
					dst, t.Counts()[sync.Done], report.HumanBytes(t.BytesMoved()), time.Since(start).Round(time.Millisecond), present, len(failed), problems)
			}
			if len(landed) > 0 {
				var providers []backends.Provider
				for p := range landed {
					providers = append(providers, p)
				}
				backends.SortProviders(providers)
				block, notes := push.ConfigBlock(mirror.Template(), providers, g.plainHTTP)
				if asJSON {
					var include []string
					for _, p := range providers {
						include = append(include, p.String())
					}
					emit(map[string]any{"type": "oci_mirror_config", "repository_template": mirror.Template().String(), "include": include, "config": block, "notes": notes})
				} else {
					fmt.Fprintf(out, "\nAdd to the OpenTofu CLI configuration (~/.tofurc, or the file TF_CLI_CONFIG_FILE names):\n\n%s", block)
					for _, n := range notes {
						fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
					}
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
	f.BoolVar(&force, "force", false, "replace platforms the registry holds with a different zip")
	f.IntVar(&jobs, "jobs", sync.DefaultJobs(), "how many archives to push at once")
	return cmd
}

// pushSources opens push's SRC arguments: places (directories and URLs) as
// they are, and every zip file together as one place.
func pushSources(cmd *cobra.Command, g *globalFlags, sel selectionFlags, s sync.Selection, args []string) ([]backends.Reader, error) {
	var srcs []backends.Reader
	var zipArgs []string
	for _, a := range args {
		if !strings.Contains(a, "://") {
			if fi, err := os.Stat(a); err == nil && !fi.IsDir() || err != nil && strings.HasSuffix(strings.ToLower(a), ".zip") {
				zipArgs = append(zipArgs, a)
				continue
			}
		}
		r, err := openPlace(cmd.Context(), a, g.placeOptions())
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, r)
	}
	if len(zipArgs) == 0 {
		return srcs, nil
	}
	naming := push.Naming{Providers: s.Providers, Version: sel.version}
	if len(sel.platforms) == 1 {
		naming.Platform = sel.platforms[0]
	}
	files, err := push.Identify(zipArgs, naming)
	if err != nil {
		return nil, usageErr("push: %v", err)
	}
	zips, err := push.NewZips(cmd.Context(), files, g.hashing())
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	return append([]backends.Reader{zips}, srcs...), nil
}

// loadLockFile reads a lock file for --lock, as a usage error when it is
// missing or malformed (the message has file:line).
func loadLockFile(path string) (*lockfile.File, error) {
	f, err := lockfile.Load(path)
	if err != nil {
		return nil, usageErr("--lock: %v", err)
	}
	return f, nil
}

func newCheckCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check MIRROR --lock FILE [--platform P...] [--json]",
		Short: "Would `init` work from this mirror with this lock file, on every platform?",
		Long: `For every provider version a lock file (.terraform.lock.hcl) selects, and every
platform, check that MIRROR holds the package and that it matches at least one
locked hash of a scheme the clients can check for that kind of place:

  filesystem mirror, zip     h1: of the zip, or its zh:
  filesystem mirror, dir     h1: only; a lock with only zh: hashes lets anything
                             through (reported as a warning)
  network mirror, registry   h1: or zh:, and the archive must also match the
                             hashes the place itself lists
  OCI mirror (OpenTofu)      the layer's zh: (its sha256 digest) must be in the
                             lock before OpenTofu downloads anything, so a lock
                             with only h1: hashes fails

Each row says what init would do and how to fix it (usually tfmirror sync to
copy a package in, or tfmirror lock to record its hashes). Hashes are computed
from the archives, not taken from the mirror's word.

Platforms: --platform, or by default every platform MIRROR holds for any
locked provider at its locked version, so a provider missing a platform its
siblings have is reported. --provider limits the check to some providers.

Exits 1 when init would fail for any row, 2 when the lock file or the command
line is wrong.`,
		Example: `  tfmirror check ./mirror --lock .terraform.lock.hcl
  tfmirror check https://mirror.corp/tf/ --lock infra/.terraform.lock.hcl --platform linux_amd64 --platform darwin_arm64
  tfmirror check oci://registry.corp/tf/'${namespace}/${type}' --lock .terraform.lock.hcl --json`,
		Args: exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sel.lock == "" {
				return usageErr("check needs --lock FILE: the .terraform.lock.hcl whose providers to look for")
			}
			if sel.version != "" {
				return usageErr("check looks at the versions the lock file selects; --version does not apply")
			}
			s, err := sel.selection()
			if err != nil {
				return err
			}
			spec, err := place.Parse(args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			matched := len(s.Providers) == 0 && len(s.Locked) > 0
			for p := range s.Locked {
				for _, f := range s.Providers {
					matched = matched || f.Matches(p)
				}
			}
			if !matched {
				return usageErr("%s locks no provider matching the selection: nothing to check", sel.lock)
			}
			r, err := openPlace(cmd.Context(), args[0], g.placeOptions())
			if err != nil {
				return err
			}
			findings, err := sync.CheckLock(cmd.Context(), r, s.Locked, sync.CheckOptions{Kind: spec.Kind, Platforms: s.Platforms, Providers: s.Providers, Hashing: g.hashing()})
			printWarnings(cmd, r)
			if err != nil {
				return err
			}
			if err := report.Findings(cmd.OutOrStdout(), findings, asJSON); err != nil {
				return err
			}
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s with %s: %s\n", r, sel.lock, report.Summary(findings))
			}
			for _, f := range findings {
				if f.Status != sync.StatusOK {
					return errProblem
				}
			}
			return nil
		},
	}
	sel.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"}`)
	return cmd
}

func newLockCmd(g *globalFlags) *cobra.Command {
	var sel selectionFlags
	var header string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "lock MIRROR --platform P... [--lock FILE] [selection]",
		Short: "Write lock file hashes for the given platforms from what a mirror holds",
		Long: `Record in a lock file (.terraform.lock.hcl in the current directory, or
--lock FILE) the hashes of each provider's package for every --platform, read
from MIRROR, offline, as "terraform providers lock -platform=..." does: the h1:
of the unpacked package and, from a zip, its zh:. They are merged with the
hashes already locked (none is ever dropped), sorted, and written in the
clients' exact format, replacing the file atomically.

Which providers: every provider the file already locks, at its locked version
(existing constraints are kept); --provider limits the update to some of them
and adds providers the file does not lock yet, at the newest version MIRROR
holds that matches --version (a --version the locked version does not match
moves the lock, replacing its hashes).

Like providers lock it is all or nothing: if MIRROR lacks a package or holds
one that contradicts what it states, the problems are listed, the file is left
alone and tfmirror exits 1.

The file keeps its header comment ("terraform init" or "tofu init"); a new
file gets Terraform's unless --header tofu.`,
		Example: `  tfmirror lock ./mirror --platform linux_amd64 --platform darwin_arm64 --platform windows_amd64
  tfmirror lock ./mirror --lock infra/.terraform.lock.hcl -p example.com/acme/alpha -v "~> 1.2" --platform linux_amd64
  tfmirror lock oci://registry.corp/tf/'${namespace}/${type}' --platform linux_amd64 --platform linux_arm64`,
		Args: exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := sel.baseSelection()
			if err != nil {
				return err
			}
			if len(s.Platforms) == 0 {
				return usageErr("lock needs --platform (repeatable): the platforms init will run on, e.g. --platform linux_amd64 --platform darwin_arm64")
			}
			path := sel.lock
			if path == "" {
				path = lockfile.DefaultName
			}
			f, err := lockfile.Load(path)
			existed := err == nil
			switch {
			case errors.Is(err, os.ErrNotExist):
				f = lockfile.New(lockfile.HeaderTerraform)
			case err != nil:
				return usageErr("%v", err)
			}
			for _, w := range f.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			if header != "" {
				h, err := lockfile.ParseHeader(header)
				if err != nil {
					return usageErr("--header: %v", err)
				}
				f.Header = h
			}
			if len(f.Providers()) == 0 && len(s.Providers) == 0 {
				return usageErr("nothing to lock: %s locks no providers yet; name them with --provider", path)
			}
			r, err := openPlace(cmd.Context(), args[0], g.placeOptions())
			if err != nil {
				return err
			}
			before := f.Bytes()
			updates, problems, err := sync.UpdateLock(cmd.Context(), r, f, sync.LockRequest{Selection: s, Platforms: s.Platforms, Hashing: g.hashing()})
			printWarnings(cmd, r)
			if err != nil {
				return noCatalogue(err)
			}
			if len(problems) > 0 {
				if err := report.Findings(cmd.OutOrStdout(), problems, false); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: not changed: %s\n", path, report.Summary(problems))
				return errProblem
			}
			added := report.LockUpdates(cmd.OutOrStdout(), updates)
			after := f.Bytes()
			switch {
			case dryRun:
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d hashes would be added (dry run, not written)\n", path, added)
			case existed && bytes.Equal(before, after):
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: already has every hash (%d providers)\n", path, len(f.Providers()))
			default:
				if err := f.Save(path); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d hashes added for %d providers\n", path, added, len(updates))
			}
			return nil
		},
	}
	sel.add(cmd)
	cmd.Flags().StringVar(&header, "header", "", `first comment line of the file: "terraform" or "tofu" (default: keep the file's; Terraform's for a new file)`)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be added and write nothing")
	return cmd
}

func newConfigCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the mirrors and credentials your Terraform/OpenTofu CLI configuration names",
		Long: `Read the CLI configuration the clients read and show what tfmirror takes from
it: which files (TF_CLI_CONFIG_FILE alone when set, else ~/.terraformrc,
~/.tofurc and the *.tfrc files of ~/.terraform.d), the mirrors of their
provider_installation block as place arguments for the other commands (with
include/exclude patterns), the hosts that have a token (credentials blocks or
TF_TOKEN_* variables; tokens are never printed), and the oci_credentials
blocks. Bearer tokens found here are used for https:// and registry:// places.

Exits 2 when a file is malformed (file:line:column), after showing what the
other files hold.`,
		Example: `  tfmirror config
  tfmirror config --json | jq -r '.mirrors[].place'
  TF_CLI_CONFIG_FILE=ci.tfrc tfmirror config`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cliconfig.Load(os.Getenv, "")
			if c == nil {
				return err
			}
			envTokens := backends.EnvCredentials(os.Environ())
			if asJSON {
				if jerr := report.ConfigJSON(cmd.OutOrStdout(), c, envTokens, err); jerr != nil {
					return jerr
				}
			} else {
				report.Config(cmd.OutOrStdout(), c, envTokens)
			}
			for _, w := range c.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"files","mirrors","credentials","oci_credentials","warnings","errors"}`)
	return cmd
}

// Module commands: what ls and sync run with --module, and the modules
// command.

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

func (g *globalFlags) modplaceOptions() modplace.Options {
	return modplace.Options{CACertFile: g.caCert, PlainHTTP: g.plainHTTP, Insecure: g.insecure, Hashing: g.hashing()}
}

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
func runModulesLs(cmd *cobra.Command, g *globalFlags, arg string, sel *selectionFlags, raw []string, asJSON bool) error {
	ctx := cmd.Context()
	c, err := onlyModuleSelection(sel)
	if err != nil {
		return err
	}
	mods, err := moduleArgs(raw, defaultModuleHost(arg))
	if err != nil {
		return err
	}
	l, err := modplace.Open(ctx, arg, g.modplaceOptions())
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	rows := []report.ModuleRow{}
	failed := false
	for _, m := range mods {
		ls, err := l.ListModule(ctx, m, c)
		for _, w := range ls.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
		}
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "tfmirror: %v\n", err)
			failed = true
			continue
		}
		if len(ls.Items) == 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "tfmirror: %s: %s: no version matches %q\n", l, m, c)
			failed = true
		}
		for _, it := range ls.Items {
			row := report.ModuleRow{Module: m.String(), Version: it.Version.String(), Listed: it.Listed, Location: it.Location, Digest: it.Digest}
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
	if err := report.ModuleRows(cmd.OutOrStdout(), rows, asJSON); err != nil {
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

// runModulesSync is sync --module: the registry's packages of the selected
// versions are fetched, packed and stored in DST; each version's source
// address is printed at the end.
func runModulesSync(cmd *cobra.Command, g *globalFlags, args []string, sel *selectionFlags, raw []string, f moduleSyncFlags) error {
	ctx := cmd.Context()
	c, err := onlyModuleSelection(sel)
	if err != nil {
		return err
	}
	if c.IsZero() {
		return usageErr("%s: syncing modules needs --version (e.g. \"~> 5.0\", \">= 1.2, < 2.0\" or latest): a registry keeps every release ever made", args[0])
	}
	o := g.modplaceOptions()
	reg, err := modplace.OpenRegistry(args[0], o)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	mods, err := moduleArgs(raw, reg.Host())
	if err != nil {
		return err
	}
	for _, m := range mods {
		if m.Host != reg.Host() {
			return usageErr("--module %s: the source is the registry %s; name modules on it (NAMESPACE/NAME/SYSTEM)", m, reg.Host())
		}
	}
	dst, err := modplace.OpenWriter(ctx, args[1], o)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if store, ok := dst.(*modoci.Store); ok {
		repos := map[string]modules.Module{}
		for _, m := range mods {
			r, err := store.Repository(m)
			if err != nil {
				return usageErr("%v", err)
			}
			if prev, dup := repos[r]; dup {
				return usageErr("%s: %s and %s would share the repository %s; use ${namespace}, ${name} and ${system} in the template", args[1], prev, m, r)
			}
			repos[r] = m
		}
	}
	errw := cmd.ErrOrStderr()
	tmp, err := os.MkdirTemp("", "tfmirror-modules-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	builder, err := modplace.Builder(o, tmp)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	defer builder.Close()

	var specs []sync.ModuleJobSpec
	problems := 0
	for _, m := range mods {
		ls, err := reg.ListModule(ctx, m, c)
		for _, w := range ls.Warnings {
			fmt.Fprintln(errw, "warning:", w)
		}
		if err != nil {
			fmt.Fprintf(errw, "tfmirror: %v\n", err)
			problems++
			continue
		}
		if len(ls.Items) == 0 {
			fmt.Fprintf(errw, "tfmirror: %s: %s: no version matches %q\n", reg, m.Short(), c)
			problems++
			continue
		}
		ss, unavailable := sync.ModuleJobs(ls, reg.String(), builder, dst, f.force)
		for _, it := range unavailable {
			fmt.Fprintf(errw, "unavailable %s %s: skipped: %v\n", m, it.Version, it.Err)
			problems++
		}
		specs = append(specs, ss...)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if f.dryRun {
		var rows []report.ModuleRow
		for _, s := range specs {
			rows = append(rows, report.ModuleRow{Module: s.Module.String(), Version: s.Version.String(), Location: s.Location.String()})
		}
		if err := report.ModuleRows(cmd.OutOrStdout(), rows, f.asJSON); err != nil {
			return err
		}
		if problems > 0 {
			return errProblem
		}
		return nil
	}

	mode, color, width := outputMode(cmd, f.asJSON)
	rep := report.NewSyncReporter(cmd.OutOrStdout(), mode, color, width)
	start := time.Now()
	eng := sync.NewModuleEngine(ctx, sync.Options{Jobs: f.jobs, Hashing: g.hashing()})
	eng.Enqueue(specs...)
	eng.Close()
	t := rep.Run(eng.Events())
	results := eng.Results()
	report.ModuleSources(cmd.OutOrStdout(), results, f.asJSON)
	present, synced := 0, 0
	for _, r := range results {
		switch {
		case r.Err != nil:
		case r.Stored.Present:
			present++
		default:
			synced++
		}
	}
	failed := t.Failures()
	if !f.asJSON {
		fmt.Fprintf(errw, "%s -> %s: %d modules synced (%s) in %s, %d already present, %d failed, %d skipped\n",
			reg, dst, synced, report.HumanBytes(t.BytesMoved()), time.Since(start).Round(time.Millisecond), present, len(failed), problems)
		for _, j := range failed {
			fmt.Fprintf(errw, "  failed: %s: %v\n", j.Info.Label(), j.Err)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(failed)+problems > 0 {
		return errProblem
	}
	return nil
}

func newModulesCmd(g *globalFlags) *cobra.Command {
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
	cmd.AddCommand(newModulesRewriteCmd(g))
	return cmd
}

func newModulesRewriteCmd(g *globalFlags) *cobra.Command {
	var tmpl, defaultHost string
	var write, byTag bool
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
			if tmpl == "" {
				return usageErr("modules rewrite needs --oci TEMPLATE, e.g. %s", modules.ExampleTemplate)
			}
			if !strings.HasPrefix(tmpl, "oci://") {
				tmpl = "oci://" + tmpl
			}
			store, err := modplace.OpenOCI(tmpl, g.modplaceOptions())
			if err != nil {
				return usageErr("--oci: %v", err)
			}
			if fi, err := os.Stat(args[0]); err != nil || !fi.IsDir() {
				return usageErr("%s: not a directory", args[0])
			}
			files, problems, err := rewrite.Rewrite(cmd.Context(), args[0], rewrite.Options{Resolver: store, DefaultHost: defaultHost, ByTag: byTag})
			if err != nil {
				return err
			}
			return reportRewrite(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), files, problems, write)
		},
	}
	f := cmd.Flags()
	f.StringVar(&tmpl, "oci", "", "the OCI mirror's `TEMPLATE`, as given to sync: oci://REGISTRY/PATH with ${hostname}, ${namespace}, ${name}, ${system}")
	f.BoolVar(&write, "write", false, "change the files (default: only print the diff)")
	f.BoolVar(&byTag, "tag", false, "pin by tag (?tag=VERSION) instead of by digest")
	f.StringVar(&defaultHost, "default-host", modules.DefaultHost, "the registry host NAMESPACE/NAME/SYSTEM sources mean")
	return cmd
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
