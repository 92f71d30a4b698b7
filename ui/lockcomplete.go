package ui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/lockcheck"
	"github.com/tfmirror/tfmirror/ui/list"
	"github.com/tfmirror/tfmirror/ui/theme"
)

// tiedPlatforms is the platform of each of hs's hashes idx ties to one.
func tiedPlatforms(idx *lockcheck.TieIndex, hs []hashing.Hash) map[hashing.Hash]string {
	out := map[hashing.Hash]string{}
	for _, h := range hs {
		if p, ok := idx.PlatformOf(h); ok && p != (backends.Platform{}) {
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
func (v *lockView) lockComplete(file string) (n, m int, ok bool) {
	return v.lockCompleteWith(file, nil)
}

// lockCompleteWith is lockComplete as it would be with the h1: of each
// platform added says it gains (nil: none).
func (v *lockView) lockCompleteWith(file string, added func(k lockKey, plat string) bool) (n, m int, ok bool) {
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
			has := slices.ContainsFunc(e.hashes, func(h hashing.Hash) bool { return h.Scheme() == hashing.SchemeH1 && t.platOf[h] == plat })
			all = all && (has || added != nil && added(e.k, plat))
		}
		if all {
			n++
		}
	}
	return n, len(plats), true
}

// completeLines say, for each lock file that locks the provider shown,
// for how many of its platforms it is complete.
func (v *lockView) completeLines() []string {
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
		// The count is what the line is for: a long path is cut at its
		// start.
		what := fmt.Sprintf(": complete for %d of %d platforms", n, m)
		path := theme.TruncateLeft(e.Locked.Source, max(12, v.grid.Width()-1-theme.Width(what)))
		out = append(out, style.Render(" "+path+what))
	}
	return out
}

// startLockFill (C) hashes, for every lock file, the platforms it lacks
// hashes of, in a command; the preview opens when that is done.
func (m *Model) startLockFill() tea.Cmd {
	v, ok := m.views[viewProviders].(*lockView)
	switch {
	case !ok:
		return nil
	case v.lock.filling:
		m.setStatus(statusInfo, "still hashing for the lock files: the preview opens when that is done")
		return nil
	case v.lock.tied == nil:
		m.setStatus(statusInfo, "still tying the locked hashes to platforms: C works when that is done")
		return nil
	}
	targets, none := v.fillTargets()
	v.lock.none = none
	if len(targets) == 0 && len(none) == 0 {
		m.setStatus(statusInfo, "nothing to add: every lock file holds the h1: and zh: of each platform it is about")
		return nil
	}
	if len(targets) == 0 {
		m.openFillPreview(v, fillHashedMsg{})
		return nil
	}
	v.lock.filling = true
	m.setStatus(statusInfo, fmt.Sprintf("hashing %d package(s) for the lock files…", len(targets)))
	return v.startFill(targets, m.engine.Hashing())
}

// updateFill takes C's progress, its hashes (the preview opens) and what
// writing did (the view reads the lock files again).
func (m *Model) updateFill(msg fillMsg) tea.Cmd {
	v, ok := m.views[viewProviders].(*lockView)
	if !ok {
		return nil
	}
	switch msg := msg.(type) {
	case fillProgressMsg:
		if !v.lock.filling {
			return nil
		}
		if msg.done > 0 {
			m.setStatus(statusInfo, fmt.Sprintf("hashing for the lock files: %d of %d (%s)…", msg.done, msg.total, msg.what))
		}
		return msg.next
	case fillHashedMsg:
		v.lock.filling = false
		v.lock.learn(msg)
		m.openFillPreview(v, msg)
	case fillWrittenMsg:
		v.lock.filling = false
		return m.filled(v, msg)
	}
	return nil
}

// openFillPreview opens C's preview.
func (m *Model) openFillPreview(v *lockView, msg fillHashedMsg) {
	p := v.fillPreview(msg, v.lock.none)
	m.preview = &p
	m.setStatus(statusInfo, "")
}

// updatePreview scrolls the preview, closes it, or writes what it shows.
func (m *Model) updatePreview(k tea.KeyPressMsg) tea.Cmd {
	p := m.preview
	switch {
	case key.Matches(k, p.keys.Cancel):
		m.preview = nil
		m.setStatus(statusInfo, "the lock files were left as they are")
		return nil
	case key.Matches(k, p.keys.Write):
		m.preview = nil
		files, order := p.writes()
		if len(order) == 0 {
			m.setStatus(statusInfo, "nothing to write: the places state no hash the lock files lack")
			return nil
		}
		if v, ok := m.views[viewProviders].(*lockView); ok {
			v.lock.filling = true
		}
		m.setStatus(statusInfo, fmt.Sprintf("writing %d lock file(s)…", len(order)))
		return writeFill(files, order)
	}
	rows := max(1, m.lay.matrixH-2)
	last := max(0, len(p.lines(m.styles, m.lay.rightW-2))-rows)
	c := list.Cursor{Pos: p.top}
	if p.keys.Move(&c, k, last+1, max(1, rows-1)) {
		p.top = max(0, min(c.Pos, last))
	}
	return nil
}

