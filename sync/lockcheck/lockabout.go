package lockcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/sync"
)

// AssumedNote says which platforms were assumed and how to narrow them,
// or "" when none were: the one wording of check, sync, lock and the UI
// (LockTies.Assumed).
func AssumedNote(assumed []backends.Platform) string {
	if len(assumed) == 0 {
		return ""
	}
	return fmt.Sprintf("assumed %s: the lock holds the registry's signed zh: for every platform, so it cannot say which ones your team runs init on; name yours with --platform to narrow", backends.JoinPlatforms(assumed))
}

// AssumedLine is AssumedNote about p's lock at v, for a line of its own.
func AssumedLine(p backends.Provider, v backends.Version, assumed []backends.Platform) string {
	if len(assumed) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s: %s", p, v, AssumedNote(assumed))
}

// NoPlatformsError is UpdateLock's answer when no platform was named and
// the lock file's hashes tie none (a new lock file, or one whose hashes
// are of packages the place does not hold): which platforms to lock
// cannot be told.
type NoPlatformsError struct {
	// Providers are those no platform could be told for.
	Providers []backends.Provider
}

func (e *NoPlatformsError) Error() string {
	var ps []string
	for _, p := range e.Providers[:min(len(e.Providers), 3)] {
		ps = append(ps, p.String())
	}
	if len(e.Providers) > 3 {
		ps = append(ps, fmt.Sprintf("and %d more", len(e.Providers)-3))
	}
	return fmt.Sprintf("no platform to lock for %s: the lock file ties none of its hashes to a platform (it locks no hash yet, or only hashes of packages the place does not hold); name the platforms init runs on with --platform, e.g. --platform linux_amd64 --platform darwin_arm64",
		strings.Join(ps, ", "))
}

// aboutTargets sets each target's platforms: named (--platform), where
// it names any; else those the lock's hashes for the provider are tied to
// through r (LockTies.About, check's rule), with the ones tied only by a
// signed SHA256SUMS assumed. A target the lock has no evidence for (a
// provider it does not lock yet, or hashes r ties to nothing) gets the
// platforms the rest of the file is about; with none anywhere it is a
// *NoPlatformsError.
func aboutTargets(ctx context.Context, r backends.Reader, f *lockfile.File, targets []lockTarget, named []backends.Platform) error {
	var readErr error
	tieEntry := func(l *lockfile.Provider) LockTies {
		if len(l.Hashes) == 0 {
			return LockTies{}
		}
		ties, errs := TieRead(ctx, l.Addr, sync.Locked{Version: l.Version, Hashes: l.Hashes}, []backends.Reader{r})
		if errs[0] != nil && len(ties.Platforms) == 0 && readErr == nil {
			readErr = fmt.Errorf("%s: %s %s: %w", r, l.Addr, l.Version, errs[0])
		}
		return ties
	}
	var union []backends.Platform
	addUnion := func(ps []backends.Platform) {
		for _, p := range ps {
			if !slices.Contains(union, p) {
				union = append(union, p)
			}
		}
	}
	for i, t := range targets {
		l, ok := f.Provider(t.provider)
		if !ok {
			continue
		}
		ties := tieEntry(l)
		if t.old == nil {
			// The h1: hashes that stay: a platform one is tied to, or
			// may be (unplaced), needs no warning that it lacks one.
			targets[i].h1Tied, targets[i].h1Unplaced = ties.H1, len(ties.Unplaced)
		}
		if len(named) == 0 {
			targets[i].platforms, targets[i].assumed, targets[i].unplaced = ties.Platforms, ties.Assumed, len(ties.Unplaced)
			addUnion(ties.Platforms)
		}
	}
	if err := ctx.Err(); err != nil || len(named) > 0 {
		for i := range targets {
			targets[i].platforms = named
		}
		return err
	}
	var none []backends.Provider
	for i, t := range targets {
		if len(t.platforms) > 0 {
			continue
		}
		if len(union) == 0 {
			// Only now is the rest of the file asked: a provider added to
			// a file whose locked providers were not selected.
			for _, l := range f.Providers() {
				addUnion(tieEntry(l).Platforms)
			}
			backends.SortPlatforms(union)
		}
		if len(union) == 0 {
			none = append(none, t.provider)
			continue
		}
		targets[i].platforms, targets[i].fromFile = union, true
	}
	if len(none) > 0 && readErr != nil {
		// Not knowing is the place's fault, not the lock's.
		return readErr
	}
	if len(none) > 0 {
		return &NoPlatformsError{Providers: none}
	}
	return ctx.Err()
}

// Notes are what a lock update should be told beside its hashes: the
// platforms assumed (AssumedLine), and the locked h1: hashes whose
// platform could not be told.
func (u LockUpdate) Notes() []string {
	var out []string
	if n := AssumedLine(u.Provider, u.Version, u.Assumed); n != "" {
		out = append(out, n)
	}
	if u.Unplaced > 0 {
		out = append(out, fmt.Sprintf("%s %s: %d locked h1: hashes are of packages the place does not hold, so their platforms cannot be told; name those platforms with --platform to lock them too", u.Provider, u.Version, u.Unplaced))
	}
	if u.FromFile {
		out = append(out, fmt.Sprintf("%s %s: locked for %s, the platforms the rest of the lock file is about", u.Provider, u.Version, backends.JoinPlatforms(u.Platforms)))
	}
	return out
}

// Warnings are the platforms locked without an h1: (NoH1), each line
// saying what that means and what to do; place names where the hashes
// came from.
func (u LockUpdate) Warnings(place string) []string {
	if len(u.NoH1) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s %s: no h1: recorded for %s: %s states only the zh: of that package, and terraform init -lockfile=readonly and filesystem mirrors need its h1:; add --hashes all to download and hash it, or lock from a place that states the h1:",
		u.Provider, u.Version, backends.JoinPlatforms(u.NoH1), place)}
}
