package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/lockedtemp"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/hashing"
)

var _ backends.Remover = (*Mirror)(nil)

// Remove deletes archives of p, under p's lock, in the order that keeps
// the crash rule (an index never lists an archive that is gone): index.json
// is rewritten without the versions that lose their last archive, then
// each <version>.json without the removed platforms (or deleted when it
// lists none), and only then are the archives deleted. A kill between
// leaves archives on disk that no document lists, which verify reports and
// the next prune deletes. The directories are read again under the lock:
// an archive that is not the one listed (another writer replaced it, or
// listed it since) is left.
func (m *Mirror) Remove(ctx context.Context, p backends.Provider, as []backends.Archive) (backends.Removal, error) {
	var out backends.Removal
	if len(as) == 0 {
		return out, nil
	}
	if err := m.mkdirInside(m.providerDir(p)); err != nil {
		return out, fmt.Errorf("mirror %s: %s: %w", m.name, p, err)
	}
	unlock, err := m.lockProvider(ctx, p)
	if err != nil {
		return out, fmt.Errorf("mirror %s: %s: %w", m.name, p, err)
	}
	defer unlock()
	m.sweepOnce(m.providerDir(p))
	s, err := m.scan(ctx, p)
	if errors.Is(err, backends.ErrNotFound) {
		for _, a := range as {
			out.Removed = append(out.Removed, a.Package)
		}
		return out, nil
	}
	if err != nil {
		return out, err
	}
	targets := m.removable(s, as, &out)
	if err := m.unlistAll(s, targets); err != nil {
		return out, err
	}
	for _, e := range targets {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := m.deleteEntry(e); err != nil {
			return out, fmt.Errorf("mirror %s: %s: %w", m.name, e.pkg, err)
		}
		out.Removed = append(out.Removed, e.pkg)
	}
	if err := m.removeProvenance(p, emptiedVersions(s, targets)); err != nil {
		return out, err
	}
	return out, nil
}

// emptiedVersions returns the versions of s every entry of which is among
// targets: once they are deleted, nothing of those versions is left.
func emptiedVersions(s *providerScan, targets []*entry) []backends.Version {
	removed := map[*entry]bool{}
	for _, e := range targets {
		removed[e] = true
	}
	var out []backends.Version
	for v, plats := range s.entries {
		left := false
		for _, e := range plats {
			left = left || !removed[e]
		}
		if !left {
			out = append(out, s.versions[v])
		}
	}
	return out
}

// removable returns the entries of s that are the archives as lists, as
// they were listed; the others are added to out, as removed when they
// are gone already and as left when they changed.
func (m *Mirror) removable(s *providerScan, as []backends.Archive, out *backends.Removal) []*entry {
	var targets []*entry
	for _, a := range as {
		e := s.entries[a.Version.String()][a.Platform.String()]
		if e == nil {
			out.Removed = append(out.Removed, a.Package) // gone already
			continue
		}
		if why := m.changed(s, e, a); why != "" {
			out.Left = append(out.Left, backends.Left{Package: a.Package, Reason: why})
			continue
		}
		targets = append(targets, e)
	}
	return targets
}

// changed says how the archive on disk differs from a as it was listed,
// or "" when it is the same: same file, size and listed hashes.
func (m *Mirror) changed(s *providerScan, e *entry, a backends.Archive) string {
	if e.path != a.Location || e.layout != a.Layout || e.layout == backends.Packed && e.size != a.Size {
		return fmt.Sprintf("%s changed since the plan was made (another writer replaced it); left", m.rel(e.path))
	}
	var now []backends.Archive
	for _, x := range m.appendArchives(nil, s, a.Version.String()) {
		if x.Platform == a.Platform {
			now = append(now, x)
		}
	}
	if len(now) != 1 || !slices.Equal(indexHashesOf(now[0]), indexHashesOf(a)) {
		return fmt.Sprintf("the index documents list %s differently since the plan was made (another writer listed or replaced it); left", m.rel(e.path))
	}
	return ""
}

// indexHashesOf returns the hashes the mirror's index documents state for a.
func indexHashesOf(a backends.Archive) []hashing.Hash {
	var hs []hashing.Hash
	for _, ev := range a.Evidence {
		if ev.Source.Kind == hashing.SourceMirrorIndex {
			hs = append(hs, ev.Hashes...)
		}
	}
	return hashing.SortUnique(hs)
}

