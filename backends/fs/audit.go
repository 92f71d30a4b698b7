package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/tfmirror/tfmirror/backends"
)

// Audit checks p's index documents against the archives on disk: a
// <version>.json that lists an archive that is not there, and versions whose
// archives index.json does not list (a network mirror serving this directory
// would hide them).
func (m *Mirror) Audit(ctx context.Context, p backends.Provider) []backends.Problem {
	s, err := m.scan(ctx, p)
	if err != nil {
		return []backends.Problem{{Detail: err.Error()}}
	}
	var out []backends.Problem
	for _, dir := range s.dirs {
		indexPath := filepath.Join(dir, "index.json")
		b, err := os.ReadFile(indexPath)
		if os.IsNotExist(err) {
			continue // a plain filesystem mirror needs no index documents
		}
		var idx indexDoc
		if err == nil {
			err = json.Unmarshal(b, &idx)
		}
		if err != nil {
			out = append(out, backends.Problem{Detail: fmt.Sprintf("mirror %s: %s: %v", m.name, m.rel(indexPath), err)})
			continue
		}
		listed := map[string]bool{}
		for vs := range idx.Versions {
			v, err := backends.ParseVersion(vs)
			if err != nil {
				out = append(out, backends.Problem{Detail: fmt.Sprintf("mirror %s: %s: %v", m.name, m.rel(indexPath), err)})
				continue
			}
			listed[v.String()] = true
			out = append(out, m.auditVersion(dir, p, v, s)...)
		}
		for v, plats := range s.entries {
			if listed[v] {
				continue
			}
			for _, e := range plats {
				if e.layout == backends.Packed && filepath.Dir(e.path) == dir {
					// Harmless to installs (a network mirror serving the
					// directory just does not offer it yet); the next sync
					// writes it. An interrupted sync leaves exactly this.
					m.warnf("%s: not yet listed in %s (a network mirror serving this directory will not offer it; the next tfmirror sync lists it)", m.rel(e.path), m.rel(indexPath))
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Detail < out[j].Detail })
	return out
}

func (m *Mirror) auditVersion(dir string, p backends.Provider, v backends.Version, s *providerScan) []backends.Problem {
	doc, docPath := m.readVersionDoc(dir, v)
	if doc == nil {
		return []backends.Problem{{Package: backends.Package{Provider: p, Version: v}, Missing: true,
			Detail: fmt.Sprintf("mirror %s: index.json lists %s %s but %s is missing or invalid", m.name, p, v, m.rel(docPath))}}
	}
	var out []backends.Problem
	for platStr, ad := range doc.Archives {
		plat, err := backends.ParsePlatform(platStr)
		if err != nil {
			out = append(out, backends.Problem{Detail: fmt.Sprintf("mirror %s: %s: %v", m.name, m.rel(docPath), err)})
			continue
		}
		pkg := backends.Package{Provider: p, Version: v, Platform: plat}
		if path.IsAbs(ad.URL) || hasScheme(ad.URL) {
			continue // an archive elsewhere; not this directory's to check
		}
		target := filepath.Join(dir, filepath.FromSlash(ad.URL))
		if _, err := os.Stat(target); err != nil {
			out = append(out, backends.Problem{Package: pkg, Missing: true,
				Detail: fmt.Sprintf("mirror %s: %s: %s lists %s, which is missing", m.name, pkg, m.rel(docPath), ad.URL)})
		}
	}
	return out
}

func hasScheme(u string) bool {
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c == ':':
			return i > 0
		case c == '/' || c == '?' || c == '#':
			return false
		}
	}
	return false
}
