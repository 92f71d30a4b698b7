package modules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sync"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
)

// ErrRedirectLoop is matched when redirects, or X-Terraform-Get
// indirections, lead back to a URL already visited.
var ErrRedirectLoop = httpclient.ErrRedirectLoop

// DefaultConcurrency bounds parallel download-location requests.
const DefaultConcurrency = 8

// Options configure a Registry.
type Options struct {
	// HTTP is the HTTP layer (TLS trust, limits); the zero value trusts the
	// system's roots.
	HTTP httpclient.Client
	// Credentials supplies the registry's bearer token. It rides to the
	// registry's own host and port over https only: on discovery, and on
	// API requests where modules.v1 is on that host; never to a modules.v1
	// elsewhere or over http, nor after a redirect leaves the host.
	Credentials backends.Credentials
	// Concurrency bounds parallel download-location requests; 0 means
	// DefaultConcurrency.
	Concurrency int
}

// Registry is a module registry (the Module Registry Protocol, found
// through service discovery at https://HOST/.well-known/terraform.json).
// It is safe for concurrent use.
type Registry struct {
	name string
	host string
	opts Options
	auth *httpclient.Auth

	mu   sync.Mutex
	base *url.URL // modules.v1, with a trailing slash
}

var _ Lister = (*Registry)(nil)

// NewRegistry returns a client for the registry at host (HOST[:PORT]);
// name is how messages call it, e.g. "registry://HOST".
func NewRegistry(name, host string, o Options) (*Registry, error) {
	h, err := backends.NormalizeHostname(host)
	if err != nil {
		return nil, fmt.Errorf("module registry %s: hostname %q: %w", name, host, err)
	}
	if name == "" {
		name = "registry://" + h
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return &Registry{name: name, host: h, opts: o, auth: httpclient.AuthFor(o.Credentials, h)}, nil
}

// String names the registry as the user wrote it.
func (r *Registry) String() string { return r.name }

// Host returns the registry's hostname in comparison form.
func (r *Registry) Host() string { return r.host }

// authHint says what to do about a refusal by the registry at base.
func (r *Registry) authHint(err error, base *url.URL) string {
	if !errors.Is(err, backends.ErrUnauthorized) {
		return ""
	}
	if r.auth == nil {
		return fmt.Sprintf(" (no token for %s: set %s or add a credentials block)", r.host, backends.TokenEnvName(r.host))
	}
	if base != nil && !r.auth.Allows(base) {
		return fmt.Sprintf(" (the token for %s is not sent to %s: a registry's token goes to its own host and port over https only)", r.host, httpclient.RedactURL(base))
	}
	return fmt.Sprintf(" (the token for %s was refused)", r.host)
}

// get fetches a registry document with the registry's token (sent where
// its rule allows).
func (r *Registry) get(ctx context.Context, u *url.URL) (*httpclient.Response, error) {
	return r.opts.HTTP.Get(ctx, u, r.auth, "application/json")
}

// baseURL discovers the modules.v1 endpoint once.
func (r *Registry) baseURL(ctx context.Context) (*url.URL, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.base != nil {
		return r.base, nil
	}
	svc, err := r.opts.HTTP.Discover(ctx, r.host, r.auth)
	if err != nil {
		return nil, fmt.Errorf("module registry %s: service discovery: %w%s", r.name, err, r.authHint(err, nil))
	}
	u, err := svc.Service(httpclient.ModulesV1)
	if err != nil {
		return nil, fmt.Errorf("module registry %s: service discovery: %w", r.name, err)
	}
	r.base = u
	return u, nil
}

// notFound words a 404 or 410 from the registry API briefly: the module or
// version does not exist, and which URL said so.
func notFound(err error) error {
	var se *httpclient.StatusError
	if errors.As(err, &se) {
		return fmt.Errorf("%w (GET %s answered %d)", backends.ErrNotFound, se.URL, se.Status)
	}
	return err
}

// endpoint builds NAMESPACE/NAME/SYSTEM/parts... relative to the base URL.
func endpoint(base *url.URL, m Module, parts ...string) *url.URL {
	rel := &url.URL{Path: path.Join(append([]string{m.Namespace, m.Name, m.System}, parts...)...)}
	return base.ResolveReference(rel)
}

type versionsDoc struct {
	Modules []struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	} `json:"modules"`
}

