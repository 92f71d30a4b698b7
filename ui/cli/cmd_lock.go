package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/sync/spec"
	"github.com/tfmirror/tfmirror/ui/report"
)

const lockLong = `Record in a lock file (.terraform.lock.hcl in the current directory, or
--lock FILE) the hashes of each provider's package for every platform, read
from MIRROR, offline, as "terraform providers lock -platform=..." does: the h1:
of the unpacked package and, from a zip, its zh:; from an origin registry
(registry://HOST), also the zh: of every platform its signed SHA256SUMS lists,
as the clients record them.

Which platforms: --platform's (repeatable), or else the platforms the lock is
already about, the one rule check, sync --from/--lock and the UI's lock view
share: for each provider, the platforms its locked hashes are tied to through
MIRROR (an archive it holds, or the signed SHA256SUMS it keeps or signs
with). So "tfmirror lock MIRROR --lock FILE" completes FILE for the platforms
its team already uses: a lock "terraform init" wrote on linux_amd64 and
darwin_arm64 through a mirror (one h1: each) gets both platforms' h1: and zh:.
A platform tied only by a signed SHA256SUMS is assumed (a registry lock holds
every platform's zh:): a note names the assumed ones; --platform narrows. A
provider the lock holds no evidence for (one -p adds) gets the platforms the
rest of the file is about. A new lock file says no platform: it needs
--platform (exit 2, as does a lock none of whose hashes MIRROR ties).

No archive is downloaded where MIRROR states every platform's hashes itself:
an OpenTofu 1.12 registry's "packages" field (h1: and zh:, each zh: checked
against the signed SHA256SUMS; one download-metadata request per version), an
OCI mirror's layer digests (zh:, as tofu providers lock -oci-mirror records
them), a network mirror's version documents. Those hashes are recorded as
stated: an h1: only where MIRROR states one; a platform it states only the zh:
of gets a warning (--json: "no_h1"), since terraform init -lockfile=readonly
and filesystem mirrors need the h1:. --hashes all downloads and hashes every
package instead. They are merged with the hashes already locked
(none is ever dropped), sorted, and written in the clients' exact format,
replacing the file atomically (through a symbolic link, keeping its mode).

Which providers: every provider the file already locks, at its locked version
(existing constraints are kept), or for a new file every provider MIRROR
holds; --provider limits the update to some of them and adds providers the
file does not lock yet. A provider not locked yet gets the newest version
MIRROR holds that matches --version (a --version the locked version does not
match moves the lock, replacing its hashes).

Like providers lock it is all or nothing: if MIRROR lacks a package or holds
one that contradicts what it states, the problems are listed, the file is left
alone and tfmirror exits 1.

The file keeps its header comment ("terraform init" or "tofu init"); a new
file gets Terraform's unless --header tofu.

With --from DIR (repeatable), every configuration under DIR (found as sync
--from finds them) gets its own .terraform.lock.hcl, as "terraform providers
lock" run in it would write it: the providers the configuration requires
(its modules' required_providers merged), each at the version its lock file
locks, or, when it locks none, at the newest version MIRROR holds that the
constraints allow; the entry's constraints become the configuration's; a
locked version the constraints exclude is a problem (terraform init refuses
it too) and the file is left alone; entries the configuration no longer
requires are kept. Without --platform each file is locked for the platforms
it is about itself; one that says none (no lock yet) is named and left
alone. Each file is all or nothing; the others are written, and
tfmirror exits 1 when any could not be. A walk writes nothing outside DIR: a
lock file that is a symbolic link is replaced by a regular file (its target
is left alone, as terraform providers lock leaves it), and a configuration
reached through a link to a directory outside DIR is read but not written.`

const lockExample = `  tfmirror lock ./mirror --platform linux_amd64 --platform darwin_arm64 --platform windows_amd64
  tfmirror lock https://mirror.corp/tf/ --lock infra/.terraform.lock.hcl
  tfmirror lock ./mirror --lock infra/.terraform.lock.hcl -p example.com/acme/alpha -v "~> 1.2" --platform linux_amd64
  tfmirror lock oci://registry.corp/tf/'${namespace}/${type}' --platform linux_amd64 --platform linux_arm64
  tfmirror lock ./mirror --from ../infra --platform linux_amd64 --platform darwin_arm64
  tfmirror lock ./mirror --from ../infra`

// lockFlags are lock's options, bound to its flags.
type lockFlags struct {
	sel            selectionFlags
	header, hashes string
	dryRun         bool
	from           []string
	out            lockOut
}

