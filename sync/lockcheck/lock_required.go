package lockcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/sync"
)

// RequiredLock is one provider a configuration requires, for UpdateLock
// to lock as `terraform providers lock` run in that configuration does:
//
//   - a provider the file locks keeps its version, which the constraints
//     must allow (terraform refuses a locked version they exclude, and
//     only `init -upgrade` moves it): otherwise it is a problem and the
//     file is left alone;
//   - a provider the file does not lock gets the newest version the place
//     holds that the constraints allow (prereleases only when nothing
//     else is there);
//   - the entry's constraints become the configuration's, in the clients'
//     canonical form (none: no constraints line);
//   - the file's entries for providers the configuration no longer
//     requires are left as they are, as terraform leaves them.
type RequiredLock struct {
	Provider backends.Provider
	// Constraints are every constraint the configuration's modules state
	// for it; all must hold.
	Constraints version.Constraints
	// From names where they are stated (FILE:LINE), for messages.
	From []string
}

// requiredTargets picks the version of each required provider.
func requiredTargets(ctx context.Context, r backends.Reader, f *lockfile.File, reqs []RequiredLock) ([]lockTarget, []sync.Finding, error) {
	var out []lockTarget
	var problems []sync.Finding
	for _, q := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		problem := func(v backends.Version, detail string, args ...any) {
			problems = append(problems, sync.Finding{Package: backends.Package{Provider: q.Provider, Version: v}, Status: sync.StatusError, Detail: fmt.Sprintf(detail, args...)})
		}
		canon, err := lockfile.CanonicalConstraints(q.Constraints.String())
		if err != nil {
			problem(nil, "%s: the constraints %s cannot be written in a lock file: %v", q.Provider, q.where(), err)
			continue
		}
		t := lockTarget{provider: q.Provider, constraints: &canon}
		if l, ok := f.Provider(q.Provider); ok {
			switch {
			case backends.Unspecified(l.Version):
				problem(l.Version, "%s: %v: not adding hashes to it; move the lock to a released version with -p %s -v CONSTRAINT", q.Provider, lockfile.ErrUnspecified, q.Provider)
			case !q.Constraints.Check(l.Version):
				problem(l.Version, "%s is locked at %s, which the configuration's constraints %s do not allow: terraform init would refuse it as well; move the lock (`terraform init -upgrade`, or `tfmirror lock %s --lock FILE -p %s -v CONSTRAINT`) or change the constraints",
					q.Provider, l.Version, q.where(), r, q.Provider)
			default:
				t.version = l.Version
				out = append(out, t)
			}
			continue
		}
		vs, err := r.Versions(ctx, q.Provider)
		if err != nil && !errors.Is(err, backends.ErrNotFound) {
			return nil, nil, err
		}
		pick := backends.NewestMatching(q.Constraints).ProviderVersions(vs)
		if len(pick) == 0 {
			held := "none"
			if len(vs) > 0 {
				held = backends.VersionList(vs, 5)
			}
			problems = append(problems, sync.Finding{Package: backends.Package{Provider: q.Provider}, Status: sync.StatusMissing,
				Detail: fmt.Sprintf("%s holds no version of %s that the configuration's constraints %s allow (it holds: %s); copy one in first (`tfmirror sync SOURCE %s -p %s -v CONSTRAINT`)", r, q.Provider, q.where(), held, r, q.Provider)})
			continue
		}
		t.version, t.isNew = pick[0], true
		out = append(out, t)
	}
	return out, problems, nil
}

// where is the constraints and where they are stated, for messages.
func (q RequiredLock) where() string {
	c := "(none)"
	if len(q.Constraints) > 0 {
		c = fmt.Sprintf("%q", q.Constraints.String())
	}
	if len(q.From) == 0 {
		return c
	}
	return c + " (" + strings.Join(q.From, ", ") + ")"
}
