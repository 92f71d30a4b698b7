package serveauth

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	gosync "sync"

	"golang.org/x/net/idna"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/modules"
)

// Auth is who may use a server: the tokens of a file (reloaded with
// Reload), and, with Certificates, any client whose certificate the TLS
// layer verified against the --client-ca. Either suffices; a certificate
// reads everything.
type Auth struct {
	// Path is the tokens file ("" for none).
	Path string
	// Certificates: a client certificate verified by the server's TLS
	// configuration authorizes a request.
	Certificates bool
	// Denied, when set, is told of each request refused (401 or 403),
	// with the client's name where it presented a known token.
	Denied func(r *http.Request, status int, client string)

	mu     gosync.RWMutex
	tokens Tokens
	key    []byte // signs archive URLs (signed.go)
}

// Reload reads the tokens file again; on an error the tokens in use
// stay.
func (a *Auth) Reload() (int, error) {
	if a.Path == "" {
		return 0, nil
	}
	t, b, err := load(a.Path)
	if err != nil {
		return 0, err
	}
	key := sha256.Sum256(append([]byte("tfmirror serve: signed archive URLs\x00"), b...))
	a.mu.Lock()
	a.tokens, a.key = t, key[:]
	a.mu.Unlock()
	return len(t), nil
}

func (a *Auth) token(r *http.Request) (*Token, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return nil, h != ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	a.mu.RLock()
	defer a.mu.RUnlock()
	t := a.tokens[sum]
	return t, true
}

// open are the paths anyone may ask for: the health check and service
// discovery (which say nothing of what is served).
func open(path string) bool {
	return path == "/healthz" || path == "/.well-known/terraform.json"
}

// Handler answers what next answers to an authorized request; 401 (with
// WWW-Authenticate: Bearer) without a known token or certificate, 403 to a
// token whose patterns do not name what is asked for. The request's
// context names the client (backends.ClientOf) for the access log.
func (a *Auth) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if a.Certificates && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			name := "cert:" + backends.Printable(r.TLS.VerifiedChains[0][0].Subject.CommonName)
			next.ServeHTTP(w, r.WithContext(backends.WithClient(r.Context(), name)))
			return
		}
		if signable(r.URL.Path) {
			if client, ok := a.signedClient(r); ok {
				next.ServeHTTP(w, r.WithContext(backends.WithClient(r.Context(), client)))
				return
			}
		}
		t, presented := a.token(r)
		if t == nil {
			a.deny(w, r, http.StatusUnauthorized, "", unauthorized(presented, a.Path != "", a.Certificates))
			return
		}
		if what, ok := t.allows(r.URL.Path); !ok {
			a.deny(w, r, http.StatusForbidden, t.Name, fmt.Sprintf("403 forbidden: the token %q may not read %s; the mirror's operator names what each token may read (serve --auth)", t.Name, what))
			return
		}
		r = r.WithContext(backends.WithClient(r.Context(), t.Name))
		if versionDoc(r.URL.Path) || downloadDoc(r.URL.Path) || moduleDownload(r.URL.Path) {
			a.serveSigned(next, w, r, t.Name)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func unauthorized(presented, tokens, certs bool) string {
	switch {
	case presented:
		return "401 unauthorized: this mirror does not know the token sent; ask its operator for one"
	case tokens:
		return `401 unauthorized: this mirror needs a token: put it in a credentials "HOST" block of the CLI configuration (or TF_TOKEN_HOST)`
	case certs:
		return "401 unauthorized: this mirror needs a client certificate its operator's CA signed"
	}
	return "401 unauthorized"
}

func (a *Auth) deny(w http.ResponseWriter, r *http.Request, status int, client, body string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tfmirror"`)
	}
	http.Error(w, body, status)
	if a.Denied != nil {
		a.Denied(r, status, client)
	}
}

// allows reports whether t may read path: a provider's documents and
// zips (the mirror protocol's /HOST/NS/TYPE/..., providers.v1's
// /v1/providers/HOST/NS/TYPE/...), a module's (/v1/modules/HOST/NS/NAME/SYSTEM/...),
// anything else with any token; what names what was refused.
func (t *Token) allows(path string) (what string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(parts) >= 6 && parts[0] == "v1" && parts[1] == "modules":
		host, err := backends.NormalizeHostname(hostOf(parts[2]))
		if err != nil {
			return "", true // no module: the handler answers 404
		}
		m := modules.Module{Host: host, Namespace: parts[3], Name: parts[4], System: parts[5]}
		for _, pt := range t.Modules {
			if pt.Matches(m) {
				return "", true
			}
		}
		return "the module " + backends.Printable(strings.Join(parts[2:6], "/")), false
	case len(parts) >= 5 && parts[0] == "v1" && parts[1] == "providers":
		return t.provider(parts[2], parts[3], parts[4])
	case len(parts) == 4:
		return t.provider(parts[0], parts[1], parts[2])
	}
	return "", true
}

func (t *Token) provider(host, ns, typ string) (string, bool) {
	p, err := backends.NewProvider(hostOf(host), ns, typ)
	if err != nil {
		return "", true // no provider: the handler answers 404
	}
	for _, pt := range t.Providers {
		if pt.Matches(p, DefaultRegistry) {
			return "", true
		}
	}
	return "the provider " + p.String(), false
}

// hostOf is a path's hostname as the handlers read it: Unicode.
func hostOf(h string) string {
	if u, err := idna.Lookup.ToUnicode(h); err == nil {
		return u
	}
	return h
}
