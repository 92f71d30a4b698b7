package sync_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
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
	p := &httputil.ReverseProxy{}
	p.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: reg.RootCAs(), MinVersion: tls.VersionTLS12}}
	p.Rewrite = func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Header.Set(bypassHeader, "1")
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
	if msg := res.failure(); msg != "" || res.tr.Counts()[engine.Done] != len(w.seeds) {
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
	// A blob that keeps failing is requested 1+retries times by oras's
	// retries, and not again by the engine (it retries a job only for a
	// blob cut off mid-stream).
	perJob := 1 + retries
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
		{name: "blob stalled after its headers", fault: only(isArchive, stallAfterHeaders),
			want: []string{repo, pkg, "no data for 300ms"}, within: 8 * time.Second,
			// The engine retries each stalled stream; oras retries only when
			// the headers themselves come late (the real answer is slow to
			// fetch under load), so at most perJob times each.
			check: requestsWithin("archive", 2*faultOpts.Attempts, 2*faultOpts.Attempts*perJob)},
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

// rawOCI pushes hand-made content with oras directly, bypassing tfmirror's
// writer, so a test can make a registry lie in its descriptors.
type rawOCI struct {
	t    *testing.T
	ctx  context.Context
	repo *remote.Repository
}

func newRawOCI(t *testing.T, reg *ocitest.Registry, name string) *rawOCI {
	t.Helper()
	repo, err := remote.NewRepository(reg.Host() + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	repo.Client = &auth.Client{Client: reg.Client()}
	return &rawOCI{t: t, ctx: context.Background(), repo: repo}
}

func (r *rawOCI) blob(mediaType string, b []byte) ocispec.Descriptor {
	r.t.Helper()
	d := content.NewDescriptorFromBytes(mediaType, b)
	if err := r.repo.Push(r.ctx, d, bytes.NewReader(b)); err != nil && !strings.Contains(err.Error(), "already exists") {
		r.t.Fatal(err)
	}
	return d
}

func (r *rawOCI) manifest(v any, tag string) ocispec.Descriptor {
	r.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		r.t.Fatal(err)
	}
	var head struct{ MediaType string }
	if err := json.Unmarshal(b, &head); err != nil {
		r.t.Fatalf("decoding b: %v", err)
	}
	d := content.NewDescriptorFromBytes(head.MediaType, b)
	if tag != "" {
		err = r.repo.PushReference(r.ctx, d, bytes.NewReader(b), tag)
	} else {
		err = r.repo.Manifests().Push(r.ctx, d, bytes.NewReader(b))
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// version pushes a provider version with one platform whose zip layer's
// descriptor is edited by layer and whose index entry is edited by entry.
func (r *rawOCI) version(tag string, z []byte, layer, entry func(*ocispec.Descriptor)) {
	r.t.Helper()
	cfg := r.blob(ocispec.MediaTypeEmptyJSON, []byte("{}"))
	l := r.blob(oci.MediaTypeZip, z)
	if layer != nil {
		layer(&l)
	}
	m := r.manifest(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: oci.ArtifactTypeTarget, Config: cfg, Layers: []ocispec.Descriptor{l}}, "")
	m.ArtifactType = oci.ArtifactTypeTarget
	m.Platform = &ocispec.Platform{OS: "linux", Architecture: "amd64"}
	if entry != nil {
		entry(&m)
	}
	r.manifest(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: oci.ArtifactTypeProvider, Manifests: []ocispec.Descriptor{m}}, tag)
}

// A registry whose descriptors lie about sizes: a layer of an absurd size
// is refused before any byte is downloaded; a layer size that disagrees with
// the blob, or an index entry whose size disagrees with its manifest, is
// refused with a clear error; nothing lands.
func TestOCILyingDescriptors(t *testing.T) {
	t.Parallel()
	reg := ocitest.New(t)
	raw := newRawOCI(t, reg, "providers/example.com/acme/alpha")
	zipFor := func(v string) []byte {
		return backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", v, "linux_amd64"), "")
	}
	raw.version("1.0.0", zipFor("1.0.0"), func(d *ocispec.Descriptor) { d.Size = 1 << 50 }, nil)
	raw.version("2.0.0", zipFor("2.0.0"), func(d *ocispec.Descriptor) { d.Size += 10 }, nil)
	raw.version("3.0.0", zipFor("3.0.0"), func(d *ocispec.Descriptor) { d.Size -= 10 }, nil)
	raw.version("4.0.0", zipFor("4.0.0"), nil, func(d *ocispec.Descriptor) { d.Size += 5 })
	raw.version("5.0.0", zipFor("5.0.0"), nil, func(d *ocispec.Descriptor) { d.Size = 1 << 50 })
	raw.version("6.0.0", zipFor("6.0.0"), nil, nil) // the honest one

	cases := []struct {
		version string
		want    []string // nil: listed and synced; "-": not listed
		blobs   int      // blob GETs the sync may make
	}{
		{"1.0.0", []string{"the source states 1125899906842624 bytes", "refusing to download it"}, 0},
		{"2.0.0", []string{"content does not match its digest", "mismatch Content-Length"}, 1},
		{"3.0.0", []string{"content does not match its digest", "mismatch Content-Length"}, 1},
		{"4.0.0", []string{"-"}, 0},
		{"5.0.0", []string{"-"}, 0},
		{"6.0.0", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			src := openOCI(t, reg, oci.Options{})
			dstDir := filepath.Join(t.TempDir(), "dst")
			dst, err := fs.Open(dstDir, dstDir, fs.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			reg.ResetRequests()
			res := syncUnder(t, 30*time.Second, src, dst, mustSelection(t, []string{"example.com/acme/alpha"}, "= "+tc.version), faultOpts)
			msg := res.failure()
			t.Logf("failure %q, warnings %q", msg, src.Warnings())
			if got := reg.Count(http.MethodGet, "/blobs/sha256:"); got > tc.blobs {
				t.Errorf("%d blob GETs, want at most %d", got, tc.blobs)
			}
			pkg := backendtest.Pkg(t, "example.com/acme/alpha", tc.version, "linux_amd64")
			switch {
			case tc.want == nil:
				if msg != "" || res.tr.Counts()[engine.Done] != 1 {
					t.Fatalf("honest version: %v %s", res.tr.Counts(), msg)
				}
				assertClean(t, dst)
			case tc.want[0] == "-":
				if len(res.plan.Items) != 0 {
					t.Errorf("listed: %v", res.plan.Findings())
				}
				w := strings.Join(src.Warnings(), "\n")
				if !strings.Contains(w, tc.version) || !strings.Contains(w, "skipped") {
					t.Errorf("no warning names %s: %s", tc.version, w)
				}
				assertNothingLanded(t, dst, dstDir, pkg)
			default:
				for _, want := range tc.want {
					if !strings.Contains(msg, want) {
						t.Errorf("failure %q lacks %q", msg, want)
					}
				}
				assertNothingLanded(t, dst, dstDir, pkg)
			}
		})
	}
}
