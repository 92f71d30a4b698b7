package modoci

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/ociclient"
	"github.com/tfmirror/tfmirror/backends/readers"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/hashing/regular"
)

// ArtifactType is the artifactType OpenTofu requires of a module package
// manifest, and LayerType the one layer media type it reads.
const (
	ArtifactType = "application/vnd.opentofu.modulepkg"
	LayerType    = "archive/zip"
)

// maxManifest is OpenTofu's limit on a module manifest's size.
const maxManifest = 4 << 20

// ErrNotModule: a tag holds something OpenTofu would not install as a
// module package.
var ErrNotModule = errors.New("not an OpenTofu module package")

// Options configure a Store.
type Options struct {
	// PlainHTTP talks HTTP instead of HTTPS (local test registries).
	PlainHTTP bool
	// Insecure skips TLS certificate verification.
	Insecure bool
	// RootCAs, when set, replaces the system's roots.
	RootCAs *x509.CertPool
	// HTTP, when set, is the client under the registry authentication
	// (its transport carries the TLS settings); RootCAs and Insecure are
	// then ignored.
	HTTP *http.Client
	// Credentials, when set, replaces those container tools use (see
	// ociclient.DefaultCredentials).
	Credentials credentials.Store
	// Concurrency bounds parallel manifest requests when listing; 0 means 8.
	Concurrency int
	// Debug, when set, gets one line per request attempt (httpclient.Wrap).
	Debug io.Writer
}

// Store is a set of OCI repositories holding module packages. It is safe
// for concurrent use.
type Store struct {
	name   string
	tmpl   *modules.Template
	client *auth.Client
	opts   Options
}

var (
	_ modules.Writer   = (*Store)(nil)
	_ modules.Resolver = (*Store)(nil)
)

// Open returns a Store for oci://REGISTRY/TEMPLATE (see modules.Template);
// name is the place as the user wrote it.
func Open(name, template string, o Options) (*Store, error) {
	tmpl, err := modules.ParseTemplate(template)
	if err != nil {
		return nil, fmt.Errorf("place %s: %w", name, err)
	}
	store := o.Credentials
	if store == nil {
		if store, err = ociclient.DefaultCredentials(); err != nil {
			return nil, fmt.Errorf("place %s: %w", name, err)
		}
	}
	// httpclient.Wrap sits under oras's retries: a line per try in the
	// debug log, and a certificate not trusted reads as it does for every
	// kind of place.
	var hc http.Client
	if o.HTTP != nil {
		hc = *o.HTTP
		hc.Transport = httpclient.Wrap(hc.Transport, o.Debug)
	} else {
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.TLSClientConfig = &tls.Config{
			MinVersion:         tls.VersionTLS12,
			RootCAs:            o.RootCAs,
			InsecureSkipVerify: o.Insecure, // opt-in, for registries with self-signed certificates
		}
		hc.Transport = ociclient.Transport(base, ociclient.DefaultTimeout, ociclient.Retry(0, 0), o.Debug)
	}
	client := &auth.Client{Client: &hc, Cache: auth.NewCache(), Credential: credentials.Credential(store)}
	client.SetUserAgent("tfmirror")
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if name == "" {
		name = template
	}
	return &Store{name: name, tmpl: tmpl, client: client, opts: o}, nil
}

// String names the place as the user wrote it.
func (s *Store) String() string { return s.name }

// Template returns the repository template.
func (s *Store) Template() *modules.Template { return s.tmpl }

// Repository returns the repository name m maps to.
func (s *Store) Repository(m modules.Module) (string, error) { return s.tmpl.Repository(m) }

func (s *Store) repo(m modules.Module) (*remote.Repository, string, error) {
	name, err := s.tmpl.Repository(m)
	if err != nil {
		return nil, "", fmt.Errorf("place %s: %w", s.name, err)
	}
	r, err := remote.NewRepository(s.tmpl.Registry + "/" + name)
	if err != nil {
		return nil, "", fmt.Errorf("place %s: %w", s.name, err)
	}
	r.Client = s.client
	r.PlainHTTP = s.opts.PlainHTTP
	return r, name, nil
}