func newLockCmd(env *Env) *cobra.Command {
	var f lockFlags
	cmd := &cobra.Command{
		Use:     "lock MIRROR [--platform P...] [--lock FILE | --from DIR...] [selection]",
		Short:   "Write lock file hashes for the platforms a lock is about, from a mirror",
		Long:    lockLong,
		Example: lockExample,
		Args:    exactArgs(1, "MIRROR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLock(cmd.Context(), env, &f, args, streamsOf(cmd))
		},
	}
	f.sel.add(cmd)
	cmd.Flags().StringSliceVar(&f.from, "from", nil, "lock every configuration under `DIR` into its own .terraform.lock.hcl (repeatable)")
	cmd.Flags().StringVar(&f.header, "header", "", `first comment line of the file: "terraform" or "tofu" (default: keep the file's; Terraform's for a new file)`)
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print what would be added and write nothing")
	cmd.Flags().StringVar(&f.hashes, "hashes", "", `"all": download and hash every package, even where MIRROR states its hashes`)
	cmd.Flags().BoolVar(&f.out.json, "json", false, `print one {"type":"lock_file",...} object per line for each lock file (path, status, providers and the hashes added, problems), then {"type":"summary",...}`)
	return cmd
}

// runLock writes the hashes of MIRROR's packages into the lock file
// (--lock), or into every configuration's under --from.
func runLock(ctx context.Context, env *Env, f *lockFlags, args []string, st streams) error {
	if f.hashes != "" && f.hashes != "all" {
		return usageErr("--hashes %q: the one value is \"all\" (download and hash every package)", f.hashes)
	}
	download := f.hashes == "all"
	var err error
	if len(f.from) > 0 {
		err = lockFrom(ctx, st, env, args[0], f.from, &f.sel, f.header, f.dryRun, download, &f.out)
	} else {
		err = lockFile(ctx, st, env, args[0], &f.sel, f.header, f.dryRun, download, &f.out)
	}
	if f.out.files > 0 && (err == nil || errors.Is(err, errProblem)) {
		f.out.summary(st)
	}
	return err
}

// lockFile merges the hashes of MIRROR's packages into the lock file.
func lockFile(ctx context.Context, st streams, env *Env, mirrorArg string, sel *selectionFlags, header string, dryRun, download bool, out *lockOut) error {
	s, err := sel.baseSelection()
	if err != nil {
		return err
	}
	path := sel.lock
	if path == "" {
		path = lockfile.DefaultName
	}
	f, existed, err := loadLock(ctx, st, path, header)
	if err != nil {
		return err
	}
	if len(s.Platforms) == 0 && len(f.Providers()) == 0 {
		// Without --platform, the platforms are those the lock is about:
		// a new lock is about none yet.
		return usageErr("lock needs --platform (repeatable) for %s, which locks no provider yet and so says no platform: name the platforms init will run on, e.g. --platform linux_amd64 --platform darwin_arm64", path)
	}
	r, err := openPlace(ctx, mirrorArg, env.placeOptions())
	if err != nil {
		return err
	}
	if len(f.Providers()) == 0 && len(s.Providers) == 0 {
		// A new (or empty) lock file: lock every provider the mirror holds.
		if s.Providers, err = everyProvider(ctx, st, r); err != nil {
			return err
		}
	}
	return updateLock(ctx, st, r, path, f, existed, lockcheck.LockRequest{Selection: s, Platforms: s.Platforms, Hashing: env.hashing(), Download: download}, dryRun, f.Save, out)
}

// loadLock reads the lock file at path, or starts a new one (Terraform's
// header unless --header says otherwise).
func loadLock(ctx context.Context, st streams, path, header string) (f *lockfile.File, existed bool, err error) {
	f, err = lockfile.Load(path)
	existed = err == nil
	switch {
	case errors.Is(err, os.ErrNotExist):
		f = lockfile.New(lockfile.HeaderTerraform)
	case err != nil:
		return nil, false, usageErr("%v", err)
	}
	for _, w := range f.Warnings {
		st.tell("warning: %s", w)
	}
	if header != "" {
		h, err := lockfile.ParseHeader(header)
		if err != nil {
			return nil, false, usageErr("--header: %v", err)
		}
		f.Header = h
	}
	return f, existed, nil
}

