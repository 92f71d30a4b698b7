package regserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tfmirror/tfmirror/backends"
)

// The protocols' base paths; each hostname a place mirrors is served below
// them (PREFIX + HOST + "/"), which is the URL a host block names.
const (
	ProvidersPrefix = "/v1/providers/"
	ModulesPrefix   = "/v1/modules/"
)

// Explainer is implemented by places that refuse some of what they could
// offer (a pull-through mirror's policy): Explain says why p, at v when v
// is not nil, for plat when plat is not nil, is refused, or "".
type Explainer interface {
	Explain(ctx context.Context, p backends.Provider, v backends.Version, plat *backends.Platform) string
}

// Options say what a Handler offers.
type Options struct {
	// Providers is the place whose providers providers.v1 offers; nil
	// answers providers.v1 with 404s.
	Providers backends.Reader
	// Modules is the place whose modules modules.v1 offers; nil answers
	// modules.v1 with 404s.
	Modules ModuleSource
	// Logger gets why versions are withheld and the place's failures; nil
	// discards them.
	Logger *log.Logger
}

// Handler answers providers.v1 below ProvidersPrefix and modules.v1 below
// ModulesPrefix, and hands every other request to the handler it wraps
// (the network mirror).
type Handler struct {
	opts Options
	next http.Handler

	mu     sync.Mutex
	logged map[string]bool // withheld versions already logged
}

// New returns a Handler answering the registry protocols from o, and
// everything else with next.
func New(next http.Handler, o Options) *Handler {
	return &Handler{opts: o, next: next, logged: map[string]bool{}}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rest string
	var serve func(http.ResponseWriter, *http.Request, []string)
	if s, ok := strings.CutPrefix(r.URL.Path, ProvidersPrefix); ok {
		rest, serve = s, h.serveProviders
	} else if s, ok := strings.CutPrefix(r.URL.Path, ModulesPrefix); ok {
		rest, serve = s, h.serveModules
	} else {
		h.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	parts := strings.Split(rest, "/")
	for _, s := range parts {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\\\x00") {
			http.NotFound(w, r)
			return
		}
	}
	serve(w, r, parts)
}

func (h *Handler) logf(format string, args ...any) {
	if h.opts.Logger != nil {
		h.opts.Logger.Printf(format, args...)
	}
}

// logOnce logs a line once per process: why a version is withheld is
// said the first time a client is refused it, not on every listing.
func (h *Handler) logOnce(line string) {
	h.mu.Lock()
	seen := h.logged[line]
	h.logged[line] = true
	h.mu.Unlock()
	if !seen {
		h.logf("%s", line)
	}
}

// Reasoner is implemented by response writers that record why a request
// was refused (a pull-through server's access log).
type Reasoner interface {
	SetReason(string)
}

// refuse answers 404 saying why, and tells the access log.
func refuse(w http.ResponseWriter, why string) {
	if rs, ok := w.(Reasoner); ok {
		rs.SetReason(why)
	}
	body := "404 not served: " + why + "\n"
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, body)
}

// fail answers a place's failure: 404 for what it lacks, 502 for the rest
// (the place, or its upstream, failed), logged.
func (h *Handler) fail(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, backends.ErrNotFound) {
		refuse(w, strings.TrimSuffix(err.Error(), ": "+backends.ErrNotFound.Error()))
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	h.logf("error: %s: %v", what, err)
	http.Error(w, fmt.Sprintf("%s: %v", what, err), http.StatusBadGateway)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b) // a client gone: no one left to tell
}