// opError names the place, repository and package, and classifies what
// the registry answered against the backends sentinels.
func (s *Store) opError(op, repo, what string, err error) error {
	err = ociclient.PlainDetails(err)
	var resp *errcode.ErrorResponse
	kind := error(nil)
	hint := ""
	transient := false
	switch {
	case errors.As(err, &resp):
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			kind, hint = backends.ErrUnauthorized, "log in with `docker login "+s.tmpl.Registry+"` or `oras login`, or set REGISTRY_AUTH_FILE"
		case resp.StatusCode == http.StatusNotFound:
			kind = backends.ErrNotFound
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			transient = true
		}
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		kind, hint = backends.ErrUnauthorized, "the registry wants credentials: log in with `docker login "+s.tmpl.Registry+"` or `oras login`, or set REGISTRY_AUTH_FILE"
	case errors.Is(err, errdef.ErrNotFound):
		kind = backends.ErrNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, ErrNotModule), errors.Is(err, backends.ErrConflict):
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			transient = true
		}
	}
	msg := fmt.Sprintf("oci %s: repository %s", s.name, repo)
	if what != "" {
		msg += ": " + what
	}
	msg += ": " + op
	out := fmt.Errorf("%s: %w", msg, err)
	if kind != nil && !errors.Is(err, kind) {
		out = fmt.Errorf("%s: %w: %w", msg, kind, err)
	}
	if hint != "" {
		out = fmt.Errorf("%w; %s", out, hint)
	}
	if transient {
		out = backends.Transient(out)
	}
	return out
}

// held is what a tag holds, checked as OpenTofu checks it.
type held struct {
	desc     ocispec.Descriptor // the manifest
	manifest ocispec.Manifest
	layer    ocispec.Descriptor
}

// inspect resolves a tag and reads its manifest with OpenTofu's checks.
// A missing tag gives (nil, nil).
func (s *Store) inspect(ctx context.Context, r *remote.Repository, ref string) (*held, error) {
	desc, err := r.Resolve(ctx, ref)
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return s.read(ctx, r, desc)
}

func (s *Store) read(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor) (*held, error) {
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("%w: %s is a %s, not an OCI image manifest", ErrNotModule, desc.Digest, desc.MediaType)
	}
	if desc.Size > maxManifest {
		return nil, fmt.Errorf("%w: manifest %s is %d bytes, more than OpenTofu's %d", ErrNotModule, desc.Digest, desc.Size, maxManifest)
	}
	rc, err := r.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }() // read only
	b, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", desc.Digest, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %v", ErrNotModule, desc.Digest, err)
	}
	if m.MediaType != desc.MediaType {
		return nil, fmt.Errorf("%w: manifest %s states media type %q", ErrNotModule, desc.Digest, m.MediaType)
	}
	if m.ArtifactType != ArtifactType {
		return nil, fmt.Errorf("%w: manifest %s has artifactType %q, want %q", ErrNotModule, desc.Digest, m.ArtifactType, ArtifactType)
	}
	h := &held{desc: desc, manifest: m}
	n := 0
	for _, l := range m.Layers {
		if l.MediaType == LayerType {
			h.layer = l
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("%w: manifest %s has %d %s layers, want exactly one", ErrNotModule, desc.Digest, n, LayerType)
	}
	return h, nil
}

// sameContent reports whether what a tag holds is pkg's contents: the
// same zip, or (when the zip was encoded differently, say by another
// tfmirror build) the same files by h1.
func sameContent(h *held, pkg *modules.Package) (hashing.Check, bool) {
	src := hashing.Source{Kind: hashing.SourceOCIDigest, Detail: h.desc.Digest.String()}
	if h.layer.Digest.String() == pkg.Digest() {
		return hashing.Check{Source: src, Scheme: hashing.SchemeZip, Status: hashing.Match, Want: []hashing.Hash{pkg.Sums.ZH}, Got: pkg.Sums.ZH}, true
	}
	if h1 := h.manifest.Annotations[modules.AnnotationH1]; h1 != "" && hashing.Hash(h1) == pkg.Sums.H1 {
		return hashing.Check{Source: hashing.Source{Kind: hashing.SourceOCIDigest, Detail: h.desc.Digest.String() + " " + modules.AnnotationH1}, Scheme: hashing.SchemeH1, Status: hashing.Match, Want: []hashing.Hash{hashing.Hash(h1)}, Got: pkg.Sums.H1}, true
	}
	return hashing.Check{}, false
}

