package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/oci/push"
	"github.com/tfmirror/tfmirror/backends/ocitemplate"
	"github.com/tfmirror/tfmirror/hashing"
)

// fetchParallelism bounds the platform manifests fetched at once for one
// version.
const fetchParallelism = 8

// Repository is where a provider lives: a registry and a repository in
// it, as the repository template resolves it.
type Repository = ocitemplate.Repository

// Mirror is a provider mirror in OCI registries, addressed by a template.
type Mirror struct {
	backends.WarningLog

	name   string
	tmpl   *ocitemplate.Template
	opts   Options
	client *auth.Client

	mu       sync.Mutex
	repos    map[Repository]*remote.Repository
	tags     map[Repository]map[string]string // canonical version -> tag as listed
	problems map[backends.Provider][]backends.Problem

	w writeState
}

var (
	_ backends.Writer  = (*Mirror)(nil)
	_ backends.Warner  = (*Mirror)(nil)
	_ backends.Auditor = (*Mirror)(nil)

	_ backends.StatedHashLister = (*Mirror)(nil)
)

// Open opens the OCI mirror described by template (an oci_mirror
// repository_template, e.g. registry.example.com/providers/${namespace}/${type}).
// name is how the user wrote the place. Nothing is contacted until a method
// needs the registry.
func Open(name, template string, o Options) (*Mirror, error) {
	t, err := ocitemplate.Parse(template)
	if err != nil {
		return nil, fmt.Errorf("oci mirror %s: %w", name, err)
	}
	client, err := newClient(o)
	if err != nil {
		return nil, fmt.Errorf("oci mirror %s: %w", name, err)
	}
	return &Mirror{
		name: name, tmpl: t, opts: o, client: client,
		repos:    map[Repository]*remote.Repository{},
		tags:     map[Repository]map[string]string{},
		problems: map[backends.Provider][]backends.Problem{},
		w:        newWriteState(),
	}, nil
}

func (m *Mirror) String() string { return m.name }

// Template returns the repository template.
func (m *Mirror) Template() *ocitemplate.Template { return m.tmpl }

// ClientConfig is the provider_installation block that installs ps from
// the mirror, with push's notes (implements backends.ClientConfigurer).
func (m *Mirror) ClientConfig(ps []backends.Provider) (string, []string) {
	return push.ConfigBlock(m.tmpl, ps, m.opts.PlainHTTP)
}

// Audit returns the problems found while reading p: tags and manifests
// OpenTofu would refuse. It reports what earlier calls read; it does not
// read the registry again.
func (m *Mirror) Audit(ctx context.Context, p backends.Provider) []backends.Problem {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]backends.Problem(nil), m.problems[p]...)
}

func (m *Mirror) warnf(format string, args ...any) {
	m.Warn(fmt.Sprintf("oci mirror %s: ", m.name) + fmt.Sprintf(format, args...))
}

// problem records something OpenTofu would refuse, as a warning for `ls` and
// a finding for `verify`.
func (m *Mirror) problem(pkg backends.Package, repo Repository, err error) {
	detail := fmt.Sprintf("oci mirror %s: repository %s: %s: %v", m.name, repo, pkgLabel(pkg), err)
	m.warnf("repository %s: %s: skipped: %v", repo, pkgLabel(pkg), err)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.problems[pkg.Provider] {
		if p.Detail == detail {
			return
		}
	}
	m.problems[pkg.Provider] = append(m.problems[pkg.Provider], backends.Problem{Package: pkg, Detail: detail})
}

func pkgLabel(pkg backends.Package) string {
	switch {
	case pkg.Version == nil:
		return pkg.Provider.String()
	case pkg.Platform == (backends.Platform{}):
		return pkg.Provider.String() + " " + pkg.Version.String()
	}
	return pkg.String()
}

// Repository returns where p lives in this mirror.
func (m *Mirror) Repository(p backends.Provider) (Repository, error) {
	r, err := m.tmpl.Resolve(p)
	if err != nil {
		return Repository{}, fmt.Errorf("oci mirror %s: %w", m.name, err)
	}
	return r, nil
}

