package modfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/atomicfile"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/readers"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Record is the VERSION.json beside each zip.
type Record = modules.Record

// Store is a directory of module packages.
type Store struct {
	name string
	root string
	opts hashing.Options
}

var _ modules.Writer = (*Store)(nil)

// Open returns the store at dir (created by the first Put); name is the
// place as the user wrote it.
func Open(name, dir string, o hashing.Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("place %s: %w", name, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("place %s: not a directory", name)
	}
	return &Store{name: name, root: abs, opts: o}, nil
}

// String names the place as the user wrote it.
func (s *Store) String() string { return s.name }

// Dir is the directory of m's packages.
func (s *Store) Dir(m modules.Module) string {
	return filepath.Join(s.root, m.Host, m.Namespace, m.Name, m.System)
}

// Path is where the zip of m at v lives.
func (s *Store) Path(m modules.Module, v modules.Version) string {
	return filepath.Join(s.Dir(m), v.String()+".zip")
}

func (s *Store) fail(what, op string, err error) error {
	return fmt.Errorf("module mirror %s: %s: %s: %w", s.name, what, op, err)
}

// Put writes pkg's zip unless the same contents are there already; other
// contents are a conflict unless force.
func (s *Store) Put(ctx context.Context, pkg *modules.Package, force bool, progress func(int64)) (modules.Stored, error) {
	label := pkg.Label()
	dst := s.Path(pkg.Module, pkg.Version)
	st := modules.Stored{Address: modules.JoinSubdir(dst, pkg.Subdir)}
	if _, err := os.Stat(dst); err == nil {
		have, err := hashing.HashPath(dst, s.opts)
		if err != nil && have.ZH == "" {
			return modules.Stored{}, s.fail(label, "read "+dst, err)
		}
		src := hashing.Source{Kind: hashing.SourceArchive, Detail: dst}
		switch {
		case have.ZH == pkg.Sums.ZH:
			st.Present = true
			st.Checks = []hashing.Check{{Source: src, Scheme: hashing.SchemeZip, Status: hashing.Match, Want: []hashing.Hash{pkg.Sums.ZH}, Got: have.ZH}}
		case err == nil && have.H1 == pkg.Sums.H1:
			st.Present = true
			st.Checks = []hashing.Check{{Source: src, Scheme: hashing.SchemeH1, Status: hashing.Match, Want: []hashing.Hash{pkg.Sums.H1}, Got: have.H1}}
		case !force:
			return modules.Stored{}, s.fail(label, dst, fmt.Errorf("%w: it holds %s (%s), this build is %s (%s)", backends.ErrConflict, have.ZH, orNone(have.H1), pkg.Sums.ZH, pkg.Sums.H1))
		}
		if st.Present {
			if rec, err := s.record(pkg.Module, pkg.Version); err == nil {
				st.Address = modules.JoinSubdir(dst, rec.Subdir)
			}
			return st, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return modules.Stored{}, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return modules.Stored{}, s.fail(label, "create directory", err)
	}
	n, zh, err := s.writeZip(ctx, pkg, dst, progress)
	if err != nil {
		return modules.Stored{}, s.fail(label, "write "+dst, err)
	}
	if err := writeAtomic(filepath.Join(filepath.Dir(dst), pkg.Version.String()+".json"), pkg.Record().Marshal()); err != nil {
		return modules.Stored{}, s.fail(label, "write record", err)
	}
	st.Bytes = n
	st.Checks = []hashing.Check{{Source: hashing.Source{Kind: hashing.SourceArchive, Detail: "written " + dst}, Scheme: hashing.SchemeZip, Status: hashing.Match, Want: []hashing.Hash{pkg.Sums.ZH}, Got: zh}}
	return st, nil
}

func orNone(h hashing.Hash) string {
	if h == "" {
		return "not a readable zip"
	}
	return string(h)
}

// writeZip copies the package into a temp file beside dst, checks the
// copy's SHA-256 against the package's, and renames it into place.
func (s *Store) writeZip(ctx context.Context, pkg *modules.Package, dst string, progress func(int64)) (int64, hashing.Hash, error) {
	in, err := regular.Open(pkg.Path)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = in.Close() }() // read only
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, "", err
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close() // discarded: removed below
			os.Remove(tmp.Name())
		}
	}()
	zh := hashing.NewZipHasher()
	var r io.Reader = in
	if progress != nil {
		r = readers.OnRead(in, progress)
	}
	n, err := io.Copy(io.MultiWriter(tmp, zh), readers.WithContext(ctx, r))
	if err != nil {
		return 0, "", err
	}
	if err := tmp.Sync(); err != nil {
		return 0, "", err
	}
	if err := tmp.Close(); err != nil {
		return 0, "", err
	}
	if zh.Sum() != pkg.Sums.ZH {
		return 0, "", fmt.Errorf("the copy hashes to %s, the package to %s", zh.Sum(), pkg.Sums.ZH)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, "", err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return 0, "", err
	}
	ok = true
	return n, zh.Sum(), nil
}

// writeAtomic replaces dst with b, synced before it takes the name.
func writeAtomic(dst string, b []byte) error { return atomicfile.Write(dst, b, 0o644) }

func (s *Store) record(m modules.Module, v modules.Version) (Record, error) {
	var rec Record
	b, err := regular.ReadFile(filepath.Join(s.Dir(m), v.String()+".json"), 0)
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(b, &rec)
}

// ListModule lists the zips of m (those c selects, newest first).
func (s *Store) ListModule(ctx context.Context, m modules.Module, c backends.VersionConstraint) (modules.Listings, error) {
	dir := s.Dir(m)
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return modules.Listings{}, fmt.Errorf("module mirror %s: %s: %w (no directory %s)", s.name, m, backends.ErrNotFound, dir)
	}
	if err != nil {
		return modules.Listings{}, fmt.Errorf("module mirror %s: %s: %w", s.name, m, err)
	}
	var out modules.Listings
	byVersion := map[string]string{}
	var all []modules.Version
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".json") {
			continue
		}
		base, isZip := strings.CutSuffix(name, ".zip")
		v, err := modules.ParseVersion(base)
		if !isZip || !de.Type().IsRegular() || err != nil || v.String() != base {
			out.Warnings = append(out.Warnings, fmt.Sprintf("module mirror %s: %s: %s is not VERSION.zip; skipped", s.name, m, filepath.Join(dir, name)))
			continue
		}
		byVersion[v.String()] = name
		all = append(all, v)
	}
	for _, v := range c.Filter(all) {
		it := modules.Listing{Module: m, Version: v, Listed: byVersion[v.String()]}
		sub := ""
		if rec, err := s.record(m, v); err == nil {
			sub = rec.Subdir
			it.SHA256, it.Revision = strings.TrimPrefix(rec.ZH, "zh:"), rec.Revision
		}
		it.Location = modules.JoinSubdir(filepath.Join(dir, byVersion[v.String()]), sub)
		out.Items = append(out.Items, it)
	}
	sort.Strings(out.Warnings)
	return out, nil
}
