package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// tempMarker is in every staging name tfmirror creates. The names start
// with "." so the clients' and tfmirror's scanners never see them. A file
// or directory bearing it is locked (flock) for as long as its writer
// lives, so one that can be locked is a dead run's and may be removed.
const tempMarker = ".tfmirror-tmp-"

// newMarker is in a staging name for the instant between its creation and
// its lock, after which it is renamed to bear tempMarker: no sweeper can
// take a file in that instant for a dead run's.
const newMarker = ".tfmirror-new-"

// createLocked creates a hidden staging file in dir, named prefix +
// tempMarker + random, already locked when it takes that name. It returns
// the open file and its path (f.Name() is the creation name).
func createLocked(dir, prefix string) (*os.File, string, error) {
	f, err := createTemp(dir, prefix+newMarker)
	if err != nil {
		return nil, "", err
	}
	lockFile(f)
	final := filepath.Join(dir, strings.Replace(filepath.Base(f.Name()), newMarker, tempMarker, 1))
	if err := rename(f.Name(), final); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", err
	}
	return f, final, nil
}

// createTemp is os.CreateTemp(dir, prefix+"*") on openFile.
func createTemp(dir, prefix string) (f *os.File, err error) {
	_, err = freshName(dir, prefix, func(name string) (err error) {
		f, err = openFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// freshName calls take with dir/prefix followed by random digits until
// take does not find the name taken (an error matching os.ErrExist), at
// most 101 times, and returns the last name and take's error.
func freshName(dir, prefix string, take func(name string) error) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		err := take(name)
		if !errors.Is(err, iofs.ErrExist) || try == 100 {
			return name, err
		}
	}
}

// mkdirLocked is createLocked for a directory; close the returned handle
// to release the lock.
func mkdirLocked(dir, prefix string) (*os.File, string, error) {
	tmp, err := os.MkdirTemp(dir, prefix+newMarker+"*")
	if err != nil {
		return nil, "", err
	}
	d, err := os.Open(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, "", err
	}
	lockFile(d)
	final := filepath.Join(dir, strings.Replace(filepath.Base(tmp), newMarker, tempMarker, 1))
	if err := os.Rename(tmp, final); err != nil {
		d.Close()
		os.RemoveAll(tmp)
		return nil, "", err
	}
	return d, final, nil
}

// providerDir is where the mirror writes p: the display form of the
// hostname, as the clients write it.
func (m *Mirror) providerDir(p backends.Provider) string {
	return filepath.Join(m.dir, p.HostnameForDisplay(), p.Namespace, p.Type)
}

// Stage creates the staging file of pkg in the provider's directory
// (createStaging), which Commit puts in place in one step.
func (m *Mirror) Stage(ctx context.Context, pkg backends.Package) (backends.Staged, error) {
	dir := m.providerDir(pkg.Provider)
	// Sources only produce parsed packages, but a package built by hand must
	// not write outside the mirror either.
	if rel, err := filepath.Rel(m.dir, filepath.Join(dir, pkg.Filename())); err != nil || !filepath.IsLocal(rel) || strings.Count(filepath.ToSlash(rel), "/") != 3 {
		return nil, fmt.Errorf("mirror %s: %s: refusing a package whose path would leave the mirror", m.name, pkg)
	}
	var f *os.File
	var path string
	err := m.inDir(dir, func() (err error) {
		if m.opts.Unpacked {
			// The zip is extracted from its staging name.
			f, path, err = createLocked(dir, "."+pkg.Filename())
			return err
		}
		f, path, err = m.createStaging(dir, pkg.Filename())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, pkg, err)
	}
	m.sweepOnce(dir) // a directory mkdirInside found inside the mirror
	st := &staged{m: m, pkg: pkg, f: f, path: path, target: filepath.Join(dir, pkg.Filename())}
	if path == "" {
		st.path, st.unnamed = f.Name(), true
	}
	return st, nil
}

// createStaging creates the staging file of the file name in dir: unnamed
// where the system can (createUnnamed), and then its staging name is "";
// else named and locked (createLocked).
func (m *Mirror) createStaging(dir, name string) (*os.File, string, error) {
	if !m.named.Load() {
		f, err := createUnnamed(dir)
		if f != nil || err != nil {
			return f, "", err
		}
		m.named.Store(true) // not on this system: name every one
	}
	return createLocked(dir, "."+name)
}

// sweepOnce removes, once per directory and process, the staging files of
// runs that were killed: those no live process holds a lock on.
func (m *Mirror) sweepOnce(dir string) {
	m.mu.Lock()
	if m.swept == nil {
		m.swept = map[string]bool{}
	}
	done := m.swept[dir]
	m.swept[dir] = true
	m.mu.Unlock()
	if done {
		return
	}
	sweepStale(dir)
	sweepStale(filepath.Join(dir, provenance.DirName))
	if vs, err := os.ReadDir(dir); err == nil {
		for _, v := range vs {
			if v.IsDir() && !strings.HasPrefix(v.Name(), ".") {
				sweepStale(filepath.Join(dir, v.Name()))
			}
		}
	}
}

func sweepStale(dir string) { sweepStaleNamed(dir, ".") }

// sweepStaleNamed is sweepStale for the names that start with prefix.
func sweepStaleNamed(dir, prefix string) {
	items, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, it := range items {
		if !strings.HasPrefix(it.Name(), prefix) || !strings.HasPrefix(it.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, it.Name())
		if strings.Contains(it.Name(), newMarker) {
			// Left by a run killed between creating and locking a staging
			// name, which takes microseconds: stale once it is old.
			if info, err := it.Info(); err == nil && time.Since(info.ModTime()) > time.Minute {
				os.RemoveAll(p)
			}
			continue
		}
		if !strings.Contains(it.Name(), tempMarker) {
			continue
		}
		if it.IsDir() {
			// Unpacked staging directories and replaced ones: only this
			// process's own are live, and those are removed by their
			// deferred cleanup, so a directory seen here is stale when its
			// lock file is free.
			if f, err := os.Open(p); err == nil {
				if lockFile(f) == nil {
					os.RemoveAll(p)
				}
				f.Close()
			}
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if lockFile(f) == nil {
			os.Remove(p)
		}
		f.Close()
	}
}

type staged struct {
	m      *Mirror
	pkg    backends.Package
	f      *os.File
	path   string // the staging file (f.Name() is its creation name)
	target string
	done   bool
	// unnamed: f has no name until the commit links it into place
	// (createUnnamed); path then names it through /proc.
	unnamed bool
	// written counts the bytes written; queued, those whose writeback
	// to the disk has been started.
	written, queued int64
}

// writebackEvery is how many bytes a staging file gathers before their
// writeback is started, so the fsync before the rename overlaps the
// download instead of following it.
const writebackEvery = 4 << 20

func (s *staged) Write(p []byte) (int, error) {
	n, err := s.f.Write(p)
	s.written += int64(n)
	if s.written-s.queued >= writebackEvery {
		startWriteback(s.f, s.queued, s.written-s.queued)
		s.queued = s.written
	}
	return n, err
}
func (s *staged) Path() string { return s.path }

func (s *staged) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	s.f.Close()
	if s.unnamed {
		return nil // a file without a name is gone once closed
	}
	return os.Remove(s.path)
}

func (s *staged) Commit(ctx context.Context, sums hashing.Sums, force bool) (err error) {
	defer func() {
		if err != nil {
			s.Abort()
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	g := s.m.syncGroup(filepath.Dir(s.target), s.written)
	if g != nil {
		backends.Waiting(ctx) // a group sync: let another archive stage meanwhile
	}
	if err := g.sync(s.f); err != nil {
		return s.fail(err)
	}
	if !s.unnamed { // an unnamed one was made 0644 (createUnnamed)
		if err := s.f.Chmod(0o644); err != nil {
			return s.fail(err)
		}
	}
	if closeBeforeRename && !s.unnamed {
		if err := s.f.Close(); err != nil {
			return s.fail(err)
		}
	}
	// A named staging file stays open, so locked, until it is in place: a
	// sweeper in another process takes an unlocked one for a dead run's.
	unlock, err := s.m.lockProvider(ctx, s.pkg.Provider)
	if err != nil {
		return s.fail(err)
	}
	defer unlock()
	if s.m.opts.Unpacked {
		return s.commitUnpacked(sums, force)
	}
	// A listing that outlived its archive (deleted by hand) must not
	// describe the one landing now: index rebuilds trust listings.
	if err := s.m.unlistGone(s.pkg, s.target); err != nil {
		return s.fail(err)
	}
	// Putting it in place cannot replace: of two writers landing the same
	// name at once, exactly one lands and the other finds its archive.
	err = s.place()
	if err == nil {
		return s.landed(sums)
	}
	if !errors.Is(err, iofs.ErrExist) {
		return s.fail(err)
	}
	existing, err := hashing.ZipZH(s.target)
	switch {
	case err == nil && existing == sums.ZH:
		s.m.landed.Record(s.target, sums)
		return s.Abort() // identical archive already there
	case err != nil && !force:
		return s.conflict(fmt.Sprintf("it holds %s, which cannot be read (%v)", filepath.Base(s.target), err))
	case !force:
		return s.conflict(fmt.Sprintf("has %s, incoming %s", existing, sums.ZH))
	}
	// Drop the old archive's hashes from the index before its bytes change,
	// so no instant shows the new file under the old hashes.
	if err := s.m.unlist(s.pkg); err != nil {
		return s.fail(err)
	}
	if s.unnamed {
		err = replaceUnnamed(s.f, s.target)
	} else {
		err = os.Rename(s.path, s.target)
	}
	if err != nil {
		return s.fail(err)
	}
	return s.landed(sums)
}

// place gives the staged archive its name unless the name is taken: an
// error for a taken one matches os.ErrExist.
func (s *staged) place() error {
	if s.unnamed {
		return linkUnnamed(s.f, s.target)
	}
	return renameNoReplace(s.path, s.target)
}

// placeUnnamed gives f, from createUnnamed, the name path, replacing the
// file there if there is one.
func placeUnnamed(f *os.File, path string) error {
	err := linkUnnamed(f, path)
	if !errors.Is(err, iofs.ErrExist) {
		return err
	}
	return replaceUnnamed(f, path)
}

// replaceUnnamed puts f, from createUnnamed, in place of the file at path
// in one step: a link (a link cannot replace) under a staging name beside
// it, locked as createLocked's are, renamed over it.
func replaceUnnamed(f *os.File, path string) error {
	lockFile(f)
	dir, base := filepath.Split(path)
	tmp, err := freshName(dir, "."+base+tempMarker, func(name string) error { return linkUnnamed(f, name) })
	if err != nil {
		return err
	}
	if err := rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// landed finishes a commit whose archive was put in place.
func (s *staged) landed(sums hashing.Sums) error {
	s.done = true
	s.f.Close()
	// The bytes are durable (synced before they took the name); the directory
	// entry is made so by the next Flush, before an index lists it.
	s.m.markUnsynced(filepath.Dir(s.target))
	s.m.landed.Record(s.target, sums)
	return nil
}

func (s *staged) fail(err error) error {
	return fmt.Errorf("mirror %s: %s: %w", s.m.name, s.pkg, err)
}

// conflict is the error of a commit that found a different archive in
// place; detail says what is there.
func (s *staged) conflict(detail string) error {
	return fmt.Errorf("mirror %s: %s: %w (%s)", s.m.name, s.pkg, backends.ErrConflict, detail)
}

// providerLockName is the lock file in each provider directory that every
// tfmirror writer holds (flock) while it lands an archive or rewrites the
// index documents, so no writer's rebuild misses what another landed. It
// is left in place: the lock dies with its holder, the file is harmless.
const providerLockName = ".tfmirror-lock"

// lockProvider waits for p's lock, or for ctx. The returned function
// releases it. p's directory must exist. This process's writers of p take
// turns on a channel first, so the flock is contended only by other
// processes: a blocked flock holds an OS thread, and eight workers
// landing one provider's archives at once used to hold eight. While
// writers of this process wait for the turn, the flock passes from one to
// the next, held: opening the lock file, locking it and closing it again
// for each of 10,000 tiny archives cost 8 % of the CPU of landing them.
func (m *Mirror) lockProvider(ctx context.Context, p backends.Provider) (func(), error) {
	pl := m.providerLock(p)
	pl.waiting.Add(1)
	select {
	case pl.turn <- struct{}{}:
		pl.waiting.Add(-1)
	case <-ctx.Done():
		pl.waiting.Add(-1)
		// The last holder may have kept the flock for this writer: take
		// the turn when it comes, and release it.
		go func() {
			pl.turn <- struct{}{}
			pl.release()
		}()
		return nil, ctx.Err()
	}
	if pl.held != nil {
		return pl.release, nil
	}
	lock := filepath.Join(m.providerDir(p), providerLockName)
	var f *os.File
	err := m.inDir(m.providerDir(p), func() error {
		if err := m.noLink(lock); err != nil {
			return err
		}
		var err error
		f, err = openFile(lock, os.O_RDWR|os.O_CREATE, 0o644)
		return err
	})
	if err != nil {
		<-pl.turn
		return nil, err
	}
	if lockFile(f) == nil {
		pl.held = f
		return pl.release, nil
	}
	got := make(chan error, 1)
	go func() { got <- waitLock(f) }()
	locked := func(err error) error {
		if err != nil {
			f.Close()
			<-pl.turn
			return fmt.Errorf("lock %s: %w", m.rel(f.Name()), err)
		}
		pl.held = f
		return nil
	}
	select {
	case err := <-got:
		if err := locked(err); err != nil {
			return nil, err
		}
		return pl.release, nil
	case <-ctx.Done():
		go func() {
			if locked(<-got) == nil {
				pl.release()
			}
		}()
		return nil, ctx.Err()
	}
}

// providerLock is this process's side of a provider's lock.
type providerLock struct {
	turn    chan struct{} // held by the writer whose turn it is
	waiting atomic.Int32  // writers waiting for the turn
	held    *os.File      // the flocked lock file; only the turn's holder uses it
}

// release ends a writer's turn. The flock is kept for the next writer of
// this process if one waits; otherwise it is released.
func (pl *providerLock) release() {
	if pl.waiting.Load() == 0 && pl.held != nil {
		pl.held.Close()
		pl.held = nil
	}
	<-pl.turn
}

// providerLock is this process's side of p's lock.
func (m *Mirror) providerLock(p backends.Provider) *providerLock {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = map[backends.Provider]*providerLock{}
	}
	pl, ok := m.locks[p]
	if !ok {
		pl = &providerLock{turn: make(chan struct{}, 1)}
		m.locks[p] = pl
	}
	return pl
}

// commitUnpacked extracts the staged zip into a hidden directory beside the
// target and renames it into place. The caller holds the provider lock.
func (s *staged) commitUnpacked(sums hashing.Sums, force bool) error {
	verDir := filepath.Join(filepath.Dir(s.target), s.pkg.Version.String())
	target := filepath.Join(verDir, s.pkg.Platform.String())
	if err := s.m.mkdirInside(verDir); err != nil {
		return s.fail(err)
	}
	d, tmp, err := mkdirLocked(verDir, "."+s.pkg.Platform.String())
	if err != nil {
		return s.fail(err)
	}
	defer os.RemoveAll(tmp)
	defer d.Close() // the lock is held until the directory is in place
	if err := hashing.Extract(s.path, tmp, s.m.opts.Hashing); err != nil {
		return s.fail(err)
	}
	err = renameNoReplace(tmp, target)
	if err == nil {
		syncDir(verDir)
		return s.Abort()
	}
	if !errors.Is(err, iofs.ErrExist) {
		return s.fail(err)
	}
	if sums.H1 == "" {
		// The transfer needed no h1:; comparing with a directory does.
		h1, err := hashing.ZipH1(s.path, s.m.opts.Hashing)
		if err != nil {
			return s.fail(err)
		}
		sums.H1 = h1
	}
	if h1, err := hashing.DirH1(target); err == nil && h1 == sums.H1 {
		return s.Abort()
	}
	if !force {
		return s.conflict("the unpacked directory differs")
	}
	old := target + tempMarker + "old"
	if err := os.Rename(target, old); err != nil {
		return s.fail(err)
	}
	defer os.RemoveAll(old)
	if err := os.Rename(tmp, target); err != nil {
		return s.fail(err)
	}
	syncDir(verDir)
	return s.Abort()
}

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
		syncDir(dir)
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
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
	if err := docs.add(mirrordoc.IndexName, index); err == nil {
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

// writeJSON writes v as `providers mirror` does (json.MarshalIndent with two
// spaces, sorted keys, no trailing newline, mode 0644), atomically, and only
// when the content changes.
func writeJSON(path string, v any) error {
	was, readErr := regular.ReadFile(path, 0) // a pipe there is replaced, not waited on
	b, changed, err := encodeOver(v, was, readErr)
	if err != nil || !changed {
		return err
	}
	return WriteFileAtomic(path, b, 0o644)
}

// encodeOver encodes v as writeJSON writes it, and reports whether that
// differs from what a document holds: was, unless reading it failed with
// readErr (then the document is to be written).
func encodeOver(v any, was []byte, readErr error) ([]byte, bool, error) {
	b, err := mirrordoc.Encode(v)
	if err != nil {
		return nil, false, err
	}
	return b, readErr != nil || !bytes.Equal(was, b), nil
}

// WriteFileAtomic writes data to a hidden temp file beside path and renames
// it into place, so readers see the old content or the new, never a part.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, tmp, err := createLocked(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = placeLocked(f, tmp, path)
	}
	f.Close()
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// placeLocked renames the staging file tmp, open as f (so locked against
// sweepers until it bears its final name), to path.
func placeLocked(f *os.File, tmp, path string) error {
	if closeBeforeRename {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}

// docBatch writes a provider directory's index documents as writeJSON
// does, but makes those added between two commits durable together (one
// group sync where the filesystem allows), then their directory entries.
type docBatch struct {
	m     *Mirror
	dir   string
	files []*os.File
	tmps  []string // each file's staging name; "" for an unnamed one
	paths []string
	// placed counts the files, in order, that commit put in place.
	placed int
}

func newDocBatch(m *Mirror, dir string) *docBatch { return &docBatch{m: m, dir: dir} }

// add stages document name of the directory with v's encoding, unless the
// document already holds it.
func (b *docBatch) add(name string, v any) error {
	was, err := regular.ReadFile(filepath.Join(b.dir, name), 0)
	return b.addOver(name, v, was, err)
}

// addOver is add where the caller has read the document: it holds was,
// unless reading it failed with readErr.
func (b *docBatch) addOver(name string, v any, was []byte, readErr error) error {
	path := filepath.Join(b.dir, name)
	data, changed, err := encodeOver(v, was, readErr)
	if err != nil || !changed {
		return err
	}
	f, tmp, err := b.m.createStaging(b.dir, name)
	if err != nil {
		return err
	}
	b.files, b.tmps, b.paths = append(b.files, f), append(b.tmps, tmp), append(b.paths, path)
	if _, err := f.Write(data); err != nil {
		return err
	}
	if tmp != "" { // an unnamed one was made 0644 (createUnnamed)
		if err := f.Chmod(0o644); err != nil {
			return err
		}
	}
	if len(b.files) >= docBatchMax {
		return b.commit()
	}
	return nil
}

// docBatchMax bounds the staging files a batch holds open.
const docBatchMax = 256

// commit makes the staged documents durable and renames them into place.
func (b *docBatch) commit() error {
	if len(b.files) == 0 {
		return nil
	}
	defer b.abort()
	if err := b.m.syncFiles(b.dir, b.files); err != nil {
		return err
	}
	for i, f := range b.files {
		var err error
		if b.tmps[i] == "" {
			err = placeUnnamed(f, b.paths[i])
		} else {
			err = placeLocked(f, b.tmps[i], b.paths[i])
		}
		if err != nil {
			return err
		}
		b.placed++
	}
	syncDir(b.dir)
	return nil
}

// abort closes the staged files and removes those not in place.
func (b *docBatch) abort() {
	for i, f := range b.files {
		f.Close()
		if i >= b.placed && b.tmps[i] != "" {
			os.Remove(b.tmps[i])
		}
	}
	b.files, b.tmps, b.paths, b.placed = nil, nil, nil, 0
}

// ReplaceFile writes data to path atomically, as WriteFileAtomic does, for a
// file a user keeps: through a symbolic link to the file it names (written
// in that file's directory, so the link stays a link), keeping the mode of
// the file it replaces; mode is for a new file.
func ReplaceFile(path string, data []byte, mode os.FileMode) error {
	target, err := linkTarget(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", target)
		}
		mode = fi.Mode().Perm()
	}
	return WriteFileAtomic(target, data, mode)
}

// linkTarget returns the file path names after following symbolic links,
// also when the last link dangles (the file it names is then created).
func linkTarget(path string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return real, nil
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil // a new file; a missing directory fails later
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", err
			}
			dest = filepath.Join(dir, dest)
		}
		path = dest
	}
	return "", &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}
