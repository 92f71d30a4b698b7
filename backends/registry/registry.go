package registry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/provenance"
	"github.com/tfmirror/tfmirror/hashing"
)

// DefaultConcurrency is how many download-metadata requests run at once.
const DefaultConcurrency = 8

// unsignedHost is the one registry the clients accept without signing keys
// (OpenTofu's own, which publishes hashes through other channels).
const unsignedHost = "registry.opentofu.org"

// Options configure a Registry.
type Options struct {
	// HTTP is the HTTP layer (TLS trust, limits); the zero value trusts the
	// system pool.
	HTTP httpclient.Client
	// Credentials supplies the bearer token for the registry's host. It is
	// sent on discovery and registry API requests only, and only where they
	// are on the registry's own host and port over https (not to a
	// providers.v1 that discovery puts elsewhere); never on SHA256SUMS,
	// signature or archive downloads, nor after a redirect leaves the host.
	Credentials backends.Credentials
	// Concurrency bounds parallel download-metadata requests (one per
	// platform); 0 means DefaultConcurrency.
	Concurrency int
	// Signatures say how SHA256SUMS signatures are checked (key expiry).
	Signatures provenance.Options
}

// Registry is an origin registry.
type Registry struct {
	backends.WarningLog

	name string // as the user wrote it
	host string // comparison form
	opts Options

	discoMu sync.Mutex
	base    *url.URL // providers.v1, with a trailing slash
	auth    *httpclient.Auth

	mu        sync.Mutex
	versions  map[backends.Provider]map[string]versionInfo
	downloads map[backends.PackageKey]download
	signed    map[string]*signedSums // by sumsKey
	// bySums holds, for each provider version, the SHA256SUMS documents
	// that authenticated its packages (one in practice).
	bySums map[versionKey]map[*signedSums]bool
}

type versionKey struct {
	p backends.Provider
	v string
}

var (
	_ backends.Reader           = (*Registry)(nil)
	_ backends.Warner           = (*Registry)(nil)
	_ backends.VersionsLister   = (*Registry)(nil)
	_ backends.SignedHashLister = (*Registry)(nil)
	_ backends.ProvenanceReader = (*Registry)(nil)
	_ backends.StatedHashLister = (*Registry)(nil)
)

// Open prepares a registry at host (HOST or HOST:PORT). No request is made
// until it is read.
func Open(name, host string, opts Options) (*Registry, error) {
	h, err := backends.NormalizeHostname(host)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %v", name, err)
	}
	return &Registry{
		name: name, host: h, opts: opts,
		versions:  map[backends.Provider]map[string]versionInfo{},
		downloads: map[backends.PackageKey]download{},
		signed:    map[string]*signedSums{},
		bySums:    map[versionKey]map[*signedSums]bool{},
	}, nil
}

func (r *Registry) String() string { return r.name }

// DefaultHost returns the registry's hostname (comparison form), so that
// NAMESPACE/TYPE names a provider on this registry.
func (r *Registry) DefaultHost() string { return r.host }

func (r *Registry) warnf(format string, args ...any) {
	r.Warn(fmt.Sprintf("registry %s: ", r.host) + fmt.Sprintf(format, args...))
}

func (r *Registry) errorf(format string, args ...any) error {
	return fmt.Errorf("registry %s: "+format, append([]any{r.host}, args...)...)
}

func (r *Registry) authHint(err error) string {
	if !errors.Is(err, backends.ErrUnauthorized) {
		return ""
	}
	if _, ok := r.token(); !ok {
		return fmt.Sprintf(" (no token for %s: set %s or add a credentials block)", r.host, backends.TokenEnvName(r.host))
	}
	// r.base is set once, before any API request that could be refused.
	if r.base != nil && !r.auth.Allows(r.base) {
		return fmt.Sprintf(" (the token for %s is not sent to %s: a registry's token goes to its own host and port over https only)", r.host, httpclient.RedactURL(r.base))
	}
	return fmt.Sprintf(" (the token for %s was refused)", r.host)
}

func (r *Registry) token() (string, bool) {
	if r.opts.Credentials == nil {
		return "", false
	}
	return r.opts.Credentials.Token(r.host)
}

// Providers reports that the protocol has no catalogue.
func (r *Registry) Providers(ctx context.Context) ([]backends.Provider, error) {
	return nil, fmt.Errorf("registry %s: %w", r.host, backends.ErrNoCatalogue)
}

