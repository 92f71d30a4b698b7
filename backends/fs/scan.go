package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/zipname"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// entry is one package found on disk.
type entry struct {
	pkg    backends.Package
	layout backends.Layout
	path   string // zip file or unpacked directory
	size   int64  // zip size; -1 for directories
}

// providerScan is what one provider's directories hold.
type providerScan struct {
	dirs     []string                     // HOST/NS/TYPE directories (several when spelt differently)
	versions map[string]backends.Version  // by canonical version string
	entries  map[string]map[string]*entry // version -> platform -> entry
	// indexed holds, per directory, the versions its index.json lists.
	indexed map[string]map[string]bool
	buf     []byte // what reading its documents reuses
	// A directory lists a version's files together: its text is made once
	// (vkey), and each platform's once per scan (platKeys).
	vkey     backends.VersionKey
	platKeys map[backends.Platform]string
}

// add records e; a package present in both layouts is kept packed.
func (s *providerScan) add(e *entry) {
	v := s.vkey.Of(e.pkg.Version)
	if s.entries[v] == nil {
		s.entries[v] = map[string]*entry{}
		s.versions[v] = e.pkg.Version
	}
	plat, ok := s.platKeys[e.pkg.Platform]
	if !ok {
		plat = e.pkg.Platform.String()
		s.platKeys[e.pkg.Platform] = plat
	}
	if old := s.entries[v][plat]; old != nil && (old.layout == backends.Packed || e.layout == backends.Unpacked) {
		return
	}
	s.entries[v][plat] = e
}

// providerDirs walks the first three levels of the mirror and returns the
// provider directories it finds, reporting junk as warnings.
func (m *Mirror) providerDirs(ctx context.Context) (map[backends.Provider][]string, error) {
	out := map[backends.Provider][]string{}
	hosts, err := os.ReadDir(m.dir)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %w", m.name, err)
	}
	for _, h := range hosts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hostPath := filepath.Join(m.dir, h.Name())
		if !m.isDirAtShallowDepth(hostPath, h) {
			continue
		}
		nss, err := os.ReadDir(hostPath)
		if err != nil {
			m.warnf("%s: %v", m.rel(hostPath), err)
			continue
		}
		for _, ns := range nss {
			nsPath := filepath.Join(hostPath, ns.Name())
			if !m.isDirAtShallowDepth(nsPath, ns) {
				continue
			}
			types, err := os.ReadDir(nsPath)
			if err != nil {
				m.warnf("%s: %v", m.rel(nsPath), err)
				continue
			}
			for _, ty := range types {
				typePath := filepath.Join(nsPath, ty.Name())
				info, err := os.Stat(typePath)
				if err != nil || !info.IsDir() {
					m.warnf("%s: ignored: not a directory (a provider directory is HOST/NAMESPACE/TYPE)", m.rel(typePath))
					continue
				}
				p, err := backends.NewProvider(h.Name(), ns.Name(), ty.Name())
				if err != nil {
					m.warnf("%s: ignored: %v", m.rel(typePath), err)
					continue
				}
				out[p] = append(out[p], typePath)
			}
		}
	}
	return out, nil
}

// isDirAtShallowDepth reports whether a hostname or namespace level entry is
// a directory the clients would descend into. They do not follow symlinks
// above the provider level; neither do we, but we say so.
func (m *Mirror) isDirAtShallowDepth(path string, d os.DirEntry) bool {
	if d.Type()&os.ModeSymlink != 0 {
		m.warnf("%s: ignored symlink: only the mirror directory itself may be a symlink", m.rel(path))
		return false
	}
	if !d.IsDir() {
		switch name := strings.ToLower(d.Name()); {
		case isHidden(d.Name()):
		case strings.HasPrefix(name, "terraform-provider-") && strings.HasSuffix(name, ".zip"):
			m.warnf("%s: a release zip outside HOST/NAMESPACE/TYPE/, where a filesystem mirror keeps its archives: the clients do not see it (move it under HOST/NAMESPACE/TYPE/, or push loose zips with tfmirror push --provider HOST/NAMESPACE/TYPE)", m.rel(path))
		default:
			m.warnf("%s: ignored stray file", m.rel(path))
		}
		return false
	}
	return true
}

func isHidden(name string) bool {
	return strings.HasPrefix(name, ".") // staging files, editor and OS litter
}