// repo returns the oras client for p's repository, shared by every call.
func (m *Mirror) repo(p backends.Provider) (*remote.Repository, Repository, error) {
	addr, err := m.Repository(p)
	if err != nil {
		return nil, Repository{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.repos[addr]; ok {
		return r, addr, nil
	}
	r, err := remote.NewRepository(addr.String())
	if err != nil {
		return nil, Repository{}, fmt.Errorf("oci mirror %s: %s: %w", m.name, p, err)
	}
	r.Client = m.client
	r.PlainHTTP = m.opts.PlainHTTP
	m.repos[addr] = r
	return r, addr, nil
}

// CanList reports whether the template can be read backwards into
// providers, hosts included (sync.Cataloguer): it uses ${hostname},
// ${namespace} and ${type} as plain references and names one registry.
// Whether the registry offers its catalogue is known only by asking.
func (m *Mirror) CanList() bool {
	return m.tmpl.Listable()
}

// Providers lists the providers in the registry's catalogue, when the
// template can be read backwards (it uses ${hostname}, ${namespace} and
// ${type} as plain references and names one registry) and the registry
// offers its catalogue. Otherwise it returns backends.ErrNoCatalogue and the
// providers must be named.
func (m *Mirror) Providers(ctx context.Context) ([]backends.Provider, error) {
	if !m.CanList() {
		return nil, fmt.Errorf("oci mirror %s: the template %q cannot be mapped back from repository names: %w", m.name, m.tmpl, backends.ErrNoCatalogue)
	}
	host, _ := m.tmpl.FixedRegistry()
	reg, err := remote.NewRegistry(host)
	if err != nil {
		return nil, fmt.Errorf("oci mirror %s: %w", m.name, err)
	}
	reg.Client = m.client
	reg.PlainHTTP = m.opts.PlainHTTP
	var out []backends.Provider
	seen := map[backends.Provider]bool{}
	err = reg.Repositories(ctx, "", func(names []string) error {
		for _, n := range names {
			if p, ok := m.tmpl.Reverse(Repository{Registry: host, Name: n}); ok && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		var resp *errcode.ErrorResponse
		if errors.As(err, &resp) && resp.StatusCode < 500 {
			return nil, fmt.Errorf("oci mirror %s: registry %s does not list its repositories (HTTP %d): %w", m.name, host, resp.StatusCode, backends.ErrNoCatalogue)
		}
		return nil, classify(err, "list repositories", m.name, Repository{Registry: host}, "")
	}
	backends.SortProviders(out)
	return out, nil
}

// Versions lists the versions of p: the tags of its repository that parse as
// versions once "_" is read back as "+" (OCI tags cannot hold "+"). Other
// tags (latest, platform tags) are ignored, as OpenTofu ignores them.
func (m *Mirror) Versions(ctx context.Context, p backends.Provider) ([]backends.Version, error) {
	r, addr, err := m.repo(p)
	if err != nil {
		return nil, err
	}
	byCanon := map[string]string{}
	var out []backends.Version
	err = r.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			v, err := backends.ParseVersion(strings.ReplaceAll(tag, "_", "+"))
			if err != nil {
				continue
			}
			canon := v.String()
			if _, dup := byCanon[canon]; dup {
				continue
			}
			byCanon[canon] = tag
			if want := versionTag(v); want != tag {
				m.warnf("repository %s: tag %q reads as version %s, but OpenTofu looks it up as tag %q: add that tag", addr, tag, canon, want)
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, classify(err, "list tags", m.name, addr, p.String())
	}
	m.mu.Lock()
	m.tags[addr] = byCanon
	m.mu.Unlock()
	backends.SortVersionsNewestFirst(out)
	return out, nil
}

// versionTag is the tag OpenTofu resolves for v.
func versionTag(v backends.Version) string { return strings.ReplaceAll(v.String(), "+", "_") }

// tagFor returns the tag to resolve for v: the one listed, if Versions saw
// one, else the tag OpenTofu would ask for.
func (m *Mirror) tagFor(addr Repository, v backends.Version) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tags[addr][v.String()]; ok {
		return t
	}
	return versionTag(v)
}

// Archives lists p's packages at v: the platforms of the version's index,
// each with its zip layer's digest as zh: evidence. A version or platform
// OpenTofu would refuse is skipped, reported by Warnings and Audit.
func (m *Mirror) Archives(ctx context.Context, p backends.Provider, v backends.Version) ([]backends.Archive, error) {
	r, addr, err := m.repo(p)
	if err != nil {
		return nil, err
	}
	verPkg := backends.Package{Provider: p, Version: v}
	tag := m.tagFor(addr, v)
	desc, err := r.Resolve(ctx, tag)
	if err != nil {
		if isNotFound(err) {
			// No such version (or repository) holds no packages, as a
			// filesystem mirror's missing version directory holds none.
			return nil, nil
		}
		return nil, classify(err, fmt.Sprintf("resolve tag %q", tag), m.name, addr, pkgLabel(verPkg))
	}
	if err := checkIndexDescriptor(desc); err != nil {
		m.problem(verPkg, addr, fmt.Errorf("tag %q: %w", tag, err))
		return nil, nil
	}
	b, err := fetchManifest(ctx, r, desc)
	if err != nil {
		if isContentError(err) {
			m.problem(verPkg, addr, fmt.Errorf("tag %q: index %s: %w", tag, desc.Digest, err))
			return nil, nil
		}
		return nil, classify(err, "fetch index "+desc.Digest.String(), m.name, addr, pkgLabel(verPkg))
	}
	idx, err := parseIndex(b)
	if err != nil {
		m.problem(verPkg, addr, fmt.Errorf("tag %q: index %s: %w", tag, desc.Digest, err))
		return nil, nil
	}
	// The version of another provider the template maps here too is not
	// this provider's, whatever it holds.
	if owner, annotated, err := annotatedProvider(idx); err != nil || annotated && owner != p {
		if err == nil {
			err = fmt.Errorf("it is the index of %s (its %s annotation); the template maps both providers to this repository", owner, AnnotationProvider)
		}
		m.problem(verPkg, addr, fmt.Errorf("tag %q: index %s: %w: %v", tag, desc.Digest, ErrOtherProvider, err))
		return nil, nil
	}
	targets, skipped, err := providerTargets(idx)
	if err != nil {
		m.problem(verPkg, addr, fmt.Errorf("tag %q: index %s: %w", tag, desc.Digest, err))
		return nil, nil
	}
	for _, s := range skipped {
		m.problem(verPkg, addr, fmt.Errorf("tag %q: %w: %s", tag, ErrNotProvider, s))
	}

	out := make([]*backends.Archive, len(targets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchParallelism)
	for i, t := range targets {
		g.Go(func() error {
			pkg := backends.Package{Provider: p, Version: v, Platform: t.Platform}
			a, err := m.archive(gctx, r, addr, pkg, t.Desc)
			if err != nil {
				if isContentError(err) {
					m.problem(pkg, addr, err)
					return nil
				}
				return err
			}
			out[i] = a
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var as []backends.Archive
	for _, a := range out {
		if a != nil {
			as = append(as, *a)
		}
	}
	return as, nil
}

// StatedHashes returns each platform's layer digest at v as zh:, read from
// the version's index and manifests, as OpenTofu's providers lock
// -oci-mirror records them: no blob is fetched.
func (m *Mirror) StatedHashes(ctx context.Context, p backends.Provider, v backends.Version) (map[backends.Platform][]hashing.Hash, error) {
	as, err := m.Archives(ctx, p, v)
	if err != nil {
		return nil, err
	}
	return backends.StatedInListing(as), nil
}

// archive reads one platform's image manifest and describes its zip layer.
func (m *Mirror) archive(ctx context.Context, r *remote.Repository, addr Repository, pkg backends.Package, desc ocispec.Descriptor) (*backends.Archive, error) {
	b, err := fetchManifest(ctx, r, desc)
	if err != nil {
		if isContentError(err) {
			return nil, fmt.Errorf("manifest %s: %w", desc.Digest, err)
		}
		return nil, classify(err, "fetch manifest "+desc.Digest.String(), m.name, addr, pkg.String())
	}
	_, layer, err := parseImageManifest(b, pkg.Platform)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", desc.Digest, err)
	}
	zh, err := zipHash(layer.Digest)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w: %v", desc.Digest, ErrNotProvider, err)
	}
	return &backends.Archive{
		Package: pkg,
		Layout:  backends.Packed,
		Size:    layer.Size,
		Evidence: []hashing.Evidence{{
			Source: hashing.Source{Kind: hashing.SourceOCIDigest, Detail: addr.String() + "@" + desc.Digest.String()},
			Hashes: []hashing.Hash{zh},
		}},
		Location: addr.String() + "@" + layer.Digest.String(),
	}, nil
}

// isContentError reports errors about what the registry holds (OpenTofu
// would refuse it), as opposed to failures to reach it.
func isContentError(err error) bool {
	return errors.Is(err, ErrNotProvider) || errors.Is(err, ErrDigestMismatch)
}

// fetchManifest reads a manifest, refusing oversized ones before asking and
// content that does not match the descriptor's size and digest.
func fetchManifest(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor) ([]byte, error) {
	if err := checkManifestSize(desc); err != nil {
		return nil, err
	}
	rc, err := r.Manifests().Fetch(ctx, desc)
	if err != nil {
		if strings.Contains(err.Error(), "mismatch Content-Length") {
			// The registry's manifest is not the size the index says:
			// like a digest mismatch, a fault of the content (that
			// platform is skipped), not of the connection.
			return nil, fmt.Errorf("%w: %v", ErrDigestMismatch, err)
		}
		return nil, err
	}
	defer func() { _ = rc.Close() }() // read only
	b, err := content.ReadAll(rc, desc)
	if err != nil {
		if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: manifest %s: %v", ErrDigestMismatch, desc.Digest, err)
		}
		return nil, err
	}
	return b, nil
}

// Open streams an archive's zip from the registry. The stream fails, at the
// latest at its end, when the bytes do not match the layer's digest and
// size, so a consumer that reads to EOF never takes wrong bytes for right.
func (m *Mirror) Open(ctx context.Context, a backends.Archive) (io.ReadCloser, error) {
	r, addr, err := m.repo(a.Provider)
	if err != nil {
		return nil, err
	}
	repoPart, dgst, ok := strings.Cut(a.Location, "@")
	if !ok || repoPart != addr.String() {
		return nil, fmt.Errorf("oci mirror %s: %s: %w: no layer of repository %s recorded (listed elsewhere?)", m.name, a.Package, backends.ErrNotFound, addr)
	}
	desc := ocispec.Descriptor{MediaType: MediaTypeZip, Digest: digest.Digest(dgst), Size: a.Size}
	if _, err := zipHash(desc.Digest); err != nil {
		return nil, fmt.Errorf("oci mirror %s: %s: %w: %v", m.name, a.Package, ErrNotProvider, err)
	}
	if desc.Size < 0 {
		return nil, fmt.Errorf("oci mirror %s: %s: layer size unknown", m.name, a.Package)
	}
	rc, err := r.Blobs().Fetch(httpclient.Streaming(ctx), desc)
	if err != nil {
		if strings.Contains(err.Error(), "mismatch Content-Length") {
			return nil, fmt.Errorf("oci mirror %s: repository %s: %s: %w: blob %s: %v", m.name, addr, a.Package, ErrDigestMismatch, desc.Digest, err)
		}
		return nil, classify(err, "fetch blob "+desc.Digest.String(), m.name, addr, a.Package.String())
	}
	return &verifiedBlob{rc: rc, vr: content.NewVerifyReader(rc, desc), size: desc.Size, what: fmt.Sprintf("oci mirror %s: repository %s: %s: blob %s", m.name, addr, a.Package, desc.Digest)}, nil
}

// verifiedBlob reads a blob through oras's VerifyReader and turns a digest or
// size mismatch into an error at the end of the stream instead of io.EOF.
type verifiedBlob struct {
	rc   io.ReadCloser
	vr   *content.VerifyReader
	n    int64
	size int64
	what string
}

func (b *verifiedBlob) Read(p []byte) (int, error) {
	n, err := b.vr.Read(p)
	b.n += int64(n)
	if err == io.EOF {
		if verr := b.vr.Verify(); verr != nil {
			return n, fmt.Errorf("%s: %w: %v", b.what, ErrDigestMismatch, verr)
		}
		return n, io.EOF
	}
	if err == io.ErrUnexpectedEOF {
		// The stream ended before the layer's size: almost always a
		// dropped connection, worth another try (the job's retries bound
		// it; what arrived is never taken for the blob).
		return n, backends.Transient(fmt.Errorf("%s: the stream ended after %d of the layer's %d bytes: %w", b.what, b.n, b.size, err))
	}
	if err != nil {
		return n, fmt.Errorf("%s: %w", b.what, err)
	}
	return n, nil
}

func (b *verifiedBlob) Close() error { return b.rc.Close() }

// statusOf returns the HTTP status of a registry error response, or 0.
func statusOf(err error) int {
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		return resp.StatusCode
	}
	return 0
}

// isNotFound reports whether err says the thing asked for (a tag, or the
// repository itself) does not exist.
func isNotFound(err error) bool {
	if errors.Is(err, errdef.ErrNotFound) || errors.Is(err, backends.ErrNotFound) || statusOf(err) == http.StatusNotFound {
		return true
	}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		for _, e := range resp.Errors {
			if e.Code == errcode.ErrorCodeNameUnknown || e.Code == errcode.ErrorCodeManifestUnknown {
				return true
			}
		}
	}
	return false
}