// discover reads the registry's service discovery document once and returns
// the providers.v1 base URL, with the registry's token. The token is the
// registry host's: it rides to the API only where the API is on that host
// and port over https (httpclient's rule), never to a providers.v1 that
// discovery puts elsewhere.
func (r *Registry) discover(ctx context.Context) (*url.URL, *httpclient.Auth, error) {
	r.discoMu.Lock()
	defer r.discoMu.Unlock()
	if r.base != nil {
		return r.base, r.auth, nil
	}
	auth := httpclient.AuthFor(r.opts.Credentials, r.host)
	svc, err := r.opts.HTTP.Discover(ctx, r.host, auth)
	switch {
	case errors.Is(err, backends.ErrNotFound):
		return nil, nil, r.errorf("service discovery: the host offers no services (%v); is it a registry?", err)
	case err != nil:
		return nil, nil, r.errorf("service discovery: %w%s", err, r.authHint(err))
	}
	base, err := svc.Service(httpclient.ProvidersV1)
	if err != nil {
		return nil, nil, r.errorf("service discovery: %w", err)
	}
	r.base, r.auth = base, auth
	return r.base, r.auth, nil
}

// api resolves a path under providers.v1.
func (r *Registry) api(ctx context.Context, parts ...string) (*url.URL, *httpclient.Auth, error) {
	base, auth, err := r.discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	ref, err := url.Parse(strings.Join(parts, "/"))
	if err != nil {
		return nil, nil, err
	}
	return base.ResolveReference(ref), auth, nil
}

func (r *Registry) checkHost(p backends.Provider) error {
	if p.Hostname != r.host {
		return r.errorf("%s: this registry serves providers of %s only: %w", p, r.host, backends.ErrNotFound)
	}
	return nil
}

type versionInfo struct {
	version   backends.Version
	protocols []string
	platforms []backends.Platform
}

type versionsDoc struct {
	Versions []struct {
		Version   string   `json:"version"`
		Protocols []string `json:"protocols"`
		Platforms []struct {
			OS   string `json:"os"`
			Arch string `json:"arch"`
		} `json:"platforms"`
	} `json:"versions"`
	Warnings []string `json:"warnings"`
}

// Versions lists p's versions, newest first, remembering their platforms
// for Archives.
func (r *Registry) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	infos, err := r.versionInfos(ctx, p)
	if err != nil {
		return nil, err
	}
	vs := make([]backends.Version, 0, len(infos))
	for _, vi := range infos {
		vs = append(vs, vi.version)
	}
	backends.SortVersionsNewestFirst(vs)
	return vs, nil
}

// listedVersion is what the registry lists of version v of p, or an error
// naming the version it does not list.
func (r *Registry) listedVersion(ctx context.Context, p backends.Provider, v backends.Version) (versionInfo, error) {
	infos, err := r.versionInfos(ctx, p)
	if err != nil {
		return versionInfo{}, err
	}
	vi, ok := infos[v.String()]
	if !ok {
		return versionInfo{}, r.errorf("%s %s: the registry does not list this version: %w", p.ShortString(), v, backends.ErrNotFound)
	}
	return vi, nil
}

func (r *Registry) versionInfos(ctx context.Context, p backends.Provider) (map[string]versionInfo, error) {
	if err := r.checkHost(p); err != nil {
		return nil, err
	}
	r.mu.Lock()
	cached, ok := r.versions[p]
	r.mu.Unlock()
	if ok {
		return cached, nil
	}
	u, auth, err := r.api(ctx, p.Namespace, p.Type, "versions")
	if err != nil {
		return nil, err
	}
	var doc versionsDoc
	if _, err := r.opts.HTTP.JSON(ctx, u, auth, &doc); err != nil {
		if errors.Is(err, backends.ErrNotFound) {
			return nil, r.errorf("%s: no such provider: %w", p.ShortString(), err)
		}
		return nil, r.errorf("%s: %w%s", p.ShortString(), err, r.authHint(err))
	}
	for _, w := range doc.Warnings {
		r.warnf("%s: %s", p.ShortString(), w)
	}
	infos := map[string]versionInfo{}
	for _, dv := range doc.Versions {
		v, err := backends.ParseVersion(dv.Version)
		if err != nil {
			return nil, r.errorf("%s: %s: invalid version in the list: %v", p.ShortString(), httpclient.RedactURL(u), err)
		}
		vi := versionInfo{version: v, protocols: dv.Protocols}
		for _, dp := range dv.Platforms {
			plat, err := backends.ParsePlatform(dp.OS + "_" + dp.Arch)
			if err != nil {
				r.warnf("%s %s: platform skipped: %v", p.ShortString(), v, err)
				continue
			}
			vi.platforms = append(vi.platforms, plat)
		}
		backends.SortPlatforms(vi.platforms)
		infos[v.String()] = vi
	}
	r.mu.Lock()
	r.versions[p] = infos
	r.mu.Unlock()
	return infos, nil
}

