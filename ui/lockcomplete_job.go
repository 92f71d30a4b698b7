package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/lockfile"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
)

// C completes the lock files the view opened on from the places: for each
// platform a lock is about (lockPlatforms, check's one rule) whose h1: or
// zh: a lock file lacks, the hashes of the locked package are taken from a
// place that holds it, as `tfmirror lock` takes them (lockcheck.UpdateLock:
// as the place states them where it does, else hashed from the package),
// shown in a preview (lockcomplete_preview.go) and, on confirm, written as
// `tfmirror lock` writes (lockfile.File.Save, atomically). Hashing and
// writing run in commands, with progress on the status line.

// fillTarget is one platform of one locked provider version to hash, and
// the place to hash it from.
type fillTarget struct {
	key     lockKey
	version backends.Version
	plat    backends.Platform
	place   int
}

// fillHashed is what hashing one fillTarget gave: the hashes of its
// package (as `tfmirror lock` would record them), or the problem.
type fillHashed struct {
	hashes  []hashing.Hash
	problem string
}

// fillMsg is a message of C's work, for the root.
type fillMsg interface{ fill() }

// fillProgressMsg says how far the hashing is; next waits for the next
// message.
type fillProgressMsg struct {
	done, total int
	what        string
	next        tea.Cmd
}

// fillHashedMsg is every target hashed, in the order of targets.
type fillHashedMsg struct {
	targets []fillTarget
	hashed  []fillHashed
}

// fillWrittenMsg is what writing the lock files did, one per file.
type fillWrittenMsg struct{ files []fillWritten }

// fillWritten is one lock file written: the hashes added and its entries
// as read back, or why it was not.
type fillWritten struct {
	path    string
	added   int
	entries []LockEntry
	err     error
}

func (fillProgressMsg) fill() {}
func (fillHashedMsg) fill()   {}
func (fillWrittenMsg) fill()  {}

// fillTargets chooses, for each locked provider version and platform it
// is about that some lock file lacks an h1: or zh: of, the place to take
// its hashes from: one that holds the locked package (not one the lock
// marks ≠), stating its h1: if one does, else a local one (hashed in
// place), else any (downloaded). none are the platforms no place holds.
func (v *lockView) fillTargets() (targets []fillTarget, none []fillTarget) {
	for _, k := range v.lock.keys() {
		t := v.lock.tied[k]
		if t == nil {
			continue
		}
		for _, plat := range v.lockPlatforms(k.p) {
			if !v.fillWanted(k, plat) {
				continue
			}
			pl, err := backends.ParsePlatform(plat)
			if err != nil {
				continue
			}
			best, rank := -1, 3
			for i := range v.mirrors {
				if r := v.fillRank(t, i, plat); r < rank {
					best, rank = i, r
				}
			}
			tg := fillTarget{key: k, version: v.lock.locked[k].Version, plat: pl, place: best}
			if best < 0 {
				none = append(none, tg)
				continue
			}
			targets = append(targets, tg)
		}
	}
	return targets, none
}

// fillWanted reports whether some lock file locking k lacks an h1: or a
// zh: tied to plat.
func (v *lockView) fillWanted(k lockKey, plat string) bool {
	t := v.lock.tied[k]
	for _, e := range v.lock.locks.Entries {
		if e.Provider != k.p || e.Locked.Version.String() != k.v {
			continue
		}
		h1, zh := false, false
		for _, h := range e.Locked.Hashes {
			if t.platOf[h] == plat {
				h1, zh = h1 || h.Scheme() == hashing.SchemeH1, zh || h.Scheme() == hashing.SchemeZip
			}
		}
		if !h1 || !zh {
			return true
		}
	}
	return false
}

// fillRank ranks place i as the source of plat's hashes: 0 it states the
// package's h1:, 1 it is local, 2 any other that holds it; 3 it does not
// hold the locked package.
func (v *lockView) fillRank(t *lockTied, i int, plat string) int {
	a, ok := t.held[i][plat]
	switch {
	case !ok || t.errs[i] != nil || t.differs[i][plat]:
		return 3
	case slices.ContainsFunc(a.Hashes(), func(h hashing.Hash) bool { return h.Scheme() == hashing.SchemeH1 }):
		return 0
	}
	if _, local := v.mirrors[i].reader.(backends.LocalPather); local {
		return 1
	}
	return 2
}

