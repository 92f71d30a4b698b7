package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
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

Platforms: --platform, or by default every platform MIRROR holds for any
locked provider at its locked version, so a provider missing a platform its
siblings have is reported. --provider limits the check to some providers.

Exits 1 when init would fail for any row, 2 when the lock file or the command
line is wrong.`

const checkExample = `  tfmirror check ./mirror --lock .terraform.lock.hcl
  tfmirror check https://mirror.corp/tf/ --lock infra/.terraform.lock.hcl --platform linux_amd64 --platform darwin_arm64
  tfmirror check oci://registry.corp/tf/'${namespace}/${type}' --lock .terraform.lock.hcl --json`

func newCheckCmd(env *Env) *cobra.Command {
	var sel selectionFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "check MIRROR --lock FILE [--platform P...] [--json]",
		Short:   "Would `init` work from this mirror with this lock file, on every platform?",
		Long:    checkLong,
		Example: checkExample,
		Args:    exactArgs(1, "MIRROR"),
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
				// A valid lock file that locks nothing (or nothing selected):
				// not a usage error, but nothing was checked either.
				return fmt.Errorf("%s locks no provider matching the selection: nothing to check", sel.lock)
			}
			r, err := openPlace(cmd.Context(), args[0], env.placeOptions())
			if err != nil {
				return err
			}
			findings, err := sync.CheckLock(cmd.Context(), r, s.Locked, sync.CheckOptions{Kind: spec.Kind, Platforms: s.Platforms, Providers: s.Providers, Hashing: env.hashing()})
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