// scanProvider reads a provider's directories: packed zips at depth 4 and
// unpacked directories at depth 5. A package present in both layouts is
// reported packed.
func (m *Mirror) scanProvider(p backends.Provider, dirs []string, sized bool) *providerScan {
	s := &providerScan{dirs: dirs, versions: map[string]backends.Version{}, entries: map[string]map[string]*entry{}, indexed: map[string]map[string]bool{}, platKeys: map[backends.Platform]string{}}
	add := s.add
	prefix := zipname.Prefix(p)
	parsed := zipname.NewParser()
	for _, dir := range dirs {
		items, sizeOf, done, err := listDir(dir)
		if err != nil {
			m.warnf("%s: %v", m.rel(dir), err)
			continue
		}
		for _, it := range items {
			name := it.Name()
			if strings.HasPrefix(name, ".") {
				continue // staging files (ours and the clients'), hidden litter
			}
			full := dir + string(filepath.Separator) + name
			// Depth 4 and 5 may be symlinks: those are followed. A file the
			// directory entry says is regular is stat'ed only for its size,
			// where it is an archive.
			var info os.FileInfo
			isDir := it.IsDir()
			if !it.Type().IsRegular() && !isDir {
				if info, err = os.Stat(full); err != nil {
					m.warnf("%s: ignored: %v", m.rel(full), err)
					continue
				}
				isDir = info.IsDir()
				if !isDir && !info.Mode().IsRegular() {
					// A named pipe would hang whatever reads it (verify,
					// a sync from here), a device feed it without end.
					m.warnf("%s: ignored: %s", m.rel(full), (&regular.Error{Mode: info.Mode().Type()}).Detail())
					continue
				}
			}
			if isDir {
				m.scanVersionDir(p, full, name, add)
				continue
			}
			lower := strings.ToLower(name)
			if lower == "index.json" {
				s.indexed[dir] = m.readIndex(full)
				continue
			}
			if strings.HasSuffix(lower, ".json") {
				continue // version documents are read when listed
			}
			pkg, err := parsed.Parse(p, name)
			if err != nil {
				if strings.HasPrefix(lower, prefix) || strings.HasSuffix(lower, ".zip") {
					m.warnf("%s: ignored: %v", m.rel(full), err)
				} else {
					m.warnf("%s: ignored stray file (packed archives are named %sVERSION_OS_ARCH.zip)", m.rel(full), prefix)
				}
				continue
			}
			size := int64(-1)
			if info != nil {
				size = info.Size()
			} else if !sized {
				// A regular file, as its directory entry says: its size is
				// not wanted.
			} else if size, err = sizeOf(name); err != nil {
				m.warnf("%s: ignored: %v", m.rel(full), err)
				continue
			}
			add(&entry{pkg: pkg, layout: backends.Packed, path: full, size: size})
		}
		done()
	}
	if _, ok := s.versions["0.0.0"]; ok {
		m.Warn(fmt.Sprintf(unspecifiedWarning, p, m.name))
	}
	return s
}

// unspecifiedWarning is OpenTofu's warning for a filesystem mirror holding
// 0.0.0 (backends.Unspecified), which no selection picks.
const unspecifiedWarning = "Provider %s has an unspecified (0.0.0) version available in the filesystem mirror, source at %s. It will not be used. " +
	"If the version 0.0.0 is intended to represent a non-published provider, consider using dev_overrides - https://opentofu.org/docs/cli/config/config-file/#development-overrides-for-provider-developers"

func (m *Mirror) scanVersionDir(p backends.Provider, dir, name string, add func(*entry)) {
	v, err := backends.ParseVersion(name)
	if err != nil {
		m.warnf("%s: ignored directory: %v", m.rel(dir), err)
		return
	}
	plats, err := os.ReadDir(dir)
	if err != nil {
		m.warnf("%s: %v", m.rel(dir), err)
		return
	}
	for _, pd := range plats {
		full := filepath.Join(dir, pd.Name())
		if strings.HasPrefix(pd.Name(), ".") {
			continue
		}
		info, err := os.Stat(full)
		if err != nil {
			m.warnf("%s: ignored: %v", m.rel(full), err)
			continue
		}
		if !info.IsDir() {
			if !strings.HasSuffix(pd.Name(), ".lock") { // the clients' per-platform flock files
				m.warnf("%s: ignored stray file (unpacked packages are directories VERSION/OS_ARCH/)", m.rel(full))
			}
			continue
		}
		plat, err := backends.ParsePlatform(pd.Name())
		if err != nil {
			m.warnf("%s: ignored directory: %v", m.rel(full), err)
			continue
		}
		add(&entry{pkg: backends.Package{Provider: p, Version: v, Platform: plat}, layout: backends.Unpacked, path: full, size: -1})
	}
}
