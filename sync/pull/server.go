package pull

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"golang.org/x/net/idna"

	"github.com/tfmirror/tfmirror/backends"
)

// Server is a pull-through mirror's http.Handler: Next (the network
// mirror's handler serving the Mirror) for the protocol's paths, with
//
//	/healthz   200 and a small JSON status while the process serves
//	/metrics   the Prometheus text format (Metrics)
//
// one access log line per request (Access), and, for a 404 the policy
// explains, that reason as its body and in the log line.
type Server struct {
	Mirror *Mirror
	// Modules, when set, is the module mirror whose fetches /healthz
	// counts too.
	Modules *ModuleMirror
	Next    http.Handler
	Metrics *Metrics
	// Access, when set, receives each request's line.
	Access func(Access)
}

// Access is one request as the access log records it.
type Access struct {
	Time    time.Time     `json:"time"`
	Remote  string        `json:"remote"`
	Method  string        `json:"method"`
	Path    string        `json:"path"`
	Status  int           `json:"status"`
	Bytes   int64         `json:"bytes"`
	Elapsed time.Duration `json:"-"`
	Seconds float64       `json:"seconds"`
	// Cut: the response was aborted part way (the client sees a failed
	// download).
	Cut bool `json:"cut,omitempty"`
	// Reason is why the policy refused the request (a 404).
	Reason string `json:"reason,omitempty"`
	// Client is the name of the token or client certificate that
	// authorized the request (serve --auth, --client-ca); never the token.
	Client string `json:"client,omitempty"`
}

// Text is the access log's text line.
func (a Access) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %d %d %s", a.Remote, a.Method, a.Path, a.Status, a.Bytes, a.Elapsed.Round(time.Microsecond))
	if a.Cut {
		b.WriteString(" (cut short)")
	}
	if a.Reason != "" {
		fmt.Fprintf(&b, " (%s)", a.Reason)
	}
	if a.Client != "" {
		fmt.Fprintf(&b, " client=%s", a.Client)
	}
	return b.String()
}

// AccessLog writes each Access to w as a text line, or as a JSON object per
// line when asJSON; one write per line, safe for concurrent use.
func AccessLog(w io.Writer, asJSON bool) func(Access) {
	var mu gosync.Mutex
	return func(a Access) {
		a.Seconds = a.Elapsed.Seconds()
		var line []byte
		if asJSON {
			line, _ = json.Marshal(a)
		} else {
			line = []byte(a.Time.UTC().Format(time.RFC3339) + " " + a.Text())
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(line, '\n')) // stderr, as fmt.Fprint: no one left to tell
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	a := Access{Time: time.Now(), Remote: r.RemoteAddr, Method: r.Method, Path: r.URL.EscapedPath(), Client: backends.ClientOf(r.Context())}
	kind := kindOf(r.URL.Path)
	defer func() {
		v := recover()
		a.Elapsed = time.Since(a.Time)
		a.Status, a.Bytes, a.Cut, a.Reason = rec.status, rec.bytes, v != nil, rec.reason
		s.Metrics.request(kind, a.Status, a.Bytes, a.Elapsed, a.Reason != "")
		s.Metrics.client(a.Client, a.Status)
		if s.Access != nil {
			s.Access(a)
		}
		if v != nil {
			panic(v)
		}
	}()
	switch r.URL.Path {
	case "/healthz":
		s.health(rec)
	case "/metrics":
		if s.Metrics == nil {
			http.NotFound(rec, r)
			return
		}
		s.Metrics.Handler().ServeHTTP(rec, r)
	default:
		rec.explain = func() string { return s.explain(r) }
		s.Next.ServeHTTP(rec, r)
	}
}

func (s *Server) health(w http.ResponseWriter) {
	// Nothing local: not CACHE's path, not the upstream's place.
	var mods *ModuleHealth
	if s.Modules != nil {
		h := s.Modules.Health()
		mods = &h
	}
	b, _ := json.Marshal(struct {
		Status  string `json:"status"`
		Offline bool   `json:"offline"`
		Health
		*ModuleHealth
	}{"ok", s.Mirror.Offline(), s.Mirror.Health(), mods})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n')) // a client gone: no one left to tell
}

// kindOf names the kind of request for the metrics.
func kindOf(path string) string {
	switch {
	case path == "/healthz":
		return "health"
	case path == "/metrics":
		return "metrics"
	case strings.HasSuffix(path, "/index.json"):
		return "index"
	case strings.HasSuffix(path, ".json"):
		return "version"
	case strings.HasSuffix(path, ".zip"):
		return "archive"
	}
	return "other"
}

// explain says why the policy refuses what r asks for, or "".
func (s *Server) explain(r *http.Request) string {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 {
		return ""
	}
	host := parts[0]
	if u, err := idna.Lookup.ToUnicode(host); err == nil {
		host = u
	}
	p, err := backends.NewProvider(host, parts[1], parts[2])
	if err != nil {
		return ""
	}
	file := parts[3]
	if file == "index.json" {
		return s.Mirror.Explain(r.Context(), p, nil, nil)
	}
	if v, err := backends.ParseVersion(strings.TrimSuffix(file, ".json")); err == nil && strings.HasSuffix(file, ".json") {
		return s.Mirror.Explain(r.Context(), p, v, nil)
	}
	// terraform-provider-TYPE_VERSION_OS_ARCH.zip
	rest, ok := strings.CutPrefix(file, "terraform-provider-"+p.Type+"_")
	rest, zip := strings.CutSuffix(rest, ".zip")
	f := strings.Split(rest, "_")
	if !ok || !zip || len(f) < 3 {
		return ""
	}
	v, err := backends.ParseVersion(strings.Join(f[:len(f)-2], "_"))
	plat, perr := backends.ParsePlatform(f[len(f)-2] + "_" + f[len(f)-1])
	if err != nil || perr != nil {
		return ""
	}
	why := s.Mirror.Explain(r.Context(), p, v, &plat)
	if why != "" {
		s.Mirror.auditRefusal(backends.Package{Provider: p, Version: v, Platform: plat}, why)
	}
	return why
}

// recorder notes a response's status and size for the log line, and
// replaces the body of a 404 the policy explains with the reason.
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	wrote   bool
	explain func() string
	reason  string
	swallow bool // the handler's own 404 body is replaced
}

func (r *recorder) WriteHeader(code int) {
	if r.wrote {
		return
	}
	r.wrote, r.status = true, code
	if code == http.StatusNotFound && r.explain != nil {
		if why := r.explain(); why != "" {
			r.reason, r.swallow = why, true
			body := "404 not served: " + why + "\n"
			h := r.Header()
			h.Set("Content-Type", "text/plain; charset=utf-8")
			h.Set("Content-Length", strconv.Itoa(len(body)))
			r.ResponseWriter.WriteHeader(code)
			n, _ := io.WriteString(r.ResponseWriter, body)
			r.bytes += int64(n)
			return
		}
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	if r.swallow {
		return len(b), nil
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// SetReason records why a handler refused the request (a 404 it
// explains itself, as the registry protocols' handler does).
func (r *recorder) SetReason(why string) { r.reason = why }

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
