package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/lockedtemp"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// entryTime is every entry's modification time, so that the same files
// make the same bytes whenever they are packed.
var entryTime = time.Unix(0, 0).UTC()

// Mirror is what Write packs: a filesystem mirror in the packed layout
// (archives, index documents listing their h1: and zh:, provenance
// sidecars) under Dir. The caller opens it (NewStaging's open), so that
// bundle leans on no other kind of place.
type Mirror interface {
	backends.Writer
	backends.Lister
	Dir() string
}

// Staging is where an export gathers what a bundle will hold: a filesystem
// mirror (packed layout) in a hidden directory beside the bundle file,
// which a sync fills, verifying every archive as it lands; Pack then turns
// it into the bundle.
type Staging struct {
	// Mirror is the staging mirror, the sync's destination.
	Mirror   Mirror
	dir, out string
	lock     *os.File
	hashing  hashing.Options
}

// stagingPrefix starts the names of what writing the bundle at out puts
// beside it: the staging mirror and the .tar being written.
func stagingPrefix(out string) string { return "." + filepath.Base(out) + ".staging" }

// SweepStaging removes what killed exports of a bundle at out left beside
// it (the staging mirror, a part-written .tar): those no live process
// holds. NewStaging sweeps first; import of out does too.
func SweepStaging(out string) { lockedtemp.Sweep(filepath.Dir(out), stagingPrefix(out)) }

// NewStaging makes the staging mirror of a bundle to be written at out,
// beside it, under a name locked for as long as this process lives (a kill
// leaves it for the next SweepStaging), opened as a filesystem mirror by
// open. Remove deletes it.
func NewStaging(out string, h hashing.Options, open func(dir string) (Mirror, error)) (*Staging, error) {
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return nil, backends.Usagef("bundle %s: is a directory: name the .tar file to write", out)
	}
	SweepStaging(out)
	lock, dir, err := lockedtemp.Mkdir(filepath.Dir(out), stagingPrefix(out))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", out, err)
	}
	m, err := open(dir)
	if err != nil {
		os.RemoveAll(dir)
		_ = lock.Close() // releases the lock; the directory is gone
		return nil, err
	}
	return &Staging{Mirror: m, dir: dir, out: out, lock: lock, hashing: h}, nil
}

// Pack writes the bundle of what the staging mirror holds (Write).
func (s *Staging) Pack(ctx context.Context) (*Manifest, error) {
	return Write(ctx, s.Mirror, s.out, s.hashing)
}

// Remove deletes the staging mirror.
func (s *Staging) Remove() error {
	err := os.RemoveAll(s.dir)
	_ = s.lock.Close() // releases the lock; nothing was written to it
	return err
}

// Write packs the filesystem mirror m, as a sync wrote it (packed zips,
// index documents listing their h1: and zh:, provenance sidecars), into a
// bundle at out, replacing any file there atomically. A provenance sidecar
// must check and vouch for every archive of its version. The files are
// hashed once for the manifest and again as they are copied into the tar:
// a file that changes in between fails the write. h bounds the hashing of
// an archive whose h1: the index does not state.
func Write(ctx context.Context, m Mirror, out string, h hashing.Options) (*Manifest, error) {
	man, err := collect(ctx, m, h)
	if err != nil {
		return nil, err
	}
	root := m.Dir()
	for i := range man.Files {
		f := &man.Files[i]
		if f.Size, f.SHA256, err = hashFile(filepath.Join(root, filepath.FromSlash(f.Path))); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", out, err)
		}
	}
	sums := map[string]string{}
	for _, f := range man.Files {
		sums[f.Path] = f.SHA256
	}
	for _, p := range man.Packages {
		if !hasHash(p.Hashes, "zh:"+sums[p.Path]) {
			return nil, fmt.Errorf("bundle %s: %s: its SHA-256 is %s, not the zh: the staging mirror's index states (%v)", out, p.Path, sums[p.Path], p.Hashes)
		}
	}
	raw, err := manifestBytes(man)
	if err != nil {
		return nil, err
	}
	if err := writeTar(ctx, out, root, raw, man.Files); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", out, err)
	}
	return man, nil
}

// collect lists what the bundle of m holds: each provider's archives (with
// their h1: and zh:), index documents and provenance sidecars.
func collect(ctx context.Context, m Mirror, h hashing.Options) (*Manifest, error) {
	man := &Manifest{Format: Format}
	ps, err := m.Providers(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		as, err := m.AllArchives(ctx, p)
		if err != nil {
			return nil, err
		}
		dir := ProviderDir(p)
		man.Files = append(man.Files, File{Path: dir + "/index.json"})
		seen := map[string]bool{}
		for _, a := range as {
			v := a.Version.String()
			if !seen[v] {
				seen[v] = true
				man.Files = append(man.Files, File{Path: dir + "/" + v + ".json"})
				if _, err := os.Stat(filepath.Join(m.Dir(), filepath.FromSlash(dir), provenance.DirName, provenance.FileName(v))); err == nil {
					man.Files = append(man.Files, File{Path: dir + "/" + provenance.DirName + "/" + provenance.FileName(v)})
				}
			}
			mp, err := packageOf(m, a, h)
			if err != nil {
				return nil, err
			}
			man.Packages = append(man.Packages, mp)
			man.Files = append(man.Files, File{Path: mp.Path})
		}
	}
	if err := signers(m, man); err != nil {
		return nil, err
	}
	sort.Slice(man.Files, func(i, j int) bool { return man.Files[i].Path < man.Files[j].Path })
	sort.Slice(man.Packages, func(i, j int) bool { return man.Packages[i].Path < man.Packages[j].Path })
	return man, nil
}