// unlistAll rewrites the index documents of each directory that holds
// targets: index.json first, without the versions left with no archive,
// then the <version>.json documents.
func (m *Mirror) unlistAll(s *providerScan, targets []*entry) error {
	byDir := map[string]map[string][]*entry{} // directory -> version -> entries
	for _, e := range targets {
		if e.layout != backends.Packed {
			continue // index documents describe zips only
		}
		dir := filepath.Dir(e.path)
		if byDir[dir] == nil {
			byDir[dir] = map[string][]*entry{}
		}
		v := e.pkg.Version.String()
		byDir[dir][v] = append(byDir[dir][v], e)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if err := m.unlistIn(dir, s.versions, byDir[dir]); err != nil {
			return fmt.Errorf("mirror %s: %w", m.name, err)
		}
	}
	return nil
}

// unlistIn rewrites dir's documents without the entries, by version.
func (m *Mirror) unlistIn(dir string, versions map[string]backends.Version, byVersion map[string][]*entry) error {
	docs := map[string]*versionDoc{}
	var emptied []string
	for v, es := range byVersion {
		doc, _ := m.readVersionDoc(dir, versions[v])
		if doc == nil {
			emptied = append(emptied, v)
			continue
		}
		for _, e := range es {
			plat := e.pkg.Platform.String()
			if ad, ok := doc.Archives[plat]; ok && strings.EqualFold(filepath.Base(ad.URL), filepath.Base(e.path)) {
				delete(doc.Archives, plat)
			}
		}
		docs[v] = doc
		if len(doc.Archives) == 0 {
			emptied = append(emptied, v)
		}
	}
	if err := m.unlistVersions(dir, emptied); err != nil {
		return err
	}
	m.stepDone("index.json")
	for v, doc := range docs {
		path := filepath.Join(dir, v+".json")
		var err error
		if len(doc.Archives) == 0 {
			err = os.Remove(path)
		} else {
			err = writeJSON(path, doc)
		}
		if err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("%s: %w", m.rel(path), err)
		}
		m.stepDone(v + ".json")
	}
	return nil
}

// unlistVersions rewrites dir's index.json, if it has one, without vs.
func (m *Mirror) unlistVersions(dir string, vs []string) error {
	path := filepath.Join(dir, "index.json")
	if _, err := os.Stat(path); errors.Is(err, iofs.ErrNotExist) || len(vs) == 0 {
		return nil
	}
	listed := m.readIndex(path)
	if listed == nil {
		// Unreadable: nothing it lists can be trusted, and a rewrite
		// would drop what another tool wrote. Flush rewrites it.
		return nil
	}
	index := mirrordoc.Index{Versions: map[string]struct{}{}}
	for v := range listed {
		if !slices.Contains(vs, v) {
			index.Versions[v] = struct{}{}
		}
	}
	if err := writeJSON(path, index); err != nil {
		return fmt.Errorf("%s: %w", m.rel(path), err)
	}
	return nil
}

// deleteEntry deletes an archive no document lists any more. An unpacked
// directory is first renamed to a hidden staging name, so no reader sees
// it half deleted; a kill leaves the hidden name for the next sweep.
func (m *Mirror) deleteEntry(e *entry) error {
	m.landed.Forget(e.path)
	if e.layout == backends.Packed {
		if err := os.Remove(e.path); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		atomicfile.SyncDir(filepath.Dir(e.path))
		m.stepDone(filepath.Base(e.path))
		return nil
	}
	verDir := filepath.Dir(e.path)
	gone := filepath.Join(verDir, "."+filepath.Base(e.path)+lockedtemp.Marker+"removed")
	if err := os.Rename(e.path, gone); err != nil {
		return err
	}
	atomicfile.SyncDir(verDir)
	m.stepDone(filepath.Base(verDir) + "/" + filepath.Base(e.path))
	if err := os.RemoveAll(gone); err != nil {
		return err
	}
	os.Remove(verDir) // only when nothing else is left in it
	return nil
}

// stepDone calls the test hook, if any, after each write of a Remove.
func (m *Mirror) stepDone(what string) {
	if m.afterStep != nil {
		m.afterStep(what)
	}
}