// updateLock locks what req asks for from r into f and writes it to path
// (not with dryRun) with save; the problems, when there are any, are
// listed, the file is left alone and errProblem returned.
func updateLock(ctx context.Context, st streams, r backends.Reader, path string, f *lockfile.File, existed bool, req lockcheck.LockRequest, dryRun bool, save func(string) error, out *lockOut) error {
	before := f.Bytes()
	updates, problems, err := lockcheck.UpdateLock(ctx, r, f, req)
	st.warnings(r)
	var none *lockcheck.NoPlatformsError
	if errors.As(err, &none) {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w", path, err)}
	}
	if err != nil {
		return noCatalogue(err)
	}
	if len(req.Platforms) == 0 && len(updates) > 0 {
		st.tell("%s: locking the platforms it is about: %s (--platform names others)", path, aboutList(updates))
	}
	for _, u := range updates {
		for _, n := range u.Notes() {
			st.tell("note: %s", n)
		}
		for _, w := range u.Warnings(r.String()) {
			st.tell("warning: %s", w)
		}
	}
	if len(problems) > 0 {
		if err := out.notChanged(st, path, problems, nil); err != nil {
			return err
		}
		st.tell("%s: not changed: %s", path, report.Summary(problems))
		return errProblem
	}
	added := 0
	for _, u := range updates {
		added += len(u.Added)
	}
	after := f.Bytes()
	switch {
	case dryRun:
		out.updated(st, path, r.String(), "dry_run", updates)
		st.tell("%s: %d hashes would be added (dry run, not written)", path, added)
	case existed && bytes.Equal(before, after):
		out.updated(st, path, r.String(), "unchanged", updates)
		st.tell("%s: already has every hash (%d providers)", path, len(f.Providers()))
	default:
		if err := save(path); err != nil {
			_ = out.notChanged(st, path, nil, err) // nil: no problems to print
			st.tell("%v", err)
			st.tell("%s: not changed: it could not be written", path)
			return errProblem
		}
		out.updated(st, path, r.String(), "written", updates)
		st.tell("%s: %d hashes added for %d providers", path, added, len(updates))
	}
	return nil
}