// packageOf describes one archive of the staging mirror.
func packageOf(m Mirror, a backends.Archive, opts hashing.Options) (Package, error) {
	rel := ArchivePath(a.Package)
	if a.Layout != backends.Packed || filepath.Clean(a.Location) != filepath.Join(m.Dir(), filepath.FromSlash(rel)) {
		return Package{}, fmt.Errorf("mirror %s: %s: not the packed zip %s", m, a.Package, rel)
	}
	var hs []string
	var h1, zh bool
	for _, h := range a.Hashes() {
		if h.Known() {
			hs = append(hs, string(h))
			h1 = h1 || h.Scheme() == hashing.SchemeH1
			zh = zh || h.Scheme() == hashing.SchemeZip
		}
	}
	if !h1 || !zh {
		sums, err := hashing.HashPath(a.Location, opts)
		if err != nil {
			return Package{}, fmt.Errorf("mirror %s: %s: %w", m, a.Package, err)
		}
		hs = nil
		for _, h := range hashing.SortUnique(append(a.Hashes(), sums.List()...)) {
			if h.Known() {
				hs = append(hs, string(h))
			}
		}
	}
	return Package{Provider: a.Provider.String(), Version: a.Version.String(), Platform: a.Platform.String(), Path: rel, Size: a.Size, Hashes: hs}, nil
}

// signers checks each provenance sidecar among the manifest's files and
// records its signer on the packages of its version, each of whose zh:
// it must vouch for.
func signers(m Mirror, man *Manifest) error {
	for _, f := range man.Files {
		k, err := classify(f.Path)
		if err != nil || k.what != kindProvenance {
			continue
		}
		raw, err := regular.ReadFile(filepath.Join(m.Dir(), filepath.FromSlash(f.Path)), 0)
		if err != nil {
			return err
		}
		prov, err := provenance.Parse(raw)
		if err != nil {
			return fmt.Errorf("mirror %s: %s: %w", m, f.Path, err)
		}
		signer, err := prov.Check(provenance.Options{})
		if err != nil {
			return fmt.Errorf("mirror %s: %s: %w", m, f.Path, err)
		}
		for i := range man.Packages {
			mp := &man.Packages[i]
			if mp.Provider != k.provider.String() || mp.Version != k.version {
				continue
			}
			if err := prov.Authenticate(mp.Platform, zipHashOf(mp.Hashes)); err != nil {
				return fmt.Errorf("mirror %s: %w", m, err)
			}
			s := signer
			mp.Signer = &s
		}
	}
	return nil
}

func zipHashOf(hs []string) hashing.Hash {
	for _, s := range hs {
		if h := hashing.Hash(s); h.Scheme() == hashing.SchemeZip {
			return h
		}
	}
	return ""
}

func hasHash(hs []string, h string) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

func hashFile(name string) (int64, string, error) {
	f, err := regular.Open(name)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// writeTar writes the bundle's tar into a hidden temp file beside out and
// renames it into place.
func writeTar(ctx context.Context, out, root string, manifest []byte, files []File) (err error) {
	// Locked until it is in place: a kill leaves it for SweepStaging.
	tmp, tmpPath, err := lockedtemp.Create(filepath.Dir(out), stagingPrefix(out))
	if err != nil {
		return err
	}
	defer func() {
		_ = tmp.Close() // synced before it was placed, or discarded
		if err != nil {
			os.Remove(tmpPath)
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	tw := tar.NewWriter(bw)
	if err := writeEntry(tw, ManifestName, int64(len(manifest)), bytes.NewReader(manifest)); err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyFile(tw, root, f); err != nil {
			return err
		}
	}
	sum := sha256.Sum256(manifest)
	trailer := []byte(fmt.Sprintf("%x  %s\n", sum, ManifestName))
	if err := writeEntry(tw, TrailerName, int64(len(trailer)), bytes.NewReader(trailer)); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := lockedtemp.Place(tmp, tmpPath, out); err != nil {
		return err
	}
	atomicfile.SyncDir(filepath.Dir(out))
	return nil
}

// copyFile copies one file into the tar, checking its bytes against the
// manifest as they go.
func copyFile(tw *tar.Writer, root string, f File) error {
	src, err := regular.Open(filepath.Join(root, filepath.FromSlash(f.Path)))
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }() // read only
	h := sha256.New()
	if err := writeEntry(tw, f.Path, f.Size, io.TeeReader(io.LimitReader(src, f.Size), h)); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("%s changed while it was packed (SHA-256 %s, then %s)", f.Path, f.SHA256, got)
	}
	return nil
}

// writeEntry writes one regular file, with fixed owner, mode and time.
func writeEntry(tw *tar.Writer, name string, size int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: entryTime}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, r)
	if err == nil && n != size {
		err = fmt.Errorf("%s: %d bytes, want %d", name, n, size)
	}
	if errors.Is(err, tar.ErrWriteTooLong) {
		err = fmt.Errorf("%s grew while it was packed", name)
	}
	return err
}
