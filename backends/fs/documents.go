package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/hashing"
)

// unlist removes pkg's platform from its <version>.json, if listed. The
// caller holds the provider lock.
func (m *Mirror) unlist(pkg backends.Package) error { return m.unlistGone(pkg, "") }

// unlistGone is unlist where there is no file at target, unless target is
// "". It reads the version document first: in a mirror being filled, most
// archives land where no document lists them, and the document's absence
// then spares a lookup of the archive's name (5 % of the CPU of landing
// 10,000 tiny archives).
//
// A document found missing is not looked for again by the commits of the
// version's other platforms, until the provider's next Flush (which ends
// the run and writes it): a document that another writer makes meanwhile
// lists only archives that have landed, whose names a commit then finds
// taken. (Only a listing whose archive is deleted by hand in between
// outlives it, until that Flush rewrites the document.)
func (m *Mirror) unlistGone(pkg backends.Package, target string) error {
	dir := m.providerDir(pkg.Provider)
	v := pkg.Version.String()
	if target != "" && m.absentDoc(dir, v, false) {
		return nil
	}
	doc, path, _, err := m.readVersionDocBytes(dir, v, nil)
	if doc == nil {
		if os.IsNotExist(err) && target != "" {
			m.absentDoc(dir, v, true)
		}
		return nil
	}
	if _, ok := doc.Archives[pkg.Platform.String()]; !ok {
		return nil
	}
	if target != "" {
		if _, err := os.Lstat(target); !errors.Is(err, iofs.ErrNotExist) {
			return nil
		}
	}
	delete(doc.Archives, pkg.Platform.String())
	return writeJSON(path, doc)
}

// absentDoc reports whether a commit found dir's document of version v
// missing (unlistGone) since the last Flush of dir; with found, it records
// that a commit did.
func (m *Mirror) absentDoc(dir, v string, found bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if found {
		if m.absentDocs == nil {
			m.absentDocs = map[string]map[string]bool{}
		}
		if m.absentDocs[dir] == nil {
			m.absentDocs[dir] = map[string]bool{}
		}
		m.absentDocs[dir][v] = true
	}
	return m.absentDocs[dir][v]
}

// forgetAbsentDocs forgets the documents of dir that commits found
// missing: Flush writes them.
func (m *Mirror) forgetAbsentDocs(dir string) {
	m.mu.Lock()
	delete(m.absentDocs, dir)
	m.mu.Unlock()
}

func (m *Mirror) markUnsynced(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unsynced[dir] = true
}

// syncLanded makes durable the entries of archives put in dir since
// its last fsync.
func (m *Mirror) syncLanded(dir string) {
	m.mu.Lock()
	pending := m.unsynced[dir]
	delete(m.unsynced, dir)
	m.mu.Unlock()
	if pending {
		atomicfile.SyncDir(dir)
	}
}

// Flush rewrites p's index.json and <version>.json documents from the packed
// archives on disk, as `providers mirror` does, listing both h1: and zh: of
// each archive merged with the hashes already listed for the same file. It
// holds the provider lock, as commits do, so the documents it writes list
// every archive landed before it, whichever process landed them.
func (m *Mirror) Flush(ctx context.Context, p backends.Provider) error {
	if m.opts.Unpacked {
		return nil // index documents describe zips only
	}
	dir := m.providerDir(p)
	unlock, err := m.lockProvider(ctx, p)
	if err != nil {
		return fmt.Errorf("mirror %s: %s: %w", m.name, p, err)
	}
	defer unlock()
	m.forgetAbsentDocs(dir)
	m.sweepOnce(dir)
	m.syncLanded(dir)
	s := m.scanProvider(p, []string{dir}, false) // the documents state no sizes
	index := mirrordoc.Index{Versions: map[string]struct{}{}}
	versions := make([]string, 0, len(s.entries))
	for v := range s.entries {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	docs := newDocBatch(m, dir)
	defer docs.abort()
	var buf []byte
	for _, v := range versions {
		if err := ctx.Err(); err != nil {
			return err
		}
		doc := mirrordoc.Version{Archives: map[string]mirrordoc.Archive{}}
		// The document as it is: what it lists, and what the rewrite is
		// compared with (read once for both).
		old, _, was, readErr := m.readVersionDocBytes(dir, v, &buf)
		for plat, e := range s.entries[v] {
			if e.layout != backends.Packed {
				continue
			}
			hashes, err := m.indexHashes(e, old)
			if err != nil {
				return fmt.Errorf("mirror %s: %s: %w", m.name, e.pkg, err)
			}
			doc.Archives[plat] = mirrordoc.Archive{Hashes: hashes, URL: filepath.Base(e.path)}
		}
		if len(doc.Archives) == 0 {
			continue
		}
		index.Versions[v] = struct{}{}
		if err := docs.addOver(mirrordoc.VersionName(s.versions[v]), doc, was, readErr); err != nil {
			return fmt.Errorf("mirror %s: %s %s: %w", m.name, p, v, err)
		}
	}
	// The version documents are made durable together and their entries
	// after them, before index.json names their versions.
	if err := docs.commit(); err != nil {
		return fmt.Errorf("mirror %s: %s: %w", m.name, p, err)
	}
	err = docs.add(mirrordoc.IndexName, index)
	if err == nil {
		err = docs.commit()
	}
	if err != nil {
		return fmt.Errorf("mirror %s: %s: %w", m.name, p, err)
	}
	return nil
}

// indexHashes returns the hashes to list for e, by mirrordoc.Hashes' rule:
// what old lists for the same file, with the sums this process recorded
// when it landed the file or, where needed, sums computed from it (h1: only
// where the listing states one to check, or with --hashes all).
func (m *Mirror) indexHashes(e *entry, old *versionDoc) ([]string, error) {
	var listed []string
	if ad, _, describes := old.entry(e); describes {
		listed = ad.Hashes
	}
	out, contradicted, err := mirrordoc.Hashes(listed, m.landed.Sums(e.path), m.opts.Hashing.AllHashes, func(h1 bool) (hashing.Sums, error) {
		if !h1 {
			// Not landed through a verified transfer: list it only if it
			// is a zip at all.
			if err := hashing.CheckZip(e.path); err != nil {
				return hashing.Sums{}, err
			}
		}
		return hashing.HashZipSums(e.path, h1, m.opts.Hashing)
	})
	if contradicted {
		m.warnf("%s: does not match the hashes %s lists for it; they are left for verify to report", m.rel(e.path), m.rel(old.path))
	}
	return out, err
}
