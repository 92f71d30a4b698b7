package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/report"
)

const checkLong = `For every provider version a lock file (.terraform.lock.hcl) selects, and every
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

Platforms: those the lock is about, the same for check, sync --from/--lock
and the UI's lock view: --platform's, or by default every platform a locked
hash is tied to. Other platforms MIRROR holds are none of the lock's business:
never missing, never a mismatch. A lock names hashes, not platforms: a hash is
tied to a platform by an archive MIRROR holds, or by the signed SHA256SUMS
MIRROR keeps as provenance (tfmirror sync keeps it) naming
terraform-provider-TYPE_VERSION_OS_ARCH.zip. A platform tied only that way is
assumed (a registry lock holds every platform's zh:): the row says so, and
--platform narrows the check to yours. --tie-with PLACE (repeatable) reads
more places to tie hashes with, unchecked: the origin (registry://HOST)
ties every platform by its signed SHA256SUMS, so a package MIRROR holds other
than locked is named with its platform even where MIRROR keeps no
provenance. A locked h1: no archive matches is a
package of some platform MIRROR lacks ("init on some platform would fail").
Other hashes (the zh: of a release's _manifest.json) are tied to no package: a
note, never a problem. A malformed h1: or zh: (bad base64, 63 hex digits) is
named "malformed" with FILE:LINE, and is no gap: init passes over it.
--provider limits the check to some providers.

With --from DIR (repeatable) instead of --lock, every .terraform.lock.hcl under
DIR (not under .terraform/) is checked in turn, each as --lock checks one, in
one report whose rows name their lock file (--json: a "lock" field). Archives
several lock files share are hashed once.

Exits 1 when init would fail for any row, 2 when the lock file or the command
line is wrong.`

const checkExample = `  tfmirror check ./mirror --lock .terraform.lock.hcl
  tfmirror check https://mirror.corp/tf/ --lock infra/.terraform.lock.hcl --platform linux_amd64 --platform darwin_arm64
  tfmirror check oci://registry.corp/tf/'${namespace}/${type}' --lock .terraform.lock.hcl --json
  tfmirror check ./mirror --from ../infra --from ../platform`

// checkFlags are check's options, bound to its flags.
type checkFlags struct {
	sel           selectionFlags
	asJSON        bool
	from, tieWith []string
}

