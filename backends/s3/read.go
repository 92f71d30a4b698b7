package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/mirrordoc"
	"github.com/tfmirror/tfmirror/backends/zipname"
	"github.com/tfmirror/tfmirror/hashing"
)

// archiveObject is a release zip the listing found.
type archiveObject struct {
	pkg  backends.Package
	key  string
	size int64
}

// providerListing is what one provider's prefix holds, from one listing.
type providerListing struct {
	versions map[string]backends.Version         // by canonical string
	archives map[string]map[string]archiveObject // version -> platform -> archive
	hasIndex bool
	// hasProvenance: the listing found the provenance folder.
	hasProvenance bool
}

// sortedVersions returns the listing's versions, newest first.
func (l *providerListing) sortedVersions() []backends.Version {
	vs := make([]backends.Version, 0, len(l.versions))
	for _, v := range l.versions {
		vs = append(vs, v)
	}
	backends.SortVersionsNewestFirst(vs)
	return vs
}

// listProvider lists p's prefix, one level deep: its archives and whether
// it has an index document. A prefix without any object is ErrNotFound.
func (s *Store) listProvider(ctx context.Context, p backends.Provider) (*providerListing, error) {
	pfx := s.providerPrefix(p)
	l := &providerListing{versions: map[string]backends.Version{}, archives: map[string]map[string]archiveObject{}}
	found, at, docs := false, time.Now(), map[string]bool{}
	pages := s3api.NewListObjectsV2Paginator(s.client, &s3api.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &pfx, Delimiter: aws.String("/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.errorf(err, "%s: list %s", p, s.location(pfx))
		}
		for _, cp := range page.CommonPrefixes {
			f := aws.ToString(cp.Prefix)
			if !s.listedUnder(pfx, f, true) {
				continue
			}
			found = true
			if isProvenanceFolder(strings.TrimPrefix(f, pfx)) {
				l.hasProvenance = true
				continue
			}
			s.warnf("%s: ignored: the network-mirror layout has no sub-folders in a provider's folder (unpacked packages are not served)", s.location(f))
		}
		for _, o := range page.Contents {
			if key := aws.ToString(o.Key); s.listedUnder(pfx, key, false) {
				found = true
				if strings.HasSuffix(key, ".json") {
					docs[key] = true
				}
				s.addListed(l, p, key, aws.ToInt64(o.Size))
			}
		}
	}
	s.sawDocs(pfx, at, docs)
	if !found {
		return nil, fmt.Errorf("mirror %s: %s: %w", s.name, p, backends.ErrNotFound)
	}
	if _, ok := l.versions["0.0.0"]; ok {
		s.warnf("%s: version 0.0.0 is offered, which the clients never select", p)
	}
	return l, nil
}

// addListed files one listed object: an archive, the index document, a
// version document (read when wanted), or junk to warn about.
func (s *Store) addListed(l *providerListing, p backends.Provider, key string, size int64) {
	name := path.Base(key)
	lower := strings.ToLower(name)
	switch {
	case name == mirrordoc.IndexName:
		l.hasIndex = true
		return
	case strings.HasSuffix(lower, ".json"):
		return
	}
	pkg, err := zipname.Parse(p, name)
	if err != nil {
		s.warnf("%s: ignored: %v", s.location(key), err)
		return
	}
	v, plat := pkg.Version.String(), pkg.Platform.String()
	if l.archives[v] == nil {
		l.archives[v] = map[string]archiveObject{}
		l.versions[v] = pkg.Version
	}
	if other, dup := l.archives[v][plat]; dup {
		s.warnf("%s: ignored: %s holds the same package", s.location(key), path.Base(other.key))
		return
	}
	l.archives[v][plat] = archiveObject{pkg: pkg, key: key, size: size}
}

// doc is a document as read from the bucket, with the ETag it had then.
type doc struct {
	key    string
	body   []byte
	etag   string
	exists bool
}

// getDoc reads a document; one that does not exist is not an error.
func (s *Store) getDoc(ctx context.Context, key string) (doc, error) {
	out, err := s.client.GetObject(ctx, &s3api.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if err = classify(err); errors.Is(err, backends.ErrNotFound) {
			return doc{key: key}, nil
		}
		return doc{}, fmt.Errorf("mirror %s: %s: %w", s.name, s.location(key), err)
	}
	defer func() { _ = out.Body.Close() }() // read only
	b, err := io.ReadAll(io.LimitReader(out.Body, httpclient.DefaultMaxDocument+1))
	if err != nil {
		return doc{}, fmt.Errorf("mirror %s: %s: %w", s.name, s.location(key), backends.Transient(err))
	}
	if int64(len(b)) > httpclient.DefaultMaxDocument {
		return doc{}, fmt.Errorf("mirror %s: %s: larger than %d bytes: not an index document", s.name, s.location(key), httpclient.DefaultMaxDocument)
	}
	return doc{key: key, body: b, etag: aws.ToString(out.ETag), exists: true}, nil
}

