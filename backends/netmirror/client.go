package netmirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/hashing"
)

// DefaultConcurrency is how many version documents are fetched at once.
const DefaultConcurrency = 8

// Options configure a Mirror.
type Options struct {
	// HTTP is the HTTP layer (TLS trust, limits); the zero value trusts the
	// system pool.
	HTTP httpclient.Client
	// Credentials supplies the bearer token for the mirror's host. It is sent
	// on index.json and <version>.json requests to that host only, never on
	// archive downloads and never after a redirect to another host.
	Credentials backends.Credentials
	// Concurrency bounds parallel version-document requests; 0 means
	// DefaultConcurrency.
	Concurrency int
}

// Mirror is a network mirror.
type Mirror struct {
	backends.WarningLog

	name string
	base *url.URL
	opts Options
	auth *httpclient.Auth
}

var (
	_ backends.Reader         = (*Mirror)(nil)
	_ backends.Lister         = (*Mirror)(nil)
	_ backends.VersionsLister = (*Mirror)(nil)
	_ backends.Warner         = (*Mirror)(nil)

	_ backends.StatedHashLister = (*Mirror)(nil)
)

// Open parses a mirror URL. No request is made until the mirror is read.
//
// The clients resolve the protocol's paths against the URL as given, so
// without a trailing slash they replace its last segment: for them
// https://host/tf means https://host/. That is never what anyone writing it
// meant, so Open adds the slash and warns that the clients' configuration
// needs it written out. https://host, with no path at all, means
// https://host/ to everyone: no warning then.
func Open(raw string, opts Options) (*Mirror, error) {
	u, err := url.Parse(raw)
	// Messages print the URL without its user information (a password).
	raw = backends.RedactPlace(raw)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: not a URL: %v", raw, err)
	}
	switch {
	case u.Scheme != "https":
		return nil, fmt.Errorf("mirror %s: a network mirror must be at an https: URL", raw)
	case u.Host == "":
		return nil, fmt.Errorf("mirror %s: the URL has no host", raw)
	case u.User != nil:
		return nil, fmt.Errorf("mirror %s: credentials in the URL are not supported; set %s or a credentials block instead", raw, backends.TokenEnvName(u.Hostname()))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("mirror %s: a mirror URL has no query or fragment", raw)
	}
	m := &Mirror{name: raw, base: u, opts: opts}
	if !strings.HasSuffix(u.Path, "/") {
		fixed := *u
		fixed.Path += "/"
		if fixed.RawPath != "" {
			fixed.RawPath += "/"
		}
		m.base = &fixed
		if clients := u.ResolveReference(&url.URL{Path: "./"}); clients.String() != fixed.String() {
			m.warnf("the URL lacks a trailing slash; reading %s (Terraform and OpenTofu would read %s instead: write the slash in their network_mirror url)",
				fixed.String(), clients.String())
		}
	}
	m.auth = httpclient.AuthFor(opts.Credentials, httpclient.HostKey(m.base))
	return m, nil
}

func (m *Mirror) String() string { return m.name }

// BaseURL is the URL the protocol's paths are resolved against.
func (m *Mirror) BaseURL() string { return m.base.String() }

func (m *Mirror) warnf(format string, args ...any) {
	m.Warn(fmt.Sprintf("mirror %s: ", m.name) + fmt.Sprintf(format, args...))
}

// CanList is false: the protocol has no catalogue (sync.Cataloguer).
func (m *Mirror) CanList() bool { return false }

// Providers reports that the protocol has no catalogue.
func (m *Mirror) Providers(ctx context.Context) ([]backends.Provider, error) {
	return nil, fmt.Errorf("mirror %s: %w", m.name, backends.ErrNoCatalogue)
}

// providerURL resolves HOST/NS/TYPE/<file>, with the hostname in its ASCII
// form as the clients request it.
func (m *Mirror) providerURL(p backends.Provider, file string) *url.URL {
	return m.base.ResolveReference(&url.URL{Path: path.Join(p.Hostname, p.Namespace, p.Type, file)})
}

func (m *Mirror) errorf(p backends.Provider, format string, args ...any) error {
	return fmt.Errorf("mirror %s: %s: "+format, append([]any{m.name, p}, args...)...)
}

// authHint adds what to do to an authorization failure.
func (m *Mirror) authHint(err error) string {
	if !errors.Is(err, backends.ErrUnauthorized) {
		return ""
	}
	host := httpclient.HostKey(m.base)
	if m.auth == nil {
		return fmt.Sprintf(" (no token for %s: set %s or add a credentials block)", host, backends.TokenEnvName(host))
	}
	return fmt.Sprintf(" (the token for %s was refused)", host)
}

type indexDoc struct {
	Versions map[string]any `json:"versions"`
}

// Versions reads HOST/NS/TYPE/index.json. Entries that are not valid
// versions are skipped with a warning, as the clients skip them.
func (m *Mirror) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	u := m.providerURL(p, "index.json")
	var doc indexDoc
	if _, err := m.opts.HTTP.JSON(ctx, u, m.auth, &doc); err != nil {
		if errors.Is(err, backends.ErrNotFound) {
			return nil, m.errorf(p, "no such provider: %w", err)
		}
		return nil, m.errorf(p, "%w%s", err, m.authHint(err))
	}
	if doc.Versions == nil {
		return nil, m.errorf(p, "%s: not an index document (no \"versions\" object)", httpclient.RedactURL(u))
	}
	vs := make([]backends.Version, 0, len(doc.Versions))
	for s, meta := range doc.Versions {
		v, err := backends.ParseVersion(s)
		if err != nil {
			m.warnf("%s: %s: skipped: %v", p, httpclient.RedactURL(u), err)
			continue
		}
		if _, ok := meta.(map[string]any); !ok {
			m.warnf("%s: %s: version %s: skipped: its value is not an object", p, httpclient.RedactURL(u), s)
			continue
		}
		vs = append(vs, v)
	}
	backends.SortVersionsNewestFirst(vs)
	return vs, nil
}

