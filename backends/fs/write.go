package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/lockedtemp"
	"github.com/tfmirror/tfmirror/hashing"
)

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
			f, path, err = lockedtemp.Create(dir, "."+pkg.Filename())
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
// else named and locked (lockedtemp.Create).
func (m *Mirror) createStaging(dir, name string) (*os.File, string, error) {
	if !m.named.Load() {
		f, err := createUnnamed(dir)
		if f != nil || err != nil {
			return f, "", err
		}
		m.named.Store(true) // not on this system: name every one
	}
	return lockedtemp.Create(dir, "."+name)
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
	_ = s.f.Close() // discarded: nothing of it is kept
	if s.unnamed {
		return nil // a file without a name is gone once closed
	}
	return os.Remove(s.path)
}

func (s *staged) Commit(ctx context.Context, sums hashing.Sums, force bool) (err error) {
	defer func() {
		if err != nil {
			_ = s.Abort() // err, the one that matters, is returned
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
	if lockedtemp.CloseBeforeRename && !s.unnamed {
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
// it, locked as lockedtemp.Create's are, renamed over it.
func replaceUnnamed(f *os.File, path string) error {
	_ = lockedtemp.Lock(f) // where flock fails, no sweeper can lock it either
	dir, base := filepath.Split(path)
	tmp, err := lockedtemp.FreshName(dir, "."+base+lockedtemp.Marker, func(name string) error { return linkUnnamed(f, name) })
	if err != nil {
		return err
	}
	if err := lockedtemp.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// landed finishes a commit whose archive was put in place.
func (s *staged) landed(sums hashing.Sums) error {
	s.done = true
	_ = s.f.Close() // synced before it took its name
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

// commitUnpacked extracts the staged zip into a hidden directory beside the
// target and renames it into place. The caller holds the provider lock.
func (s *staged) commitUnpacked(sums hashing.Sums, force bool) error {
	verDir := filepath.Join(filepath.Dir(s.target), s.pkg.Version.String())
	target := filepath.Join(verDir, s.pkg.Platform.String())
	if err := s.m.mkdirInside(verDir); err != nil {
		return s.fail(err)
	}
	d, tmp, err := lockedtemp.Mkdir(verDir, "."+s.pkg.Platform.String())
	if err != nil {
		return s.fail(err)
	}
	defer os.RemoveAll(tmp)
	defer func() { _ = d.Close() }() // the lock, held until the directory is in place
	if err := hashing.Extract(s.path, tmp, s.m.opts.Hashing); err != nil {
		return s.fail(err)
	}
	err = renameNoReplace(tmp, target)
	if err == nil {
		atomicfile.SyncDir(verDir)
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
	old := target + lockedtemp.Marker + "old"
	if err := os.Rename(target, old); err != nil {
		return s.fail(err)
	}
	defer os.RemoveAll(old)
	if err := os.Rename(tmp, target); err != nil {
		return s.fail(err)
	}
	atomicfile.SyncDir(verDir)
	return s.Abort()
}