// indexedVersions reads p's index.json, when the listing found one, and
// returns the versions it lists.
func (s *Store) indexedVersions(ctx context.Context, p backends.Provider, l *providerListing) (map[string]bool, error) {
	if !l.hasIndex {
		return nil, nil
	}
	d, err := s.getDoc(ctx, s.providerPrefix(p)+mirrordoc.IndexName)
	if err != nil || !d.exists {
		return nil, err
	}
	vs, err := mirrordoc.ParseIndex(d.body)
	if err != nil {
		s.warnf("%s: ignored: not a valid index document: %v", s.location(d.key), err)
	}
	return vs, nil
}

// versionDocs reads the version documents of vs, several at a time. A
// document that is missing or invalid is nil (with a warning for the
// latter).
func (s *Store) versionDocs(ctx context.Context, p backends.Provider, vs []backends.Version) (map[string]*mirrordoc.Version, error) {
	docs := make([]*mirrordoc.Version, len(vs))
	err := s.each(ctx, len(vs), func(ctx context.Context, i int) error {
		d, err := s.getDoc(ctx, s.providerPrefix(p)+mirrordoc.VersionName(vs[i]))
		if err != nil || !d.exists {
			return err
		}
		if docs[i], err = mirrordoc.ParseVersion(d.body); err != nil {
			s.warnf("%s: ignored: not a valid version document: %v", s.location(d.key), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*mirrordoc.Version, len(vs))
	for i, v := range vs {
		out[v.String()] = docs[i]
	}
	return out, nil
}

// archivesAt lists p's archives at vs (in that order, each version's
// sorted by platform) with what the version documents state about them. A
// version document counts only when index.json lists its version: the
// clients read nothing else, and a write interrupted between the two
// leaves exactly that.
func (s *Store) archivesAt(ctx context.Context, p backends.Provider, l *providerListing, vs []backends.Version) ([]backends.Archive, error) {
	indexed, err := s.indexedVersions(ctx, p, l)
	if err != nil {
		return nil, err
	}
	var read []backends.Version
	for _, v := range vs {
		if indexed[v.String()] && len(l.archives[v.String()]) > 0 {
			read = append(read, v)
		}
	}
	docs, err := s.versionDocs(ctx, p, read)
	if err != nil {
		return nil, err
	}
	var out []backends.Archive
	for _, v := range vs {
		d := docs[v.String()]
		first := len(out)
		for _, o := range l.archives[v.String()] {
			out = append(out, s.archive(o, d))
		}
		sort.Slice(out[first:], func(i, j int) bool {
			return out[first+i].Platform.String() < out[first+j].Platform.String()
		})
	}
	return out, nil
}

// archive is o as a backends.Archive, with what d states about it when d
// describes its file.
func (s *Store) archive(o archiveObject, d *mirrordoc.Version) backends.Archive {
	a := backends.Archive{Package: o.pkg, Layout: backends.Packed, Size: o.size, Location: s.location(o.key)}
	docKey := s.providerPrefix(o.pkg.Provider) + mirrordoc.VersionName(o.pkg.Version)
	entry, ok, describes := d.Entry(o.pkg.Platform, path.Base(o.key))
	switch {
	case ok && !describes:
		s.warnf("%s: %s lists url %q, but the archive is %s", s.location(docKey), o.pkg.Platform, entry.URL, path.Base(o.key))
	case describes:
		ev, bad := entry.Evidence(s.location(docKey))
		for _, err := range bad {
			s.warnf("%s: %s: %v", s.location(docKey), o.pkg.Platform, err)
		}
		a.Evidence = []hashing.Evidence{ev}
	}
	return a
}

// Providers lists the providers under the prefix: its HOST/NAMESPACE/TYPE/
// folders, several listed at a time.
func (s *Store) Providers(ctx context.Context) ([]backends.Provider, error) {
	hosts, err := s.subfolders(ctx, []string{s.prefix})
	if err != nil {
		return nil, err
	}
	// tfmirror's own notes (UpdateNote) are no host.
	hosts = slices.DeleteFunc(hosts, func(h string) bool { return h == s.prefix+noteDir })
	nss, err := s.subfolders(ctx, hosts)
	if err != nil {
		return nil, err
	}
	types, err := s.subfolders(ctx, nss)
	if err != nil {
		return nil, err
	}
	var out []backends.Provider
	for _, t := range types {
		parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(t, s.prefix), "/"), "/")
		p, err := backends.NewProvider(parts[0], parts[1], parts[2])
		if err != nil {
			s.warnf("%s: ignored: %v", s.location(t), err)
			continue
		}
		if s.providerPrefix(p) != t {
			s.warnf("%s: ignored: the clients request %s (lowercase, the hostname in ASCII), which this folder is not", s.location(t), s.location(s.providerPrefix(p)))
			continue
		}
		out = append(out, p)
	}
	backends.SortProviders(out)
	return out, nil
}

// subfolders lists the folders one level under each prefix, several
// prefixes at a time; objects at that level are junk in the layout.
func (s *Store) subfolders(ctx context.Context, prefixes []string) ([]string, error) {
	found := make([][]string, len(prefixes))
	err := s.each(ctx, len(prefixes), func(ctx context.Context, i int) error {
		pfx := prefixes[i]
		pages := s3api.NewListObjectsV2Paginator(s.client, &s3api.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(pfx), Delimiter: aws.String("/")})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return s.errorf(err, "list %s", s.location(pfx))
			}
			for _, cp := range page.CommonPrefixes {
				if f := aws.ToString(cp.Prefix); s.listedUnder(pfx, f, true) {
					found[i] = append(found[i], f)
				}
			}
			for _, o := range page.Contents {
				if k := aws.ToString(o.Key); k != pfx {
					s.warnf("%s: ignored stray object (providers are in HOST/NAMESPACE/TYPE/ folders)", s.location(k))
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range found {
		out = append(out, f...)
	}
	sort.Strings(out)
	return out, nil
}

// listedUnder reports whether a name a listing of pfx returned is one
// level under it: a folder (PFX/NAME/) or an object (PFX/NAME). A store
// answering with names elsewhere in the bucket (a bug, a proxy) must not
// make them this mirror's providers or archives; each is ignored with a
// warning.
func (s *Store) listedUnder(pfx, name string, folder bool) bool {
	rest, ok := strings.CutPrefix(name, pfx)
	if folder {
		rest, ok = strings.CutSuffix(rest, "/")
		ok = ok && strings.HasPrefix(name, pfx)
	}
	if ok && !strings.Contains(rest, "/") && (rest != "" || folder) {
		return true
	}
	s.warnf("%s: ignored: the store listed it under %s, where it is not", s.location(name), s.location(pfx))
	return false
}

// listingTTL is how long a reader reuses a provider's listing: a command
// asks for a provider's versions and then for their archives, which one
// listing answers. The store's own writes drop it at once.
const listingTTL = 2 * time.Second

type cachedListing struct {
	at time.Time
	l  *providerListing
}

// listed returns p's listing, reusing one made within listingTTL.
func (s *Store) listed(ctx context.Context, p backends.Provider) (*providerListing, error) {
	s.mu.Lock()
	c, ok := s.listings[p]
	s.mu.Unlock()
	if ok && time.Since(c.at) < listingTTL {
		return c.l, nil
	}
	at := time.Now()
	l, err := s.listProvider(ctx, p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.listings[p] = cachedListing{at: at, l: l}
	s.mu.Unlock()
	return l, nil
}

// forget drops p's reused listings, after a write to p.
func (s *Store) forget(p backends.Provider) {
	s.mu.Lock()
	delete(s.listings, p)
	delete(s.provenance, p)
	s.mu.Unlock()
}

// Versions lists p's versions that have archives, newest first.
func (s *Store) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	l, err := s.listed(ctx, p)
	if err != nil {
		return nil, err
	}
	return l.sortedVersions(), nil
}

// Archives lists p's archives at v, sorted by platform.
func (s *Store) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	return s.ArchivesAt(ctx, p, []backends.Version{v})
}

// ArchivesAt lists p's archives at vs from one listing of its folder.
func (s *Store) ArchivesAt(ctx context.Context, p backends.Provider, vs []backends.Version) ([]backends.Archive, error) {
	l, err := s.listed(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.archivesAt(ctx, p, l, vs)
}

// StatedHashes returns the hashes the version document of v lists for each
// platform, as a network mirror's: a lock from the bucket downloads no
// archive where they are listed.
func (s *Store) StatedHashes(ctx context.Context, p backends.Provider, v backends.Version) (map[backends.Platform][]hashing.Hash, error) {
	as, err := s.Archives(ctx, p, v)
	if err != nil {
		return nil, err
	}
	return backends.StatedInListing(as), nil
}

// AllArchives lists every archive of p, newest version first.
func (s *Store) AllArchives(ctx context.Context, p backends.Provider) ([]backends.Archive, error) {
	l, err := s.listed(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.archivesAt(ctx, p, l, l.sortedVersions())
}

// Open streams an archive's bytes.
func (s *Store) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	key := s.keyOf(a)
	out, err := s.client.GetObject(ctx, &s3api.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, s.errorf(err, "%s: %s", a.Package, s.location(key))
	}
	return out.Body, nil
}

// sameBytes reports whether a document read holds exactly b.
func (d doc) sameBytes(b []byte) bool { return d.exists && bytes.Equal(d.body, b) }