// Put stores pkg under the tag for its version. When the tag already holds
// the same contents nothing is uploaded; when it holds something else the
// result is a conflict unless force. Blobs the repository already has are
// not sent again. After the push the tag is resolved again and must name
// the manifest just written.
func (s *Store) Put(ctx context.Context, pkg *modules.Package, force bool, progress func(int64)) (modules.Stored, error) {
	r, repoName, err := s.repo(pkg.Module)
	if err != nil {
		return modules.Stored{}, err
	}
	tag := modules.Tag(pkg.Version)
	label := pkg.Label()
	stored := func(d digest.Digest) modules.Stored {
		return modules.Stored{
			Address:    modules.OCIAddress(s.tmpl.Registry, repoName, pkg.Subdir, d.String(), ""),
			TagAddress: modules.OCIAddress(s.tmpl.Registry, repoName, pkg.Subdir, "", tag),
		}
	}
	h, err := s.inspect(ctx, r, tag)
	switch {
	case err != nil && !errors.Is(err, ErrNotModule):
		return modules.Stored{}, s.opError("resolve tag "+tag, s.tmpl.Registry+"/"+repoName, label, err)
	case err != nil && !force:
		return modules.Stored{}, s.opError("tag "+tag, s.tmpl.Registry+"/"+repoName, label, fmt.Errorf("%w: it holds something else (%w)", backends.ErrConflict, err))
	case h != nil:
		if c, ok := sameContent(h, pkg); ok {
			st := stored(h.desc.Digest)
			st.Present, st.Checks = true, []hashing.Check{c}
			// The package's subdir is what the mirror recorded, should this
			// build have found it elsewhere.
			if sub, ok := h.manifest.Annotations[modules.AnnotationSubdir]; ok && sub != pkg.Subdir {
				st.Address = modules.OCIAddress(s.tmpl.Registry, repoName, sub, h.desc.Digest.String(), "")
				st.TagAddress = modules.OCIAddress(s.tmpl.Registry, repoName, sub, "", tag)
			}
			return st, nil
		}
		if !force {
			return modules.Stored{}, s.opError("tag "+tag, s.tmpl.Registry+"/"+repoName, label, fmt.Errorf("%w: it holds layer %s (h1 %s), this build is %s (%s)",
				backends.ErrConflict, h.layer.Digest, orNone(h.manifest.Annotations[modules.AnnotationH1]), pkg.Digest(), pkg.Sums.H1))
		}
	}

	layer, sent, err := s.pushBlobs(ctx, r, repoName, pkg, progress)
	if err != nil {
		return modules.Stored{}, err
	}
	config := ocispec.DescriptorEmptyJSON
	manifest := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       config,
		Layers:       []ocispec.Descriptor{layer},
		Annotations:  annotations(pkg),
	}
	b, err := json.Marshal(manifest)
	if err != nil {
		return modules.Stored{}, err
	}
	mdesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b)
	if err := r.PushReference(ctx, mdesc, bytes.NewReader(b), tag); err != nil {
		return modules.Stored{}, s.opError("push manifest "+tag, s.tmpl.Registry+"/"+repoName, label, err)
	}
	// Read back what the tag names now, as a client will.
	got, err := s.inspect(ctx, r, tag)
	if err != nil || got == nil {
		if err == nil {
			err = errors.New("the tag is missing right after the push")
		}
		return modules.Stored{}, s.opError("verify tag "+tag, s.tmpl.Registry+"/"+repoName, label, err)
	}
	if got.desc.Digest != mdesc.Digest || got.layer.Digest != layer.Digest {
		return modules.Stored{}, s.opError("verify tag "+tag, s.tmpl.Registry+"/"+repoName, label,
			fmt.Errorf("after the push the tag names manifest %s (layer %s), not %s (layer %s): another writer moved it?", got.desc.Digest, got.layer.Digest, mdesc.Digest, layer.Digest))
	}
	st := stored(mdesc.Digest)
	st.Bytes = sent
	st.Checks = []hashing.Check{{Source: hashing.Source{Kind: hashing.SourceOCIDigest, Detail: mdesc.Digest.String()}, Scheme: hashing.SchemeZip, Status: hashing.Match, Want: []hashing.Hash{pkg.Sums.ZH}, Got: hashing.Hash("zh:" + got.layer.Digest.Encoded())}}
	return st, nil
}

