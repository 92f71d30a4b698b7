package httpclient

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Service IDs of the discovery document that tfmirror reads.
const (
	ProvidersV1 = "providers.v1"
	ModulesV1   = "modules.v1"
)

// ErrNoService is matched when a host's discovery document does not offer
// the service asked for.
var ErrNoService = errors.New("service not offered")

// Services is a host's service discovery document.
type Services struct {
	// URL is the document's final URL, against which relative service URLs
	// resolve.
	URL *url.URL
	doc map[string]any
}

// Discover reads https://HOST/.well-known/terraform.json, the Remote
// Service Discovery document of host (HOST[:PORT], comparison form), with
// auth's token (the host's own, which rides only to the host itself).
func (c *Client) Discover(ctx context.Context, host string, auth *Auth) (*Services, error) {
	u := &url.URL{Scheme: "https", Host: host, Path: "/.well-known/terraform.json"}
	var doc map[string]any
	final, err := c.JSON(ctx, u, auth, &doc)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("GET %s: not a valid document: want a JSON object", RedactURL(final))
	}
	return &Services{URL: final, doc: doc}, nil
}

// Service returns the base URL of service id (e.g. "modules.v1"), resolved
// against the document's URL, with a trailing slash and without query or
// fragment. It must be http or https without credentials in it. Requests to
// it carry the host's token only where the token's rule allows: a service
// on another host, port, or over plain http gets none.
func (s *Services) Service(id string) (*url.URL, error) {
	raw, ok := s.doc[id]
	if !ok {
		var offered []string
		for k := range s.doc {
			offered = append(offered, k)
		}
		sort.Strings(offered)
		what := "nothing"
		if len(offered) > 0 {
			what = strings.Join(offered, ", ")
		}
		return nil, fmt.Errorf("%s offers no %s service (it offers %s): %w", RedactURL(s.URL), id, what, ErrNoService)
	}
	str, ok := raw.(string)
	if !ok || str == "" {
		return nil, fmt.Errorf("%s: %s must be a URL string", RedactURL(s.URL), id)
	}
	ref, err := url.Parse(str)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %q: %v", RedactURL(s.URL), id, str, err)
	}
	base := s.URL.ResolveReference(ref)
	switch {
	case base.Scheme != "https" && base.Scheme != "http":
		return nil, fmt.Errorf("%s: %s %q: must be an http or https URL", RedactURL(s.URL), id, str)
	case base.User != nil:
		return nil, fmt.Errorf("%s: %s %q: must not contain credentials", RedactURL(s.URL), id, str)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	base.RawPath, base.RawQuery, base.Fragment = "", "", ""
	return base, nil
}