func newCheckCmd(env *Env) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:     "check MIRROR (--lock FILE | --from DIR...) [--platform P...] [--tie-with PLACE...] [--json]",
		Short:   "Would `init` work from this mirror with this lock file, on every platform?",
		Long:    checkLong,
		Example: checkExample,
		Args:    exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print a JSON array of {"provider","version","platform","status","detail"} (with --from, and "lock")`)
	cmd.Flags().StringSliceVar(&f.from, "from", nil, "check every .terraform.lock.hcl under `DIR` (repeatable)")
	cmd.Flags().StringSliceVar(&f.tieWith, "tie-with", nil, "read `PLACE` too (the origin registry://HOST, another mirror; repeatable) to tell which platform a locked hash is of; it is not checked")
	return cmd
}

// runCheck is check: --lock FILE, or every lock file under --from.
func runCheck(ctx context.Context, env *Env, f *checkFlags, args []string, st streams) error {
	switch {
	case len(f.from) > 0 && f.sel.lock != "":
		return usageErr("check takes --lock FILE or --from DIR, not both")
	case len(f.from) == 0 && f.sel.lock == "":
		return usageErr("check needs --lock FILE (the .terraform.lock.hcl whose providers to look for) or --from DIR (every lock file under it)")
	case f.sel.version != "":
		return usageErr("check looks at the versions the lock file selects; --version does not apply")
	}
	if len(f.from) > 0 {
		return checkFrom(ctx, env, args[0], f.from, &f.sel, f.tieWith, f.asJSON, st)
	}
	return checkLock(ctx, env, args[0], &f.sel, f.tieWith, f.asJSON, st)
}

// checkLock is check --lock FILE.
func checkLock(ctx context.Context, env *Env, mirrorArg string, sel *selectionFlags, tieWith []string, asJSON bool, st streams) error {
	s, err := sel.selection()
	if err != nil {
		return err
	}
	spec, err := place.Discover(ctx, mirrorArg)
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
		// A valid lock file that locks nothing (or nothing selected):
		// not a usage error, but nothing was checked either.
		return fmt.Errorf("%s locks no provider matching the selection: nothing to check", sel.lock)
	}
	r, err := openPlace(ctx, mirrorArg, env.placeOptions())
	if err != nil {
		return err
	}
	ties, err := openTieWith(ctx, env, tieWith)
	if err != nil {
		return err
	}
	findings, err := lockcheck.CheckLock(ctx, r, s.Locked, lockcheck.CheckOptions{Kind: spec.Kind, Platforms: s.Platforms, Providers: s.Providers, Hashing: env.hashing(), TieWith: ties})
	st.warnings(r)
	if err != nil {
		return err
	}
	if err := report.Findings(st.stdout, findings, asJSON); err != nil {
		return err
	}
	if !asJSON {
		st.tell("%s with %s: %s", r, sel.lock, report.Summary(findings))
	}
	return checkErr(findings)
}

// checkFrom is check --from: every lock file under the directories,
// against one place, in one report.
func checkFrom(ctx context.Context, env *Env, mirrorArg string, from []string, sel *selectionFlags, tieWith []string, asJSON bool, st streams) error {
	s, err := sel.baseSelection()
	if err != nil {
		return err
	}
	kind, err := place.Discover(ctx, mirrorArg)
	if err != nil {
		return usageErr("%v", err)
	}
	type lock struct {
		path   string
		locked map[backends.Provider]sync.Locked
	}
	var locks []lock
	for _, dir := range from {
		paths, err := lockfile.Find(ctx, dir)
		if err != nil {
			return usageErr("--from %w", err)
		}
		for _, p := range paths {
			f, err := lockfile.Load(p)
			if err != nil {
				return usageErr("%v", err)
			}
			locks = append(locks, lock{p, lockcheck.LockedFromFile(f, p)})
		}
	}
	if len(locks) == 0 {
		return usageErr("--from %s: no %s under it: nothing to check", strings.Join(from, ", "), lockfile.DefaultName)
	}
	r, err := openPlace(ctx, mirrorArg, env.placeOptions())
	if err != nil {
		return err
	}
	ties, err := openTieWith(ctx, env, tieWith)
	if err != nil {
		return err
	}
	opts := lockcheck.CheckOptions{Kind: kind.Kind, Platforms: s.Platforms, Providers: s.Providers, Hashing: env.hashing(), Sums: sync.NewSumsCache(), TieWith: ties}
	var rows []report.LockFinding
	var all []sync.Finding
	for _, l := range locks {
		findings, err := lockcheck.CheckLock(ctx, r, l.locked, opts)
		if err != nil {
			return err
		}
		for _, f := range findings {
			rows = append(rows, report.LockFinding{Finding: f, Lock: l.path})
		}
		all = append(all, findings...)
	}
	st.warnings(r)
	if err := report.LockFindings(st.stdout, rows, asJSON); err != nil {
		return err
	}
	if !asJSON {
		st.tell("%s with %d lock files: %s", r, len(locks), report.Summary(all))
	}
	return checkErr(all)
}

// checkErr is check's exit: 1 when init would fail for any row.
func checkErr(findings []sync.Finding) error {
	for _, f := range findings {
		if f.Status != sync.StatusOK {
			return errProblem
		}
	}
	return nil
}

// openTieWith opens the --tie-with places: read to tie locked hashes to
// platforms (their archives, the signed SHA256SUMS they keep or sign
// with), never checked.
func openTieWith(ctx context.Context, env *Env, args []string) ([]backends.Reader, error) {
	var out []backends.Reader
	for _, arg := range args {
		r, err := openPlace(ctx, arg, env.placeOptions())
		if err != nil {
			return nil, fmt.Errorf("--tie-with %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}
