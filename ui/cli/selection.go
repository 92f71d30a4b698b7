package cli

import (
	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// selectionFlags are the selection shared by ls, verify, diff, sync, lock,
// check and push.
type selectionFlags struct {
	providers []string
	version   string
	platforms []string
	lock      string
	// signingKeys (--signing-key) check a release's SHA256SUMS.sig: push's
	// zips, or a release directory given as a place.
	signingKeys []string
}

func (s *selectionFlags) add(cmd *cobra.Command) {
	s.addBase(cmd)
	cmd.Flags().StringVar(&s.lock, "lock", "", "a .terraform.lock.hcl `FILE`: only its providers at their locked versions, and archives are also checked against its hashes")
}

// addBase adds the flags but --lock, for a command that takes it otherwise
// (ui: repeatable).
func (s *selectionFlags) addBase(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVarP(&s.providers, "provider", "p", nil, "provider HOST/NAMESPACE/TYPE, or NAMESPACE/TYPE on any host (repeatable)")
	f.StringVarP(&s.version, "version", "v", "", `version constraint ("~> 5.0", ">= 1.2, < 2.0", "= 1.4.2") or "latest"; default every version`)
	f.StringSliceVar(&s.platforms, "platform", nil, "platform OS_ARCH, e.g. linux_amd64 (repeatable); default every platform")
	f.StringArrayVar(&s.signingKeys, "signing-key", nil, "an ASCII-armored OpenPGP public key `FILE` (or keyring) that checks a release's SHA256SUMS.sig (push's zips, or a release directory given as a place; repeatable)")
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
	sel.Locked = lockcheck.LockedFromFile(f, s.lock)
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
		if want, ok := backends.SuggestPlatform(p); ok {
			return sel, &exitError{code: exitUsage, err: &platformTypo{given: p, want: want, sel: sel}}
		}
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

// loadLockFile reads a lock file for --lock, as a usage error when it is
// missing or malformed (the message has file:line).
func loadLockFile(path string) (*lockfile.File, error) {
	f, err := lockfile.Load(path)
	if err != nil {
		return nil, usageErr("--lock: %v", err)
	}
	return f, nil
}
