package sync_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/sync"
)

// bypassHeader marks the requests a fault's "real answer" proxy makes, so
// the interceptor lets the registry answer them.
const bypassHeader = "X-Tfmirror-Test-Bypass"

// intercept adapts the switch to ocitest's Intercept; next is the real
// registry, reached through a proxy.
func (h *faultSwitch) intercept(next http.Handler) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(bypassHeader) != "" {
			return false
		}
		h.mu.Lock()
		h.hits[requestKind(r)]++
		f := h.fault
		h.mu.Unlock()
		return f != nil && f(w, r, next)
	}
}

// realRegistry is a handler that answers from reg itself, past the faults.
func realRegistry(t *testing.T, reg *ocitest.Registry) http.Handler {
	t.Helper()
	u, err := url.Parse(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: reg.RootCAs(), MinVersion: tls.VersionTLS12}}
	direct := p.Director
	p.Director = func(r *http.Request) {
		direct(r)
		r.Header.Set(bypassHeader, "1")
	}
	return p
}

const ociFaultTemplate = "/providers/${hostname}/${namespace}/${type}"

// openOCI opens reg as an oci:// place with options o, trusting its
// certificate and finding no ambient credentials.
func openOCI(t *testing.T, reg *ocitest.Registry, o oci.Options) *oci.Mirror {
	t.Helper()
	o.RootCAs = reg.RootCAs()
	if o.Credentials == nil {
		o.Credentials = credentials.NewMemoryStore()
	}
	m, err := oci.Open("oci://"+reg.Host()+ociFaultTemplate, reg.Host()+ociFaultTemplate, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ociUnderFaults fills a real OCI registry from w through the engine, then
// puts a fault switch in front of it. open returns a client with options o.
func ociUnderFaults(t *testing.T, w *faultWorld, o oci.Options) (*faultSwitch, *ocitest.Registry, func() backends.Reader) {
	t.Helper()
	reg := ocitest.New(t)
	res := syncUnder(t, 30*time.Second, w.src, openOCI(t, reg, oci.Options{}), sync.Selection{}, faultOpts)
	if msg := res.failure(); msg != "" || res.tr.Counts()[sync.Done] != len(w.seeds) {
		t.Fatalf("filling the registry: %v %s", res.tr.Counts(), msg)
	}
	h := newFaultSwitch()
	reg.Intercept(h.intercept(realRegistry(t, reg)))
	return h, reg, func() backends.Reader { return openOCI(t, reg, o) }
}

func isTagList(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/tags/list") }

func TestOCIFaults(t *testing.T) {
	t.Parallel()
	w := newFaultWorld(t)
	const retries = 2
	h, reg, open := ociUnderFaults(t, w, oci.Options{Timeout: 300 * time.Millisecond, Retries: retries, RetryBackoff: 10 * time.Millisecond})
	pkg := "example.com/acme/alpha 1.0.0"
	repo := "repository " + reg.Host() + "/providers/example.com/acme/alpha"
	// Each engine attempt at a blob makes up to 1+retries requests.
	perJob := faultOpts.Attempts * (1 + retries)
	cases := []faultCase{
		{name: "blob 503 burst", fault: firstN(2, isArchive, status(503))},
		{name: "manifest 503 burst", fault: firstN(2, isDocument, status(503))},
		{name: "blob permanent 500", fault: only(isArchive, status(500)),
			want: []string{repo, pkg, "fetch blob sha256:", "response status code 500"}, check: requests("archive", 2*perJob), within: 5 * time.Second},
		{name: "tag list permanent 503", fault: only(isTagList, status(503)),
			want: []string{repo, "list tags", "response status code 503"}, check: requests("document", 1+retries)},
		{name: "blob 404", fault: only(isArchive, status(404)),
			want: []string{repo, pkg, "not found"}, check: requests("archive", 2)},
		{name: "blob cut off once", fault: firstN(1, isArchive, resetMidBody)},
		{name: "blob cut off always", fault: only(isArchive, resetMidBody),
			want: []string{repo, pkg, "the stream ended after 135 of the layer's 271 bytes"}, check: requests("archive", 2*faultOpts.Attempts)},
		{name: "blob Content-Length larger than its descriptor", fault: only(isArchive, truncated(1000)),
			want: []string{repo, pkg, "content does not match its digest", "mismatch Content-Length"}, check: requests("archive", 2)},
		{name: "blob shorter than its descriptor", fault: only(isArchive, shortBody(10)),
			want: []string{repo, pkg, "content does not match its digest"}, check: requests("archive", 2)},
		{name: "slow loris blob", fault: only(isArchive, trickle),
			want: []string{repo, pkg, "no data for 300ms"}, within: 8 * time.Second},
		{name: "no headers for a blob", fault: only(isArchive, silent),
			want: []string{repo, pkg, "no answer within 300ms"}, within: 8 * time.Second},
		{name: "no headers for the tag list", fault: only(isTagList, silent),
			want: []string{repo, "list tags", "no answer within 300ms"}, within: 5 * time.Second},
		{name: "slow loris index", fault: only(func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/manifests/") }, trickle),
			want: []string{repo, "no data for 300ms"}, within: 8 * time.Second},
		{name: "blob redirect loop", fault: only(isArchive, redirectLoop),
			want: []string{repo, pkg, "stopped after 10 redirects"}},
		{name: "tag list of 100 MB", fault: only(isTagList, hugeJSON(100<<20)),
			want: []string{repo, "list tags", "larger than the 4 MiB tfmirror reads"}},
	}
	runFaultCases(t, cases, w.seeds, h, open, mustSelection(t, []string{"example.com/acme/alpha"}, ""))
}