// lockFrom is lock --from: each configuration found under the
// directories is locked into its own lock file, on its own.
func lockFrom(ctx context.Context, st streams, env *Env, mirrorArg string, from []string, sel *selectionFlags, header string, dryRun, download bool, out *lockOut) error {
	if len(sel.providers) > 0 || sel.version != "" || sel.lock != "" {
		return usageErr("--provider, --version and --lock do not go with --from: each configuration says which providers and versions to lock, into its own lock file")
	}
	s, err := sel.baseSelection()
	if err != nil {
		return err
	}
	if header != "" {
		if _, err := lockfile.ParseHeader(header); err != nil {
			return usageErr("--header: %v", err)
		}
	}
	configs, err := deriveFrom(ctx, st, from)
	if err != nil {
		return err
	}
	r, err := openPlace(ctx, mirrorArg, env.placeOptions())
	if err != nil {
		return err
	}
	roots := realRoots(from)
	failed, unknown, tried := 0, 0, 0
	for _, c := range configs {
		path := filepath.Join(c.Dir, lockfile.DefaultName)
		if c.LockErr != nil {
			// Each file is all or nothing: this one is named, the others
			// are written.
			_ = out.notChanged(st, path, nil, c.LockErr) // nil: no problems to print
			st.tell("%v", c.LockErr)
			st.tell("%s: not changed (see above)", path)
			failed++
			continue
		}
		if len(c.Requirements) == 0 {
			st.tell("%s: the configuration requires no provider: nothing to lock", c.Dir)
			continue
		}
		if real, ok := insideRoots(c.Dir, roots); !ok {
			// Reached through a link to a directory elsewhere: read, as
			// every --from walk reads it, but a walk over a checkout
			// never writes outside it.
			_ = out.notChanged(st, path, nil, fmt.Errorf("not written: it is %s (through a symbolic link), outside --from", real)) // nil: no problems to print
			st.tell("%s: not written: it is %s (through a symbolic link), outside --from %s; lock it with --from or --lock there", path, real, strings.Join(from, ", "))
			failed++
			continue
		}
		tried++
		req := configRequest(c, lockcheck.LockRequest{Platforms: s.Platforms, Hashing: env.hashing(), Download: download})
		bad, noPlatform, err := lockConfigFile(ctx, st, r, path, header, req, dryRun, out)
		if err != nil {
			return err
		}
		if bad {
			failed++
		}
		if noPlatform {
			unknown++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if unknown > 0 && unknown == tried {
		return usageErr("no lock file under --from %s says which platforms it is about: name them with --platform (repeatable), e.g. --platform linux_amd64 --platform darwin_arm64", strings.Join(from, ", "))
	}
	if failed > 0 {
		st.tell("%d of %d lock files could not be written (see above)", failed, len(configs))
		return errProblem
	}
	return nil
}

// lockConfigFile is lock --from's update of one configuration's lock file
// at path. bad: it was left alone (and why was told); noPlatform: because
// it says no platform and --platform named none.
func lockConfigFile(ctx context.Context, st streams, r backends.Reader, path, header string, req lockcheck.LockRequest, dryRun bool, out *lockOut) (bad, noPlatform bool, err error) {
	f, existed, err := loadLock(ctx, st, path, header)
	if err != nil {
		_ = out.notChanged(st, path, nil, err) // nil: no problems to print
		st.tell("%v", err)
		st.tell("%s: not changed (see above)", path)
		return true, false, nil
	}
	// A lock file that is a symbolic link is replaced by a regular
	// file, its target left alone, as terraform providers lock does.
	err = updateLock(ctx, st, r, path, f, existed, req, dryRun, f.SaveAt, out)
	var none *lockcheck.NoPlatformsError
	switch {
	case errors.As(err, &none):
		// Without --platform, a configuration whose lock says no
		// platform is named and left alone; the others are locked.
		_ = out.notChanged(st, path, nil, none) // nil: no problems to print
		st.tell("%v", err)
		return true, true, nil
	case errors.Is(err, errProblem):
		return true, false, nil
	}
	return false, false, err
}

// configRequest is req for the configuration c: the providers it
// requires, with their constraints. A lock file alone is updated as lock
// --lock does: its providers at their versions, its constraints kept.
func configRequest(c spec.Configuration, req lockcheck.LockRequest) lockcheck.LockRequest {
	if !c.LockOnly {
		req.Required = []lockcheck.RequiredLock{}
		for _, q := range c.Requirements {
			req.Required = append(req.Required, lockcheck.RequiredLock{Provider: q.Provider, Constraints: q.Constraints, From: q.From})
		}
	}
	return req
}

// realRoots are the --from directories with every link resolved; one
// that cannot be resolved is left out (deriveFrom has refused it).
func realRoots(from []string) []string {
	var out []string
	for _, d := range from {
		if abs, err := filepath.Abs(d); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				out = append(out, real)
			}
		}
	}
	return out
}

// insideRoots resolves dir's links and says whether it lies in one of the
// (resolved) roots; it returns the resolved path.
func insideRoots(dir string, roots []string) (string, bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return dir, false
	}
	for _, root := range roots {
		rel, err := filepath.Rel(root, real)
		if err == nil && filepath.IsLocal(rel) || rel == "." {
			return real, true
		}
	}
	return real, false
}

// deriveFrom finds the configurations under the --from directories, and
// says on stderr what it left out.
func deriveFrom(ctx context.Context, st streams, from []string) ([]spec.Configuration, error) {
	var dirs []string
	for _, d := range from {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usageErr("--from %s: %v", d, err)
		}
		dirs = append(dirs, abs)
	}
	configs, notes, err := spec.Derive(ctx, dirs, spec.DefaultRegistry)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		st.tell("note: %s", n)
	}
	if len(configs) == 0 {
		return nil, usageErr("--from %s: no configuration (.tf files) or lock file found", strings.Join(from, ", "))
	}
	return configs, nil
}

// everyProvider names every provider r holds, for a lock file that locks
// none yet; a place without a catalogue needs them named.
func everyProvider(ctx context.Context, st streams, r backends.Reader) ([]backends.ProviderFilter, error) {
	ps, err := r.Providers(ctx)
	if errors.Is(err, backends.ErrNoCatalogue) {
		return nil, usageErr("%s cannot list its providers: name the providers to lock with --provider", r)
	}
	if err != nil {
		return nil, err
	}
	var out []backends.ProviderFilter
	for _, p := range ps {
		f, err := backends.ParseProviderFilter(p.String())
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to lock: %s holds no providers", r)
	}
	return out, nil
}

// aboutList names the platforms the updates locked, each once, sorted.
func aboutList(updates []lockcheck.LockUpdate) string {
	var ps []backends.Platform
	for _, u := range updates {
		for _, p := range u.Platforms {
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	backends.SortPlatforms(ps)
	return backends.JoinPlatforms(ps)
}
