package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

var _ backends.ProvenanceWriter = (*Mirror)(nil)

// provenancePath is where the mirror keeps p's provenance at v:
// HOST/NAMESPACE/TYPE/.tfmirror-provenance/VERSION.json. Terraform's and
// OpenTofu's scanners walk into the dot-directory but take a directory at
// the archive level, and a file at the unpacked platform level, for
// nothing, without a word (getproviders.SearchLocalDirectory); tfmirror's
// scanner skips dot-names. A network mirror served from the directory
// (serve) answers only HOST/NAMESPACE/TYPE/FILE.
func (m *Mirror) provenancePath(p backends.Provider, v backends.Version) string {
	return filepath.Join(m.providerDir(p), provenance.DirName, provenance.FileName(v.String()))
}

// Provenance reads p's provenance at v from its sidecar file, checking
// that it is about p at v (not its signature: the caller does that).
// A version without one is backends.ErrNotFound.
func (m *Mirror) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	path := m.provenancePath(p, v)
	b, err := readBounded(path, provenance.MaxSize)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("mirror %s: %s %s: no provenance (%s): %w", m.name, p, v, m.rel(path), backends.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s %s: %w", m.name, p, v, err)
	}
	pr, err := provenance.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, m.rel(path), err)
	}
	if pr.Provider != p.String() || pr.Version != v.String() {
		return nil, fmt.Errorf("mirror %s: %s: %w: it is about %s %s, not %s %s", m.name, m.rel(path), provenance.ErrFormat, pr.Provider, pr.Version, p, v)
	}
	return pr, nil
}

var _ backends.ProvenanceLister = (*Mirror)(nil)

// ProvenanceVersions lists the versions of p whose sidecar files are in
// its provenance directory.
func (m *Mirror) ProvenanceVersions(ctx context.Context, p backends.Provider) (map[string]bool, error) {
	dir := filepath.Join(m.providerDir(p), provenance.DirName)
	items, err := os.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, m.rel(dir), err)
	}
	out := make(map[string]bool, len(items))
	for _, it := range items {
		if v, ok := strings.CutSuffix(it.Name(), provenance.FileName("")); ok {
			out[v] = true
		}
	}
	return out, nil
}

// WriteProvenance writes pr as p's provenance at v, atomically, under the
// provider lock (as commits and flushes write), and only when it changes.
func (m *Mirror) WriteProvenance(ctx context.Context, p backends.Provider, v backends.Version, pr *provenance.Provenance) error {
	b, err := provenance.Marshal(pr)
	if err != nil {
		return fmt.Errorf("mirror %s: %s %s: provenance: %w", m.name, p, v, err)
	}
	path := m.provenancePath(p, v)
	if err := m.mkdirInside(filepath.Dir(path)); err != nil {
		return fmt.Errorf("mirror %s: %s %s: provenance: %w", m.name, p, v, err)
	}
	unlock, err := m.lockProvider(ctx, p)
	if err != nil {
		return fmt.Errorf("mirror %s: %s %s: provenance: %w", m.name, p, v, err)
	}
	defer unlock()
	if old, err := regular.ReadFile(path, 0); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := writeFileAtomic(path, b, 0o644); err != nil {
		return fmt.Errorf("mirror %s: %s: %w", m.name, m.rel(path), err)
	}
	return nil
}

// removeProvenance deletes the sidecars of p's versions in gone, which
// hold no archive any more. The caller holds the provider lock.
func (m *Mirror) removeProvenance(p backends.Provider, gone []backends.Version) error {
	for _, v := range gone {
		path := m.provenancePath(p, v)
		if err := os.Remove(path); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("mirror %s: %s: %w", m.name, m.rel(path), err)
		}
	}
	os.Remove(filepath.Join(m.providerDir(p), provenance.DirName)) // only when empty
	return nil
}

// readBounded reads a file, or its first limit+1 bytes: enough for the
// parser to refuse one that is too large.
func readBounded(path string, limit int64) ([]byte, error) {
	return regular.ReadFile(path, limit)
}