// pushBlobs sends the blobs pkg's manifest names, the zip layer and the
// empty config, each only when the repository lacks it, and returns the
// layer's descriptor and the bytes sent. It is a step of its own because a
// registry takes a manifest only once every blob it names is there.
func (s *Store) pushBlobs(ctx context.Context, r *remote.Repository, repoName string, pkg *modules.Package, progress func(int64)) (ocispec.Descriptor, int64, error) {
	layer := ocispec.Descriptor{
		MediaType:   LayerType,
		Digest:      digest.Digest(pkg.Digest()),
		Size:        pkg.Size,
		Annotations: map[string]string{modules.AnnotationTitle: fmt.Sprintf("%s-%s-%s.zip", pkg.Module.Name, pkg.Module.System, pkg.Version)},
	}
	var sent int64
	if ok, err := r.Blobs().Exists(ctx, layer); err != nil {
		return ocispec.Descriptor{}, 0, s.opError("check blob "+layer.Digest.String(), s.tmpl.Registry+"/"+repoName, pkg.Label(), err)
	} else if !ok {
		f, err := regular.Open(pkg.Path)
		if err != nil {
			return ocispec.Descriptor{}, 0, err
		}
		err = r.Blobs().Push(ctx, layer, readers.OnRead(f, func(n int64) {
			sent += n
			if progress != nil {
				progress(n)
			}
		}))
		_ = f.Close() // read only: the push's error follows
		if err != nil {
			return ocispec.Descriptor{}, 0, s.opError("push layer "+layer.Digest.String(), s.tmpl.Registry+"/"+repoName, pkg.Label(), err)
		}
	}
	config := ocispec.DescriptorEmptyJSON
	if ok, err := r.Blobs().Exists(ctx, config); err != nil {
		return ocispec.Descriptor{}, 0, s.opError("check config blob", s.tmpl.Registry+"/"+repoName, pkg.Label(), err)
	} else if !ok {
		if err := r.Blobs().Push(ctx, config, bytes.NewReader(config.Data)); err != nil {
			return ocispec.Descriptor{}, 0, s.opError("push config blob", s.tmpl.Registry+"/"+repoName, pkg.Label(), err)
		}
	}
	return layer, sent, nil
}

