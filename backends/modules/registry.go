package modules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/tfmirror/tfmirror/backends"
)

// Credentials supplies bearer tokens by registry host (comparison form).
// backends.TokenMap and the clients' TF_TOKEN_* variables fit it.
type Credentials interface {
	Token(host string) (token string, ok bool)
}

// DefaultConcurrency bounds parallel download-location requests.
const DefaultConcurrency = 8

// apiTimeout bounds one registry API request (discovery, versions,
// download location): small JSON documents, never package bytes.
const apiTimeout = 60 * time.Second

// maxAPIBody caps the registry documents read into memory.
const maxAPIBody = 8 << 20

// Options configure a Registry.
type Options struct {
	// HTTP is the client (TLS trust, proxies); nil: the system's roots. Its
	// redirect policy is replaced by CheckRedirect.
	HTTP *http.Client
	// Credentials supplies the registry's bearer token, sent on discovery
	// and API requests to the registry only.
	Credentials Credentials
	// Concurrency bounds parallel download-location requests; 0 means
	// DefaultConcurrency.
	Concurrency int
}

// Registry is a module registry (the Module Registry Protocol, found
// through service discovery at https://HOST/.well-known/terraform.json).
// It is safe for concurrent use.
type Registry struct {
	name   string
	host   string
	opts   Options
	client *http.Client

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
	return &Registry{name: name, host: h, opts: o, client: WithRedirectPolicy(o.HTTP)}, nil
}

// String names the registry as the user wrote it.
func (r *Registry) String() string { return r.name }

// Host returns the registry's hostname in comparison form.
func (r *Registry) Host() string { return r.host }

func (r *Registry) tokenHint() string {
	return "set " + tokenEnvName(r.host) + " or a credentials block for " + r.host
}

// tokenEnvName is the TF_TOKEN_ variable the clients read for host: "-"
// written as "__" and "." as "_".
func tokenEnvName(host string) string {
	h := strings.ReplaceAll(host, "-", "__")
	return "TF_TOKEN_" + strings.ReplaceAll(h, ".", "_")
}

// get sends an authenticated GET for a registry document and returns the
// response; the caller closes its body.
func (r *Registry) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "tfmirror")
	if r.opts.Credentials != nil {
		if tok, ok := r.opts.Credentials.Token(r.host); ok {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, NetErr(ctx, err)
	}
	return resp, nil
}

// baseURL discovers the modules.v1 endpoint once.
func (r *Registry) baseURL(ctx context.Context) (*url.URL, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.base != nil {
		return r.base, nil
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	disco := &url.URL{Scheme: "https", Host: r.host, Path: "/.well-known/terraform.json"}
	resp, err := r.get(ctx, disco)
	if err != nil {
		return nil, fmt.Errorf("module registry %s: service discovery: %w", r.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("module registry %s: service discovery: %w", r.name, StatusErr(resp, r.tokenHint()))
	}
	var doc map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAPIBody)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("module registry %s: service discovery: %s is not a JSON object: %v", r.name, disco, err)
	}
	raw, ok := doc["modules.v1"].(string)
	if !ok || raw == "" {
		return nil, fmt.Errorf("module registry %s: %s offers no module registry (no \"modules.v1\" in its discovery document)", r.name, r.host)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("module registry %s: discovery document: modules.v1 %q is not a URL: %v", r.name, raw, err)
	}
	// Relative to the document's final URL, as service discovery defines.
	u = resp.Request.URL.ResolveReference(u)
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("module registry %s: discovery document: modules.v1 %q must be an http(s) URL", r.name, raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	r.base = u
	return u, nil
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
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := endpoint(base, m, "versions")
	resp, err := r.get(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("module registry %s: %s: list versions: %w", r.name, m.Short(), err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, fmt.Errorf("module registry %s: module %s: %w (GET %s answered 404)", r.name, m.Short(), backends.ErrNotFound, u.Redacted())
	default:
		return nil, fmt.Errorf("module registry %s: %s: list versions: %w", r.name, m.Short(), StatusErr(resp, r.tokenHint()))
	}
	var doc versionsDoc
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAPIBody)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("module registry %s: %s: list versions: GET %s: not a versions document: %v", r.name, m.Short(), u.Redacted(), err)
	}
	if len(doc.Modules) == 0 {
		return nil, fmt.Errorf("module registry %s: %s: list versions: GET %s: invalid response: \"modules\" is empty", r.name, m.Short(), u.Redacted())
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
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := endpoint(base, m, v.String(), "download")
	wrap := func(err error) error {
		return fmt.Errorf("module registry %s: %s %s: download location: %w", r.name, m.Short(), v, err)
	}
	resp, err := r.get(ctx, u)
	if err != nil {
		return Location{}, wrap(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody))
		if err != nil {
			return Location{}, wrap(backends.Transient(err))
		}
		var doc downloadDoc
		if err := json.Unmarshal(body, &doc); err != nil {
			return Location{}, wrap(fmt.Errorf("GET %s answered 200 with a body that is not a JSON download document (%v); a registry that only sets X-Terraform-Get must answer 204 or send valid JSON", u.Redacted(), err))
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
	case http.StatusNoContent:
		loc, err := resolveIndirect(resp.Header.Get("X-Terraform-Get"), "X-Terraform-Get", u)
		if err != nil {
			return Location{}, wrap(err)
		}
		return loc, nil
	case http.StatusNotFound:
		return Location{}, wrap(fmt.Errorf("version %s: %w (GET %s answered 404)", v, backends.ErrNotFound, u.Redacted()))
	}
	return Location{}, wrap(StatusErr(resp, r.tokenHint()))
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