// download is what the registry's download endpoint says about one package,
// after Archives checked it.
type download struct {
	url    *url.URL
	shasum string // lowercase hex
	size   int64  // from packages; -1 when not given
}

// Archives lists p's packages at v: the platforms from the versions list,
// then the download metadata of each (concurrently), then SHA256SUMS and its
// signature, fetched and checked once for the version. A bad signature is an
// error for the whole version.
func (r *Registry) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	return r.archives(ctx, p, v, r.semaphore())
}

// ArchivesAt lists the packages of several versions, concurrently: their
// download-metadata requests share one bound.
func (r *Registry) ArchivesAt(ctx context.Context, p backends.Provider, versions []backends.Version) ([]backends.Archive, error) {
	sem := r.semaphore()
	return backends.ArchivesConcurrently(ctx, versions, cap(sem), func(ctx context.Context, v backends.Version) ([]backends.Archive, error) {
		return r.archives(ctx, p, v, sem)
	})
}

func (r *Registry) semaphore() chan struct{} {
	n := r.opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	return make(chan struct{}, n)
}

func (r *Registry) archives(ctx context.Context, p backends.Provider, v backends.Version, sem chan struct{}) ([]backends.Archive, error) {
	vi, err := r.listedVersion(ctx, p, v)
	if err != nil {
		return nil, err
	}
	metas := make([]*downloadMeta, len(vi.platforms))
	g, gctx := errgroup.WithContext(ctx)
	for i, plat := range vi.platforms {
		g.Go(func() error {
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			defer func() { <-sem }()
			m, err := r.downloadMeta(gctx, p, v, plat)
			metas[i] = m
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []backends.Archive
	for _, m := range metas {
		if m == nil {
			continue // the registry lists the platform but has no download for it
		}
		a, err := r.authenticate(ctx, m)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// authenticate checks one package's metadata against its version's signed
// SHA256SUMS and builds its Archive.
func (r *Registry) authenticate(ctx context.Context, m *downloadMeta) (backends.Archive, error) {
	pkg := m.pkg
	ss, err := r.signedSums(ctx, m)
	if err != nil {
		return backends.Archive{}, err
	}
	want, listed := ss.lines[m.filename]
	switch {
	case !listed:
		return backends.Archive{}, r.errorf("%s: SHA256SUMS (%s) has no line for %s", short(pkg), httpclient.RedactURL(m.sumsURL), m.filename)
	case want != m.shasum:
		return backends.Archive{}, r.errorf("%s: SHA256SUMS (%s) lists %s for %s, but the download metadata says %s", short(pkg), httpclient.RedactURL(m.sumsURL), want, m.filename, m.shasum)
	}
	zh := hashing.Hash("zh:" + m.shasum)
	var evidence []hashing.Evidence
	if ss.prov != nil {
		evidence = append(evidence, hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceRegistrySigned, Detail: ss.signer.String()}, Hashes: []hashing.Hash{zh}})
	} else {
		evidence = append(evidence, hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceRegistry, Detail: "shasum (" + r.host + " publishes no signing keys)"}, Hashes: []hashing.Hash{zh}})
	}
	if len(m.packageHashes) > 0 {
		evidence = append(evidence, hashing.Evidence{Source: hashing.Source{Kind: hashing.SourceRegistry, Detail: "packages"}, Hashes: m.packageHashes})
	}
	r.mu.Lock()
	r.downloads[pkg.Key()] = download{url: m.downloadURL, shasum: m.shasum, size: m.size}
	vk := versionKey{pkg.Provider, pkg.Version.String()}
	if r.bySums[vk] == nil {
		r.bySums[vk] = map[*signedSums]bool{}
	}
	r.bySums[vk][ss] = true
	r.mu.Unlock()
	return backends.Archive{Package: pkg, Layout: backends.Packed, Size: m.size, Evidence: evidence, Location: m.downloadURL.String()}, nil
}

// SignedHashes returns the zh: of every line of the SHA256SUMS that
// authenticated p's packages at v, every platform's (and any other file the
// release lists), as Terraform and OpenTofu record them in a lock file. The
// document is the one Archives fetched and checked; it is fetched (and
// checked) here when Archives was not called for v.
func (r *Registry) SignedHashes(ctx context.Context, p backends.Provider, v backends.Version) ([]hashing.Hash, error) {
	docs, err := r.sumsOf(ctx, p, v)
	if err != nil {
		return nil, err
	}
	var out []hashing.Hash
	for ss := range docs {
		for _, sum := range ss.lines {
			out = append(out, hashing.Hash("zh:"+sum))
		}
	}
	return hashing.SortUnique(out), nil
}

// Provenance returns the signed SHA256SUMS, its signature and the key that
// made it, for p at v: what authenticated its packages (Archives fetches
// and checks them when it has not run for v). A version the registry
// serves unsigned (registry.opentofu.org without keys) has none:
// backends.ErrNotFound.
func (r *Registry) Provenance(ctx context.Context, p backends.Provider, v backends.Version) (*provenance.Provenance, error) {
	docs, err := r.sumsOf(ctx, p, v)
	if err != nil {
		return nil, err
	}
	var found *provenance.Provenance
	for ss := range docs {
		if ss.prov == nil {
			continue
		}
		if found != nil && !found.Equal(ss.prov) {
			return nil, r.errorf("%s %s: the platforms' download metadata name different SHA256SUMS documents or signatures; which one is the release's cannot be told", p.ShortString(), v)
		}
		found = ss.prov
	}
	if found == nil {
		return nil, r.errorf("%s %s: the registry publishes no signature for it: %w", p.ShortString(), v, backends.ErrNotFound)
	}
	return found, nil
}

// sumsOf returns the SHA256SUMS documents that authenticated p's packages
// at v, fetching and checking them when Archives has not.
func (r *Registry) sumsOf(ctx context.Context, p backends.Provider, v backends.Version) (map[*signedSums]bool, error) {
	vk := versionKey{p, v.String()}
	r.mu.Lock()
	docs := r.bySums[vk]
	r.mu.Unlock()
	if docs != nil {
		return docs, nil
	}
	if _, err := r.Archives(ctx, p, v); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bySums[vk], nil
}

// StatedHashes reads the download metadata of one platform of p at v and,
// when the registry sends OpenTofu 1.12's packages field, returns the hashes
// it lists for every platform the version offers: one request for the
// version (and its SHA256SUMS and signature, checked as Archives checks
// them), no archive. Each platform's zh: must be the signed SHA256SUMS line
// of that platform's zip, so the h1: listed beside it comes from the same
// registry that signs it; a platform whose zh: is not signed is an error for
// the version. A registry without the field gives nil.
func (r *Registry) StatedHashes(ctx context.Context, p backends.Provider, v backends.Version) (map[backends.Platform][]hashing.Hash, error) {
	vi, err := r.listedVersion(ctx, p, v)
	if err != nil {
		return nil, err
	}
	for _, plat := range vi.platforms {
		m, err := r.downloadMeta(ctx, p, v, plat)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue // listed without a download: try the next platform
		}
		if m.packages == nil {
			return nil, nil
		}
		if _, err := r.authenticate(ctx, m); err != nil {
			return nil, err
		}
		return r.signedPackages(ctx, m, vi.platforms)
	}
	return nil, nil
}