// filled says what writing the lock files did, and reads them again.
func (m *Model) filled(v *lockView, msg fillWrittenMsg) tea.Cmd {
	var done []string
	var failed bool
	for _, w := range msg.files {
		if w.err != nil {
			failed = true
			m.sh.problem(statusBad, "✗ "+w.err.Error(), "")
			continue
		}
		// The count first: a long path is what the status line cuts.
		done = append(done, fmt.Sprintf("%s added to %s", hashesWord(w.added), w.path))
	}
	if !failed {
		m.setStatus(statusInfo, strings.Join(done, "; "))
	}
	return v.reloadLocks(msg.files)
}

// learn keeps the hashes C computed, by platform, for the tying: an h1:
// hashed from a downloaded package is stated by no place, yet is that
// platform's.
func (s *lockState) learn(msg fillHashedMsg) {
	if s.learned == nil {
		s.learned = map[lockKey]map[string][]hashing.Hash{}
	}
	for i, tg := range msg.targets {
		if msg.hashed[i].problem != "" {
			continue
		}
		if s.learned[tg.key] == nil {
			s.learned[tg.key] = map[string][]hashing.Hash{}
		}
		s.learned[tg.key][tg.plat.String()] = msg.hashed[i].hashes
	}
}

// reloadLocks takes in the lock files written, as read back, and ties
// the lock again; what was tied stays shown until then.
func (v *lockView) reloadLocks(ws []fillWritten) tea.Cmd {
	old := v.lock
	written := map[string][]LockEntry{}
	for _, w := range ws {
		if w.err == nil {
			written[w.path] = w.entries
		}
	}
	if len(written) == 0 {
		return nil
	}
	locks := &Locks{Files: old.locks.Files}
	for _, e := range old.locks.Entries {
		if _, ok := written[e.Locked.Source]; !ok {
			locks.Entries = append(locks.Entries, e)
		}
	}
	for _, f := range old.files() {
		locks.Entries = append(locks.Entries, written[f]...)
	}
	s := newLockState(locks)
	s.tied, s.gen, s.running, s.again, s.learned = old.tied, old.gen, old.running, old.again, old.learned
	v.lock = s
	return v.lockTie()
}

// learn ties the hashes C computed (by platform) in idx.
func learn(idx *lockcheck.TieIndex, k lockKey, v backends.Version, learned map[string][]hashing.Hash) {
	for plat, hs := range learned {
		if pl, err := backends.ParsePlatform(plat); err == nil {
			idx.AddArchive(backends.Archive{Package: backends.Package{Provider: k.p, Version: v, Platform: pl}}, hs...)
		}
	}
}

// lockHelpLines say in help what L and C do, in the lock view.
func (m Model) lockHelpLines() []string {
	if !m.keys.LockFill.Enabled() {
		return nil
	}
	w := max(20, m.w-10)
	out := []string{"", m.styles.Bold.Render(" Lock files")}
	for _, k := range []struct{ key, does string }{
		{"L", "fills the mirrors: queues every package a compared mirror lacks, or holds other than locked (f), from a source you pick"},
		{"C", "completes every lock file opened from the places: adds the h1: and zh: each lacks for the platforms it is about, as tfmirror lock does; shows the lines first, enter writes them"},
	} {
		for i, l := range strings.Split(ansi.Wrap(k.does, w, " "), "\n") {
			lead := "      "
			if i == 0 {
				lead = "  " + m.styles.Key.Render(k.key) + "   "
			}
			out = append(out, lead+l)
		}
	}
	return out
}

// files are the lock files the entries come from: in the order Files
// names them, then any other.
func (s *lockState) files() []string {
	var out []string
	for _, f := range s.locks.Files {
		if slices.ContainsFunc(s.locks.Entries, func(e LockEntry) bool { return e.Locked.Source == f }) {
			out = append(out, f)
		}
	}
	for _, e := range s.locks.Entries {
		if !slices.Contains(out, e.Locked.Source) {
			out = append(out, e.Locked.Source)
		}
	}
	return out
}

// hashesWord is "1 hash", "2 hashes"; lockFilesWord "1 lock file", "2
// lock files".
func hashesWord(n int) string {
	if n == 1 {
		return "1 hash"
	}
	return fmt.Sprintf("%d hashes", n)
}

func lockFilesWord(n int) string {
	if n == 1 {
		return "1 lock file"
	}
	return fmt.Sprintf("%d lock files", n)
}