// startFill hashes targets in a command, a few at a time, each as
// `tfmirror lock` would lock that one platform from its place; progress
// comes as fillProgressMsg, the end as fillHashedMsg.
func (v *lockView) startFill(targets []fillTarget, opts hashing.Options) tea.Cmd {
	ctx := v.sh.ctx
	readers := make([]backends.Reader, len(v.mirrors))
	for i, mr := range v.mirrors {
		readers[i] = mr.reader
	}
	labels := make([]string, len(targets))
	for i, tg := range targets {
		labels[i] = fmt.Sprintf("%s %s %s from %s", tg.key.p.ShortString(), tg.key.v, tg.plat, v.queuePlace(tg.place).Label())
	}
	progress, final := make(chan fillProgressMsg, 1), make(chan fillHashedMsg, 1)
	var next tea.Cmd
	next = func() tea.Msg {
		select {
		case p := <-progress:
			p.next = next
			return p
		case f := <-final:
			return f
		}
	}
	start := func() tea.Msg {
		go func() {
			var done atomic.Int32
			out := make([]fillHashed, len(targets))
			sync.Parallel(ctx, 4, len(targets), func(i int) {
				out[i] = hashFillTarget(ctx, readers[targets[i].place], targets[i], opts)
				n := int(done.Add(1))
				select { // the latest is enough
				case progress <- fillProgressMsg{done: n, total: len(targets), what: labels[i]}:
				default:
				}
			})
			for i := range out {
				if out[i].hashes == nil && out[i].problem == "" && ctx.Err() != nil {
					out[i].problem = "cancelled"
				}
			}
			final <- fillHashedMsg{targets: targets, hashed: out}
		}()
		return fillProgressMsg{total: len(targets), what: "starting", next: next}
	}
	return start
}

// hashFillTarget locks tg's one platform into an empty lock file from r,
// with lockcheck.UpdateLock, as `tfmirror lock` does: what r states, or the
// package hashed. Only the hashes of tg's platform are kept (an origin's
// signed SHA256SUMS also gives every other platform's zh:).
func hashFillTarget(ctx context.Context, r backends.Reader, tg fillTarget, opts hashing.Options) fillHashed {
	f := lockfile.New(lockfile.HeaderTerraform)
	if err := f.Set(lockfile.Provider{Addr: tg.key.p, Version: tg.version}); err != nil {
		return fillHashed{problem: err.Error()}
	}
	updates, problems, err := lockcheck.UpdateLock(ctx, r, f, lockcheck.LockRequest{Platforms: []backends.Platform{tg.plat}, Hashing: opts})
	switch {
	case err != nil:
		return fillHashed{problem: err.Error()}
	case len(problems) > 0:
		var why []string
		for _, p := range problems {
			why = append(why, p.Detail)
		}
		return fillHashed{problem: strings.Join(why, "; ")}
	}
	var out fillHashed
	for _, u := range updates {
		for _, h := range u.Added {
			if h.Platform == tg.plat {
				out.hashes = append(out.hashes, h.Hash)
			}
		}
	}
	out.hashes = hashing.SortUnique(out.hashes)
	if len(out.hashes) == 0 {
		out.problem = "the place states no hash of it"
	}
	return out
}

// fillFileAdd is what C adds to one provider's lock in one file.
type fillFileAdd struct {
	p       backends.Provider
	version string
	hashes  []hashing.Hash
}

// writeFill adds the hashes to each lock file and writes it as `tfmirror
// lock` does (lockfile.File.Save: atomically, keeping its mode and any
// link), read anew so that nothing written meanwhile is lost; a file whose
// provider moved to another version since the preview is left alone.
func writeFill(files map[string][]fillFileAdd, order []string) tea.Cmd {
	return func() tea.Msg {
		var msg fillWrittenMsg
		for _, path := range order {
			msg.files = append(msg.files, writeFillFile(path, files[path]))
		}
		return msg
	}
}

func writeFillFile(path string, adds []fillFileAdd) fillWritten {
	w := fillWritten{path: path}
	f, err := lockfile.Load(path)
	if err != nil {
		w.err = fmt.Errorf("%w; nothing written: fix it, then press C again", err)
		return w
	}
	for _, a := range adds {
		l, ok := f.Provider(a.p)
		if !ok || l.Version.String() != a.version {
			w.err = fmt.Errorf("%s: it changed since the preview (%s is no longer locked at %s): nothing written; press C again", path, a.p, a.version)
			return w
		}
	}
	for _, a := range adds {
		w.added += len(f.AddHashes(a.p, a.hashes))
	}
	if w.added > 0 {
		if err := f.Save(path); err != nil {
			w.err, w.added = fmt.Errorf("%w; nothing written: make it writable, then press C again", err), 0
			return w
		}
	}
	for p, l := range lockcheck.LockedFromFile(f, path) {
		w.entries = append(w.entries, LockEntry{Provider: p, Locked: l})
	}
	return w
}
