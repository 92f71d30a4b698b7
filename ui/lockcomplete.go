package ui

import (
	"fmt"
	"slices"

	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// h1Platforms is the platform of each of hs's h1: hashes idx ties to one.
func h1Platforms(idx *lockcheck.TieIndex, hs []hashing.Hash) map[hashing.Hash]string {
	out := map[hashing.Hash]string{}
	for _, h := range hs {
		if h.Scheme() != hashing.SchemeH1 {
			continue
		}
		if p, ok := idx.PlatformOf(h); ok {
			out[h] = p.String()
		}
	}
	return out
}

// lockComplete says of one lock file for how many of the platforms its
// providers' locks are about (M) it holds, for every provider it locks,
// the h1: of that platform's package (N): what a filesystem mirror and
// init -lockfile=readonly need on that platform. ok is false while the
// hashes are being tied.
func (v *providersView) lockComplete(file string) (n, m int, ok bool) {
	var plats []string
	type entry struct {
		k      lockKey
		hashes []hashing.Hash
	}
	var entries []entry
	for _, e := range v.lock.locks.Entries {
		if e.Locked.Source != file {
			continue
		}
		k := lockKey{e.Provider, e.Locked.Version.String()}
		if v.lock.tied[k] == nil {
			return 0, 0, false
		}
		entries = append(entries, entry{k, e.Locked.Hashes})
		for _, p := range v.lockPlatforms(e.Provider) {
			if !slices.Contains(plats, p) {
				plats = append(plats, p)
			}
		}
	}
	for _, plat := range plats {
		all := len(entries) > 0
		for _, e := range entries {
			t := v.lock.tied[e.k]
			all = all && slices.ContainsFunc(e.hashes, func(h hashing.Hash) bool { return t.h1Of[h] == plat })
		}
		if all {
			n++
		}
	}
	return n, len(plats), true
}

// completeLines say, for each lock file that locks the provider shown,
// for how many of its platforms it is complete.
func (v *providersView) completeLines() []string {
	s := v.sh.styles
	var out []string
	seen := map[string]bool{}
	for _, e := range v.lock.locks.Entries {
		if e.Provider != v.current || seen[e.Locked.Source] {
			continue
		}
		seen[e.Locked.Source] = true
		n, m, ok := v.lockComplete(e.Locked.Source)
		if !ok || m == 0 {
			continue
		}
		style := s.Dim
		if n < m {
			style = s.Warn
		}
		out = append(out, style.Render(fmt.Sprintf(" %s: complete for %d of %d platforms", e.Locked.Source, n, m)))
	}
	return out
}
