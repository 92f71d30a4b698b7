package s3

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
)

// Audit checks p's documents against the archives in the bucket: a version
// index.json lists without its document, an archive a version document
// lists that is not there (the clients would fail to download it), and an
// archive there that the documents do not list (the clients never see it).
func (s *Store) Audit(ctx context.Context, p backends.Provider) []backends.Problem {
	l, err := s.listProvider(ctx, p)
	if err != nil {
		return []backends.Problem{{Detail: err.Error()}}
	}
	pfx := s.providerPrefix(p)
	indexKey := s.location(pfx + mirrordoc.IndexName)
	indexed, err := s.indexedVersions(ctx, p, l)
	if err != nil {
		return []backends.Problem{{Detail: err.Error()}}
	}
	var listed []backends.Version
	for vs := range indexed {
		if v, err := backends.ParseVersion(vs); err == nil {
			listed = append(listed, v)
		}
	}
	docs, err := s.versionDocs(ctx, p, listed)
	if err != nil {
		return []backends.Problem{{Detail: err.Error()}}
	}
	var out []backends.Problem
	for _, v := range listed {
		out = append(out, s.auditVersion(p, v, docs[v.String()], l)...)
	}
	for v, plats := range l.archives {
		if indexed[v] {
			continue
		}
		for _, o := range plats {
			out = append(out, s.unlisted(o, indexKey))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Detail < out[j].Detail })
	return out
}

// auditVersion checks one version document, d (nil when missing or
// invalid), against the listing.
func (s *Store) auditVersion(p backends.Provider, v backends.Version, d *mirrordoc.Version, l *providerListing) []backends.Problem {
	docKey := s.location(s.providerPrefix(p) + mirrordoc.VersionName(v))
	if d == nil {
		return []backends.Problem{{Package: backends.Package{Provider: p, Version: v}, Missing: true,
			Detail: fmt.Sprintf("mirror %s: index.json lists %s %s but %s is missing or invalid", s.name, p, v, docKey)}}
	}
	var out []backends.Problem
	for platStr, e := range d.Archives {
		plat, err := backends.ParsePlatform(platStr)
		if err != nil {
			out = append(out, backends.Problem{Detail: fmt.Sprintf("mirror %s: %s: %v", s.name, docKey, err)})
			continue
		}
		pkg := backends.Package{Provider: p, Version: v, Platform: plat}
		if strings.Contains(e.URL, ":") || strings.HasPrefix(e.URL, "/") {
			continue // an archive elsewhere; not this bucket's to check
		}
		if o, ok := l.archives[v.String()][platStr]; !ok || !strings.EqualFold(path.Base(o.key), path.Base(e.URL)) {
			out = append(out, backends.Problem{Package: pkg, Missing: true,
				Detail: fmt.Sprintf("mirror %s: %s: %s lists %s, which is missing", s.name, pkg, docKey, e.URL)})
		}
	}
	for _, o := range l.archives[v.String()] {
		if _, _, describes := d.Entry(o.pkg.Platform, path.Base(o.key)); !describes {
			out = append(out, s.unlisted(o, docKey))
		}
	}
	return out
}

// unlisted is the problem of an archive in the bucket that the document
// at docKey does not list.
func (s *Store) unlisted(o archiveObject, docKey string) backends.Problem {
	return backends.Problem{Package: o.pkg, Detail: fmt.Sprintf(
		"mirror %s: %s: %s is in the bucket but not listed in %s, so the clients do not see it (tfmirror sync lists it)",
		s.name, o.pkg, path.Base(o.key), docKey)}
}