func orNone(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

// annotations records where the package came from; only content-derived
// values, so equal packages give equal manifests.
func annotations(pkg *modules.Package) map[string]string {
	a := map[string]string{
		modules.AnnotationAddress: pkg.Module.String(),
		modules.AnnotationVersion: pkg.Version.String(),
		modules.AnnotationH1:      string(pkg.Sums.H1),
	}
	if src := SafeSource(pkg.Source); src != "" {
		a[modules.AnnotationSource] = src
	}
	if pkg.Revision != "" {
		a[modules.AnnotationRevision] = pkg.Revision
	}
	if pkg.Subdir != "" {
		a[modules.AnnotationSubdir] = pkg.Subdir
	}
	return a
}

// SafeSource is a location fit to publish: without user information, and
// with only the query arguments that say what was fetched (ref, depth,
// archive), since others may be access tokens (signed URLs).
func SafeSource(src string) string {
	prefix := ""
	if i := strings.Index(src, "::"); i > 0 && !strings.Contains(src[:i], "/") {
		prefix, src = src[:i+2], src[i+2:]
	}
	base, rawQuery, hasQuery := strings.Cut(src, "?")
	if u, err := url.Parse(base); err == nil && u.User != nil {
		u.User = nil
		base = u.String()
	} else if err != nil && strings.Contains(base, "://") {
		return ""
	}
	if hasQuery {
		// Pairs are kept as written: decoding and encoding again would
		// change "+" and escapes.
		var keep []string
		for _, kv := range strings.Split(rawQuery, "&") {
			switch k, _, _ := strings.Cut(kv, "="); k {
			case "ref", "depth", "archive":
				keep = append(keep, kv)
			}
		}
		if len(keep) > 0 {
			base += "?" + strings.Join(keep, "&")
		}
	}
	return prefix + base
}

// tags lists the version tags of m's repository; other tags are returned
// as warnings.
func (s *Store) tags(ctx context.Context, r *remote.Repository, repoName string, m modules.Module) (map[string]modules.Version, []string, error) {
	vs := map[string]modules.Version{}
	var warnings []string
	err := r.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			if v, ok := modules.VersionFromTag(t); ok {
				vs[t] = v
			} else if t != "latest" {
				warnings = append(warnings, fmt.Sprintf("oci %s: repository %s: tag %q is not a version; skipped", s.name, repoName, t))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, s.opError("list tags", s.tmpl.Registry+"/"+repoName, m.String(), err)
	}
	return vs, warnings, nil
}

// ListModule lists the versions of m the repository holds as tags (those c
// selects, newest first), each with its digest-pinned address.
func (s *Store) ListModule(ctx context.Context, m modules.Module, c backends.VersionConstraint) (modules.Listings, error) {
	r, repoName, err := s.repo(m)
	if err != nil {
		return modules.Listings{}, err
	}
	byTag, warnings, err := s.tags(ctx, r, repoName, m)
	if err != nil {
		return modules.Listings{}, err
	}
	all := make([]modules.Version, 0, len(byTag))
	for _, v := range byTag {
		all = append(all, v)
	}
	selected := c.Filter(all)
	out := modules.Listings{Warnings: warnings, Items: make([]modules.Listing, len(selected))}
	sem := make(chan struct{}, s.opts.Concurrency)
	var wg sync.WaitGroup
	for i, v := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tag := modules.Tag(v)
			it := modules.Listing{Module: m, Version: v, Listed: tag}
			h, err := s.inspect(ctx, r, tag)
			if err == nil && h == nil {
				err = fmt.Errorf("tag %s vanished: %w", tag, backends.ErrNotFound)
			}
			if err != nil {
				it.Err = s.opError("read "+tag, s.tmpl.Registry+"/"+repoName, m.String()+" "+v.String(), err)
			} else {
				it.Digest = h.desc.Digest.String()
				it.SHA256, it.Revision = h.layer.Digest.Encoded(), h.manifest.Annotations[modules.AnnotationRevision]
				it.Location = modules.OCIAddress(s.tmpl.Registry, repoName, h.manifest.Annotations[modules.AnnotationSubdir], it.Digest, "")
			}
			out.Items[i] = it
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return modules.Listings{}, err
	}
	sort.SliceStable(out.Warnings, func(i, j int) bool { return out.Warnings[i] < out.Warnings[j] })
	return out, nil
}

// Resolve picks the newest version of m the repository holds that c
// selects (the zero constraint: the newest that is not a prerelease, as
// OpenTofu picks without a version argument) and returns its address.
func (s *Store) Resolve(ctx context.Context, m modules.Module, c backends.VersionConstraint) (modules.Resolved, error) {
	r, repoName, err := s.repo(m)
	if err != nil {
		return modules.Resolved{}, err
	}
	byTag, _, err := s.tags(ctx, r, repoName, m)
	if err != nil {
		return modules.Resolved{}, err
	}
	all := make([]modules.Version, 0, len(byTag))
	for _, v := range byTag {
		all = append(all, v)
	}
	if c.IsZero() {
		var nonPre []modules.Version
		for _, v := range all {
			if v.Prerelease() == "" {
				nonPre = append(nonPre, v)
			}
		}
		all = nonPre
	}
	selected := c.Filter(all)
	if len(selected) == 0 {
		what := "no version"
		if !c.IsZero() {
			what = "no version matching " + c.String()
		}
		return modules.Resolved{}, fmt.Errorf("oci %s: repository %s: %s: %s is mirrored (%d version tags): %w", s.name, s.tmpl.Registry+"/"+repoName, m, what, len(byTag), backends.ErrNotFound)
	}
	v := selected[0]
	tag := modules.Tag(v)
	h, err := s.inspect(ctx, r, tag)
	if err == nil && h == nil {
		err = fmt.Errorf("tag %s vanished: %w", tag, backends.ErrNotFound)
	}
	if err != nil {
		return modules.Resolved{}, s.opError("read "+tag, s.tmpl.Registry+"/"+repoName, m.String()+" "+v.String(), err)
	}
	return modules.Resolved{
		Version: v, Registry: s.tmpl.Registry, Repository: repoName,
		Digest: h.desc.Digest.String(), Tag: tag, Subdir: h.manifest.Annotations[modules.AnnotationSubdir],
	}, nil
}
