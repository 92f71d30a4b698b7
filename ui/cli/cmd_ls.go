package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/ui/report"
)

const lsLong = `List the packages a place holds, one per provider x version x platform, with
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
module on the registry:// host, or on registry.opentofu.org for mirrors.`

const lsExample = `  tfmirror ls ./mirror
  tfmirror ls                      # the mirrors of your CLI configuration
  tfmirror ls ./mirror --provider hashicorp/aws --version "~> 5.0" --platform linux_amd64
  tfmirror ls ./mirror --json | jq -r '.[].hashes[]'
  tfmirror ls https://mirror.corp/tf/ -p registry.terraform.io/hashicorp/aws -p registry.terraform.io/hashicorp/null
  tfmirror ls registry://registry.terraform.io -p hashicorp/null -v latest
  tfmirror ls registry://registry.opentofu.org --module terraform-aws-modules/vpc/aws -v ">= 5.0"`

// lsFlags are ls's options, bound to its flags.
type lsFlags struct {
	sel    selectionFlags
	mods   moduleFlags
	asJSON bool
}

func newLsCmd(env *Env) *cobra.Command {
	var f lsFlags
	cmd := &cobra.Command{
		Use:     "ls [MIRROR] [selection]",
		Short:   "List the packages in a place: provider, version, platform, hashes",
		Long:    lsLong,
		Example: lsExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("ls takes one MIRROR, or none for the mirrors of your CLI configuration (got %d arguments); see tfmirror ls --help", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLs(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	f.mods.add(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print a JSON array of packages")
	return cmd
}

// runLs lists the places in args, or those of the CLI configuration.
func runLs(ctx context.Context, env *Env, f *lsFlags, args []string, st streams) error {
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
	if f.mods.set() {
		return runModulesLs(ctx, env, args[0], &f.sel, f.mods.modules, f.asJSON, st)
	}
	return lsPlaces(ctx, env, args, &f.sel, f.asJSON, st)
}

// lsPlaces lists every place in args; one that cannot be opened or listed is
// reported and does not hide the others, and makes the exit status 1.
func lsPlaces(ctx context.Context, env *Env, args []string, sel *selectionFlags, asJSON bool, st streams) error {
	s, err := sel.selection()
	if err != nil {
		return err
	}
	if len(args) == 1 && versionsOnly(args[0], s) {
		return lsVersions(ctx, env, args[0], s, asJSON, st)
	}
	if asJSON && !s.Names() {
		return lsJSON(ctx, env, args, s, st)
	}
	var all []backends.Archive
	var sigs []sync.Signature
	failed := 0
	for _, arg := range args {
		as, placeSigs, err := lsPlace(ctx, env, arg, s, asJSON, st)
		if emptyListing(st, s, err) {
			continue
		}
		if err != nil && len(args) == 1 {
			return err
		}
		if err != nil {
			fmt.Fprintf(st.stderr, "tfmirror: %v\n", err)
			failed++
		}
		for len(placeSigs) < len(as) {
			placeSigs = append(placeSigs, sync.Signature{}) // stays aligned with all
		}
		all, sigs = append(all, as...), append(sigs, placeSigs...)
	}
	if err := report.SignedPackages(st.stdout, all, sigs, asJSON); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(st.stderr, "tfmirror: %d of %d places could not be listed (see above)\n", failed, len(args))
		return errProblem
	}
	return nil
}

// emptyListing reports whether err says that a listing with no selection
// (no --provider, --version or --platform, and no provider locked: an
// empty lock file selects nothing) found nothing, and notes it on stderr.
// That is an answer, as the clients read an empty mirror or lock file:
// nothing, without error. A selection that matches nothing stays a problem.
func emptyListing(st streams, s sync.Selection, err error) bool {
	if !errors.Is(err, sync.ErrNothingSelected) || len(s.Providers) > 0 || !s.Versions.IsZero() || len(s.Platforms) > 0 || len(s.Locked) > 0 || s.Pinned != nil {
		return false
	}
	if s.Locked != nil {
		fmt.Fprintln(st.stderr, "tfmirror: note: the lock file locks no provider: nothing to list")
		return true
	}
	fmt.Fprintf(st.stderr, "tfmirror: note: %v: nothing to list\n", err)
	return true
}

// lsPlace lists one place's selected archives, and with signers who signed
// each (a Signature per archive, from the place's provenance).
func lsPlace(ctx context.Context, env *Env, arg string, s sync.Selection, signers bool, st streams) ([]backends.Archive, []sync.Signature, error) {
	if err := needsVersion(arg, s); err != nil {
		return nil, nil, err
	}
	r, err := openPlace(ctx, arg, env.placeOptions())
	if err != nil {
		return nil, nil, err
	}
	as, err := s.Resolve(ctx, r)
	var sigs []sync.Signature
	if err == nil && signers {
		sigs = sync.Signatures(ctx, r, as, signatures())
	}
	if err == nil && !signers {
		noteUnsigned(ctx, st.stderr, r, as)
	}
	st.warnings(r)
	return as, sigs, noCatalogue(err)
}

// lsJSON is ls --json of a selection that names no provider, written a
// provider at a time as each is listed: ls of 100,000 archives holds none
// of them whole. Such a selection fails only where it selects nothing at
// all, before any row; a place that fails to list a provider after others
// leaves their rows, and the array is closed.
func lsJSON(ctx context.Context, env *Env, args []string, s sync.Selection, st streams) error {
	rows := report.NewPackageRows(st.stdout)
	failed := 0
	for _, arg := range args {
		err := lsPlaceEach(ctx, env, arg, s, rows, st)
		if emptyListing(st, s, err) {
			continue
		}
		if err != nil && len(args) == 1 {
			if rows.Len() > 0 {
				_ = rows.Close() // ends the rows so far; err is the one to report
			}
			return err
		}
		if err != nil {
			fmt.Fprintf(st.stderr, "tfmirror: %v\n", err)
			failed++
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(st.stderr, "tfmirror: %d of %d places could not be listed (see above)\n", failed, len(args))
		return errProblem
	}
	return nil
}

// lsPlaceEach writes one place's selected archives to rows, with who
// signed each, a provider at a time.
func lsPlaceEach(ctx context.Context, env *Env, arg string, s sync.Selection, rows *report.PackageRows, st streams) error {
	if err := needsVersion(arg, s); err != nil {
		return err
	}
	r, err := openPlace(ctx, arg, env.placeOptions())
	if err != nil {
		return err
	}
	err = s.ResolveEach(ctx, r, func(_ backends.Provider, as []backends.Archive) error {
		return rows.Add(as, sync.Signatures(ctx, r, as, signatures()))
	})
	st.warnings(r)
	return noCatalogue(err)
}

// versionsOnly: ls of an origin registry with providers named but no
// --version lists their versions, one cheap request each, instead of every
// package of every release.
func versionsOnly(arg string, s sync.Selection) bool {
	sp, err := place.Parse(arg)
	return err == nil && sp.Kind == place.Registry && s.Versions.IsZero() && s.Locked == nil && len(s.Providers) > 0
}

// lsVersions prints the versions a registry offers of each named provider.
func lsVersions(ctx context.Context, env *Env, arg string, s sync.Selection, asJSON bool, st streams) error {
	r, err := openPlace(ctx, arg, env.placeOptions())
	if err != nil {
		return err
	}
	ps, err := s.ProvidersIn(ctx, r)
	if err != nil {
		return noCatalogue(err)
	}
	var rows []report.VersionRow
	for _, p := range ps {
		vs, err := r.Versions(ctx, p)
		if err != nil {
			return err
		}
		backends.SortVersionsNewestFirst(vs)
		for _, v := range vs {
			rows = append(rows, report.VersionRow{Provider: p.String(), Version: v.String()})
		}
	}
	st.warnings(r)
	if !asJSON {
		fmt.Fprintf(st.stderr, "%s: versions only; give --version to list packages and their hashes\n", arg)
	}
	return report.Versions(st.stdout, rows, asJSON)
}
