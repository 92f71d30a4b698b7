package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Options configure a Mirror.
type Options struct {
	// Unpacked makes the mirror write packages as unpacked directories
	// (VERSION/OS_ARCH/) instead of packed zips.
	Unpacked bool
	// Create makes Open create the directory if it does not exist.
	Create bool
	// Hashing caps the work hashing an untrusted zip may do.
	Hashing hashing.Options
}

// Mirror is a filesystem mirror directory.
type Mirror struct {
	backends.WarningLog

	name string // as the user wrote it
	dir  string
	opts Options

	landed mirrordoc.Landed // by archive path, this process's commits

	mu    sync.Mutex
	swept map[string]bool // directories cleared of stale staging files
	// checkedDirs are the directories mkdirInside made or found (inDir).
	checkedDirs map[string]bool
	// unsynced are the directories archives were put in since their
	// last fsync: Flush makes their entries durable once, before index
	// documents list them, instead of once per archive.
	unsynced map[string]bool
	// locks are this process's side of each provider's lock (lockProvider).
	locks map[backends.Provider]*providerLock
	// groups are the group syncs by filesystem, and dirFS the filesystem
	// of each directory staging files were synced in (syncGroup).
	groups map[uint64]*groupSync
	dirFS  map[string]dirFS
	// named: this system cannot stage unnamed files (createUnnamed), so
	// Stage names each.
	named atomic.Bool
	// absentDocs are the version documents, by provider directory and
	// version, that a commit found missing (unlistGone) since the
	// directory's last Flush.
	absentDocs map[string]map[string]bool

	// afterStep, set by tests, is called after each write of a Remove.
	afterStep func(what string)
}

var (
	_ backends.Writer        = (*Mirror)(nil)
	_ backends.Warner        = (*Mirror)(nil)
	_ backends.Lister        = (*Mirror)(nil)
	_ backends.UnsizedLister = (*Mirror)(nil)
	_ backends.LocalPather   = (*Mirror)(nil)
	_ backends.Auditor       = (*Mirror)(nil)
)

// Open opens the mirror at dir. name is how the user wrote the place.
func Open(name, dir string, opts Options) (*Mirror, error) {
	info, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err) && opts.Create:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("mirror %s: %w", name, err)
		}
	case os.IsNotExist(err):
		return nil, fmt.Errorf("mirror %s: no such directory", name)
	case err != nil:
		return nil, fmt.Errorf("mirror %s: %w", name, err)
	case !info.IsDir():
		return nil, fmt.Errorf("mirror %s: not a directory (a filesystem mirror is a directory of HOST/NAMESPACE/TYPE/...)", name)
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	return &Mirror{name: name, dir: dir, opts: opts, unsynced: map[string]bool{}}, nil
}

func (m *Mirror) String() string { return m.name }

// Dir is the mirror's resolved directory.
func (m *Mirror) Dir() string { return m.dir }

func (m *Mirror) warnf(format string, args ...any) {
	m.Warn(fmt.Sprintf("mirror %s: ", m.name) + fmt.Sprintf(format, args...))
}

func (m *Mirror) rel(p string) string {
	if r, err := filepath.Rel(m.dir, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// Providers lists the providers in the mirror.
func (m *Mirror) Providers(ctx context.Context) ([]backends.Provider, error) {
	dirs, err := m.providerDirs(ctx)
	if err != nil {
		return nil, err
	}
	ps := make([]backends.Provider, 0, len(dirs))
	for p := range dirs {
		ps = append(ps, p)
	}
	backends.SortProviders(ps)
	return ps, nil
}

func (m *Mirror) scan(ctx context.Context, p backends.Provider) (*providerScan, error) {
	return m.scanSized(ctx, p, true)
}

// scanSized is scan; without sized, the zips' sizes are not read (-1).
func (m *Mirror) scanSized(ctx context.Context, p backends.Provider, sized bool) (*providerScan, error) {
	dirs, err := m.providerDirs(ctx)
	if err != nil {
		return nil, err
	}
	if len(dirs[p]) == 0 {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, p, backends.ErrNotFound)
	}
	return m.scanProvider(p, dirs[p], sized), nil
}

// Versions lists p's versions, newest first. It reads no archive's size:
// the names say the versions (the TUI lists every provider's newest version
// as it starts, 100,000 lstat calls over a mirror of 100,000 archives).
func (m *Mirror) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	s, err := m.scanSized(ctx, p, false)
	if err != nil {
		return nil, err
	}
	vs := make([]backends.Version, 0, len(s.versions))
	for _, v := range s.versions {
		vs = append(vs, v)
	}
	backends.SortVersionsNewestFirst(vs)
	return vs, nil
}