type versionDoc struct {
	Archives map[string]struct {
		URL    string   `json:"url"`
		Hashes []string `json:"hashes"`
	} `json:"archives"`
}

// Archives reads HOST/NS/TYPE/<version>.json. Relative archive URLs resolve
// against the document's final URL after redirects, as the clients resolve
// them.
func (m *Mirror) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	u := m.providerURL(p, v.String()+".json")
	var doc versionDoc
	final, err := m.opts.HTTP.JSON(ctx, u, m.auth, &doc)
	if err != nil {
		if errors.Is(err, backends.ErrNotFound) {
			return nil, m.errorf(p, "version %s: the mirror lists it but has no archive index for it: %w", v, err)
		}
		return nil, m.errorf(p, "version %s: %w%s", v, err, m.authHint(err))
	}
	if doc.Archives == nil {
		return nil, m.errorf(p, "version %s: %s: not a version document (no \"archives\" object)", v, httpclient.RedactURL(final))
	}
	out := make([]backends.Archive, 0, len(doc.Archives))
	for key, ad := range doc.Archives {
		plat, err := backends.ParsePlatform(key)
		if err != nil {
			m.warnf("%s %s: %s: skipped: %v", p, v, httpclient.RedactURL(final), err)
			continue
		}
		pkg := backends.Package{Provider: p, Version: v, Platform: plat}
		if ad.URL == "" {
			m.warnf("%s: %s: skipped: no url", pkg, httpclient.RedactURL(final))
			continue
		}
		ref, err := url.Parse(ad.URL)
		if err != nil {
			m.warnf("%s: %s: skipped: url %q: %v", pkg, httpclient.RedactURL(final), ad.URL, err)
			continue
		}
		loc := final.ResolveReference(ref)
		if loc.Scheme != "https" && loc.Scheme != "http" {
			m.warnf("%s: %s: skipped: url %q is not an http(s) URL", pkg, httpclient.RedactURL(final), ad.URL)
			continue
		}
		ev := hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceMirrorIndex, Detail: httpclient.RedactURL(final)}}
		for _, s := range ad.Hashes {
			h, err := hashing.StatedHash(s)
			if h == "" {
				// The clients refuse the whole package over a hash
				// without a scheme.
				return nil, fmt.Errorf("mirror %s: %s: %s: %w", m.name, pkg, httpclient.RedactURL(final), err)
			}
			if err != nil {
				m.warnf("%s: %s: %v", pkg, httpclient.RedactURL(final), err)
			}
			ev.Hashes = append(ev.Hashes, h)
		}
		out = append(out, backends.Archive{Package: pkg, Layout: backends.Packed, Size: -1, Evidence: []hashing.Evidence{ev}, Location: loc.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Platform.String() < out[j].Platform.String() })
	return out, nil
}

// StatedHashes returns the hashes the version document of v lists for each
// platform: a mirror whose documents list h1: and zh: (as tfmirror and
// providers mirror write them) gives a lock without downloading an archive.
func (m *Mirror) StatedHashes(ctx context.Context, p backends.Provider, v backends.Version) (map[backends.Platform][]hashing.Hash, error) {
	as, err := m.Archives(ctx, p, v)
	if err != nil {
		return nil, err
	}
	return backends.StatedInListing(as), nil
}

// AllArchives reads index.json and then every version document.
func (m *Mirror) AllArchives(ctx context.Context, p backends.Provider) ([]backends.Archive, error) {
	vs, err := m.Versions(ctx, p)
	if err != nil {
		return nil, err
	}
	return m.ArchivesAt(ctx, p, vs)
}

// ArchivesAt reads the version documents of vs several at a time: a mirror
// answers each quickly, but one after another they add up to seconds for a
// provider with hundreds of releases.
func (m *Mirror) ArchivesAt(ctx context.Context, p backends.Provider, vs []backends.Version) ([]backends.Archive, error) {
	n := m.opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	return backends.ArchivesConcurrently(ctx, vs, n, func(ctx context.Context, v backends.Version) ([]backends.Archive, error) {
		return m.Archives(ctx, p, v)
	})
}

// Open downloads an archive from the URL its version document gave, without
// credentials: archives are often on other hosts (a CDN, object storage).
func (m *Mirror) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	loc := a.Location
	if loc == "" {
		as, err := m.Archives(ctx, a.Provider, a.Version)
		if err != nil {
			return nil, err
		}
		for _, b := range as {
			if b.Platform == a.Platform {
				loc = b.Location
			}
		}
		if loc == "" {
			return nil, fmt.Errorf("mirror %s: %s: %w", m.name, a.Package, backends.ErrNotFound)
		}
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: archive url %q: %v", m.name, a.Package, loc, err)
	}
	d, err := m.opts.HTTP.Open(ctx, u, nil, "")
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %s: %w", m.name, a.Package, err)
	}
	return d, nil
}