// signedPackages is the packages field of m for the platforms offered, each
// platform's zh: checked against the version's signed SHA256SUMS.
func (r *Registry) signedPackages(ctx context.Context, m *downloadMeta, offered []backends.Platform) (map[backends.Platform][]hashing.Hash, error) {
	ss, err := r.signedSums(ctx, m)
	if err != nil {
		return nil, err
	}
	out := map[backends.Platform][]hashing.Hash{}
	for _, plat := range offered {
		hs, ok := m.packages[plat]
		if !ok {
			continue
		}
		pkg := backends.Package{Provider: m.pkg.Provider, Version: m.pkg.Version, Platform: plat}
		for _, h := range hs {
			if h.Scheme() == hashing.SchemeZip && !ss.signs(plat, h.Value()) {
				return nil, r.errorf("%s: packages lists %s, which the signed SHA256SUMS (%s) does not list for a %s zip", short(pkg), h, httpclient.RedactURL(m.sumsURL), plat)
			}
		}
		out[plat] = hs
	}
	return out, nil
}

// signs reports whether the document lists sum for a zip of plat (a file
// named ..._OS_ARCH.zip).
func (ss *signedSums) signs(plat backends.Platform, sum string) bool {
	for name, s := range ss.lines {
		if s == sum && strings.HasSuffix(name, "_"+plat.String()+".zip") {
			return true
		}
	}
	return false
}

// short names a package without its hostname, which the registry's name in
// every message already gives.
func short(p backends.Package) string {
	return fmt.Sprintf("%s %s %s", p.Provider.ShortString(), p.Version, p.Platform)
}
