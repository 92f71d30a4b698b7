package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// Audit checks p's index documents against the archives on disk, where a
// directory has an index.json: an archive a <version>.json lists that is
// not there, and an archive there that the documents do not list (its
// version missing from index.json, or its platform from <version>.json).
// Both are problems: a network mirror serving the directory offers what is
// not there, or hides what is.
func (m *Mirror) Audit(ctx context.Context, p backends.Provider) []backends.Problem {
	s, err := m.scan(ctx, p)
	if err != nil {
		return []backends.Problem{{Detail: err.Error()}}
	}
	var out []backends.Problem
	for _, dir := range s.dirs {
		indexPath := filepath.Join(dir, "index.json")
		b, err := regular.ReadFile(indexPath, 0)
		if os.IsNotExist(err) {
			continue // a plain filesystem mirror needs no index documents
		}
		var idx mirrordoc.Index
		if err == nil {
			err = json.Unmarshal(b, &idx)
		}
		if err != nil {
			out = append(out, backends.Problem{Detail: fmt.Sprintf("mirror %s: %s: %s", m.name, m.rel(indexPath), readProblem(err))})
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
					out = append(out, m.unlisted(e, indexPath))
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Detail < out[j].Detail })
	return out
}

// unlisted is the problem of an archive on disk that the index document
// at docPath does not list.
func (m *Mirror) unlisted(e *entry, docPath string) backends.Problem {
	return backends.Problem{Package: e.pkg, Detail: fmt.Sprintf(
		"mirror %s: %s: %s is on disk but not listed in %s, so a network mirror serving this directory hides it (tfmirror sync lists it)",
		m.name, e.pkg, filepath.Base(e.path), m.rel(docPath))}
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
	for plat, e := range s.entries[v.String()] {
		if e.layout != backends.Packed || filepath.Dir(e.path) != dir {
			continue
		}
		if ad, ok := doc.Archives[plat]; !ok || !strings.EqualFold(path.Base(ad.URL), filepath.Base(e.path)) {
			out = append(out, m.unlisted(e, docPath))
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