// Versions returns the version strings the registry lists for m, as listed
// (they may carry a "v" or be short; see Select).
func (r *Registry) Versions(ctx context.Context, m Module) ([]string, error) {
	base, err := r.baseURL(ctx)
	if err != nil {
		return nil, err
	}
	u := endpoint(base, m, "versions")
	resp, err := r.get(ctx, u)
	switch {
	case errors.Is(err, backends.ErrNotFound):
		return nil, fmt.Errorf("module registry %s: module %s: %w", r.name, m.Short(), notFound(err))
	case err != nil:
		return nil, fmt.Errorf("module registry %s: %s: list versions: %w%s", r.name, m.Short(), err, r.authHint(err, base))
	}
	var doc versionsDoc
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		return nil, fmt.Errorf("module registry %s: %s: list versions: GET %s: not a versions document: %v", r.name, m.Short(), httpclient.RedactURL(u), err)
	}
	if len(doc.Modules) == 0 {
		return nil, fmt.Errorf("module registry %s: %s: list versions: GET %s: invalid response: \"modules\" is empty", r.name, m.Short(), httpclient.RedactURL(u))
	}
	// Only the first entry counts, as for the clients.
	var out []string
	for _, v := range doc.Modules[0].Versions {
		out = append(out, v.Version)
	}
	return out, nil
}

type downloadDoc struct {
	Location               string `json:"location"`
	UseRegistryCredentials *bool  `json:"use_registry_credentials"`
}

// Location asks the registry where the package of m at v lives. The
// request uses the canonical version (no "v", three parts), as the clients
// send it, so a registry that lists "v1.2" must serve 1.2.0.
func (r *Registry) Location(ctx context.Context, m Module, v Version) (Location, error) {
	base, err := r.baseURL(ctx)
	if err != nil {
		return Location{}, err
	}
	u := endpoint(base, m, v.String(), "download")
	wrap := func(err error) error {
		return fmt.Errorf("module registry %s: %s %s: download location: %w", r.name, m.Short(), v, err)
	}
	resp, err := r.get(ctx, u)
	switch {
	case errors.Is(err, backends.ErrNotFound):
		return Location{}, wrap(fmt.Errorf("version %s: %w", v, notFound(err)))
	case err != nil:
		return Location{}, fmt.Errorf("%w%s", wrap(err), r.authHint(err, base))
	case resp.Status == http.StatusNoContent:
		loc, err := resolveIndirect(resp.Header.Get("X-Terraform-Get"), "X-Terraform-Get", u)
		if err != nil {
			return Location{}, wrap(err)
		}
		return loc, nil
	}
	var doc downloadDoc
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		return Location{}, wrap(fmt.Errorf("GET %s answered %d with a body that is not a JSON download document (%v); a registry that only sets X-Terraform-Get must answer 204 or send valid JSON", httpclient.RedactURL(u), resp.Status, err))
	}
	if doc.UseRegistryCredentials != nil {
		if doc.Location == "" {
			return Location{}, wrap(errors.New("the registry asked for direct download (use_registry_credentials) but gave no location"))
		}
		loc, err := resolveDirect(doc.Location, *doc.UseRegistryCredentials, u)
		if err != nil {
			return Location{}, wrap(err)
		}
		return loc, nil
	}
	raw, via := doc.Location, "body"
	if raw == "" {
		raw, via = resp.Header.Get("X-Terraform-Get"), "X-Terraform-Get"
	}
	loc, err := resolveIndirect(raw, via, u)
	if err != nil {
		return Location{}, wrap(err)
	}
	return loc, nil
}

// ListModule lists the versions of m that c selects, newest first, each
// with the location of its package (or the error asking for it).
func (r *Registry) ListModule(ctx context.Context, m Module, c backends.VersionConstraint) (Listings, error) {
	raw, err := r.Versions(ctx, m)
	if err != nil {
		return Listings{}, err
	}
	vs, skipped := Select(raw, c)
	out := Listings{}
	for _, s := range skipped {
		out.Warnings = append(out.Warnings, fmt.Sprintf("module registry %s: %s: version %q is not a version number; skipped, as the clients skip it", r.name, m.Short(), s))
	}
	rawOf := map[string]string{}
	for _, s := range raw {
		if v, err := ParseVersion(s); err == nil {
			if _, ok := rawOf[v.String()]; !ok {
				rawOf[v.String()] = s
			}
		}
	}
	out.Items = make([]Listing, len(vs))
	sem := make(chan struct{}, r.opts.Concurrency)
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			it := Listing{Module: m, Version: v, Listed: rawOf[v.String()]}
			loc, err := r.Location(ctx, m, v)
			if err != nil {
				it.Err = err
			} else {
				it.Location = loc.String()
				it.Source = &loc
			}
			out.Items[i] = it
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Listings{}, err
	}
	return out, nil
}