// Archives lists p's packages at v with the hashes the mirror's
// <version>.json states for them.
func (m *Mirror) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	s, err := m.scan(ctx, p)
	if err != nil {
		return nil, err
	}
	return m.appendArchives(nil, s, v.String()), nil
}

// AllArchives lists every package of p in one pass over its directories,
// newest version first; listing a provider with many versions through
// Archives would read the directory once per version.
func (m *Mirror) AllArchives(ctx context.Context, p backends.Provider) ([]backends.Archive, error) {
	return m.allArchives(ctx, p, true)
}

// AllArchivesUnsized is AllArchives without the zips' sizes (-1): what a
// plan lists of its destination, sparing a stat of each zip.
func (m *Mirror) AllArchivesUnsized(ctx context.Context, p backends.Provider) ([]backends.Archive, error) {
	return m.allArchives(ctx, p, false)
}

func (m *Mirror) allArchives(ctx context.Context, p backends.Provider, sized bool) ([]backends.Archive, error) {
	s, err := m.scanSized(ctx, p, sized)
	if err != nil {
		return nil, err
	}
	vs := make([]backends.Version, 0, len(s.versions))
	n := 0
	for key, v := range s.versions {
		vs = append(vs, v)
		n += len(s.entries[key])
	}
	backends.SortVersionsNewestFirst(vs)
	out := make([]backends.Archive, 0, n)
	for _, v := range vs {
		out = m.appendArchives(out, s, v.String())
	}
	return out, nil
}

// appendArchives appends the packages of the version whose canonical form
// is v to out.
func (m *Mirror) appendArchives(out []backends.Archive, s *providerScan, v string) []backends.Archive {
	plats := s.entries[v]
	var docs []*versionDoc
	for _, dir := range s.dirs {
		// A version document counts only when index.json lists its version:
		// a network mirror serving the directory offers nothing else, and a
		// sync interrupted between the two writes leaves exactly that.
		if !s.indexed[dir][v] {
			continue
		}
		if doc, _ := m.readVersionDocAt(dir, v, &s.buf); doc != nil {
			docs = append(docs, doc)
		}
	}
	keys := make([]string, 0, len(plats)) // each platform's String()
	for plat := range plats {
		keys = append(keys, plat)
	}
	sort.Strings(keys)
	out = slices.Grow(out, len(plats))
	// The version's archives share one array of evidence, each its own
	// part of it (capped: an append copies).
	evs := make([]hashing.Evidence, 0, len(plats)*len(docs))
	for _, plat := range keys {
		e := plats[plat]
		a := backends.Archive{Package: e.pkg, Layout: e.layout, Size: e.size, Location: e.path}
		if e.layout == backends.Packed {
			first := len(evs)
			for _, doc := range docs {
				if ev, ok := doc.evidence(plat, e, m); ok {
					evs = append(evs, ev)
				}
			}
			if len(evs) > first {
				a.Evidence = evs[first:len(evs):len(evs)]
			}
		}
		out = append(out, a)
	}
	return out
}

// Open opens a packed archive. Unpacked packages have no original zip.
func (m *Mirror) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	if a.Layout == backends.Unpacked {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, a.Package, backends.ErrUnpackedOnly)
	}
	r, err := openReader(a.Location)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, a.Package, err)
	}
	return r, nil
}

// LocalPath returns the archive's zip file or unpacked directory, so it can
// be hashed in place.
func (m *Mirror) LocalPath(a backends.Archive) string { return a.Location }

// readProblem is a read's error as a message after the file's name: for
// what is not a regular file, what it is without the name again (the
// caller warns that the file is ignored).
func readProblem(err error) string {
	if re := (*regular.Error)(nil); errors.As(err, &re) {
		return re.Detail()
	}
	return err.Error()
}

// versionDoc is a <version>.json document and where it was read (rel:
// as messages and evidence name it, one string for all its archives).
type versionDoc struct {
	*mirrordoc.Version
	path, rel string
}

// readIndex returns the versions an index.json lists (canonical form).
func (m *Mirror) readIndex(path string) map[string]bool {
	b, err := regular.ReadFile(path, 0)
	if err != nil {
		m.warnf("%s: ignored: %s", m.rel(path), readProblem(err))
		return nil
	}
	out, err := mirrordoc.ParseIndex(b)
	if err != nil {
		m.warnf("%s: ignored: not a valid index document: %v", m.rel(path), err)
		return nil
	}
	return out
}

func (m *Mirror) readVersionDoc(dir string, v backends.Version) (*versionDoc, string) {
	return m.readVersionDocAt(dir, v.String(), nil)
}

// readVersionDocAt is readVersionDoc for the version whose canonical form
// is v.
func (m *Mirror) readVersionDocAt(dir, v string, buf *[]byte) (*versionDoc, string) {
	doc, p, _, _ := m.readVersionDocBytes(dir, v, buf)
	return doc, p
}

// readVersionDocBytes is readVersionDocAt that also returns the bytes read
// (in buf when given) or the error of reading them: os.ErrNotExist where
// there is no document. An unreadable or invalid one is warned of.
func (m *Mirror) readVersionDocBytes(dir, v string, buf *[]byte) (*versionDoc, string, []byte, error) {
	p := filepath.Join(dir, v+".json")
	b, err := readFileInto(p, buf)
	if err != nil {
		if !os.IsNotExist(err) {
			m.warnf("%s: ignored: %s", m.rel(p), readProblem(err))
		}
		return nil, p, nil, err
	}
	doc, err := mirrordoc.ParseVersion(b)
	if err != nil {
		m.warnf("%s: ignored: not a valid version document: %v", m.rel(p), err)
		return nil, p, b, nil
	}
	return &versionDoc{Version: doc, path: p, rel: m.rel(p)}, p, b, nil
}

// entry returns d's entry for e's platform; describes reports whether it
// names e's file. A nil d has none.
func (d *versionDoc) entry(e *entry) (ad mirrordoc.Archive, ok, describes bool) {
	if d == nil {
		return mirrordoc.Archive{}, false, false
	}
	return d.Entry(e.pkg.Platform, filepath.Base(e.path))
}

// evidence returns what doc states about e, if it describes e's file;
// plat is e's platform as the document names it.
func (d *versionDoc) evidence(plat string, e *entry, m *Mirror) (hashing.Evidence, bool) {
	ad, ok := d.Archives[plat]
	describes := ok && strings.EqualFold(path.Base(ad.URL), filepath.Base(e.path))
	if !ok {
		return hashing.Evidence{}, false
	}
	if !describes {
		m.warnf("%s: %s lists url %q, but the archive is %s", d.rel, e.pkg.Platform, ad.URL, filepath.Base(e.path))
		return hashing.Evidence{}, false
	}
	ev, bad := ad.Evidence(d.rel)
	for _, err := range bad {
		m.warnf("%s: %s: %v", d.rel, e.pkg.Platform, err)
	}
	return ev, true
}
