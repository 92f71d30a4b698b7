package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// A registry binds NAMESPACE/TYPE to its own host.
var _ sync.DefaultHoster = (*registry.Registry)(nil)

func alpha() registrytest.Provider {
	return registrytest.Provider{Namespace: "acme", Type: "alpha", Versions: []registrytest.Version{
		{Version: "1.0.0", Archives: map[string][]byte{
			"linux_amd64":  registrytest.ProviderZip("alpha", "1.0.0", "linux"),
			"darwin_arm64": registrytest.ProviderZip("alpha", "1.0.0", "darwin"),
		}},
		{Version: "1.1.0", Archives: map[string][]byte{
			"linux_amd64": registrytest.ProviderZip("alpha", "1.1.0", "linux"),
		}},
	}}
}

func open(t *testing.T, srv *registrytest.Server, creds backends.Credentials) *registry.Registry {
	t.Helper()
	r, err := registry.Open("registry://"+srv.Host(), srv.Host(), registry.Options{
		HTTP:        httpclient.Client{HTTP: srv.Client(), Timeout: 5 * time.Second},
		Credentials: creds,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func provider(t *testing.T, host, ns, typ string) backends.Provider {
	t.Helper()
	p, err := backends.NewProvider(host, ns, typ)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func version(t *testing.T, s string) backends.Version {
	t.Helper()
	v, err := backends.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGoodReleaseVerifies(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, alpha())
	r := open(t, srv, nil)
	p := provider(t, srv.Host(), "acme", "alpha")

	vs, err := r.Versions(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].String() != "1.1.0" || vs[1].String() != "1.0.0" {
		t.Fatalf("versions = %v, want [1.1.0 1.0.0]", vs)
	}
	as, err := r.Archives(ctx, p, version(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Platform.String() != "darwin_arm64" || as[1].Platform.String() != "linux_amd64" {
		t.Fatalf("archives = %v, want darwin_arm64 and linux_amd64", as)
	}
	if srv.Count(registrytest.KindSums) != 1 || srv.Count(registrytest.KindSig) != 1 {
		t.Errorf("SHA256SUMS fetched %d times, signature %d times; want once each per version", srv.Count(registrytest.KindSums), srv.Count(registrytest.KindSig))
	}
	for _, a := range as {
		want := hashing.Hash("zh:" + srv.SHA256("acme", "alpha", "1.0.0", a.Platform.String()))
		signed := a.Evidence[0]
		if signed.Source != (hashing.Source{Kind: hashing.SourceRegistrySigned, Detail: "key " + srv.KeyID() + ", fingerprint " + srv.Fingerprint()}) {
			t.Errorf("%s: evidence source = %v, want the signed SHA256SUMS with key %s", a.Package, signed.Source, srv.KeyID())
		}
		if len(signed.Hashes) != 1 || signed.Hashes[0] != want {
			t.Errorf("%s: signed hashes = %v, want [%s]", a.Package, signed.Hashes, want)
		}
		if len(a.Evidence) != 2 || a.Evidence[1].Source.Kind != hashing.SourceRegistry {
			t.Errorf("%s: want the packages hashes as a second piece of evidence, got %v", a.Package, a.Evidence)
		}
		if a.Size <= 0 {
			t.Errorf("%s: size = %d, want the packages size", a.Package, a.Size)
		}
		f := sync.VerifyArchive(ctx, r, a, hashing.Options{})
		if f.Status != sync.StatusOK || !f.Result.Verified() {
			t.Errorf("%s: verify = %s: %s", a.Package, f.Status, f.Detail)
		}
		if !strings.Contains(f.Detail, "key "+srv.KeyID()) {
			t.Errorf("%s: verify detail %q does not name the signing key", a.Package, f.Detail)
		}
	}
	if got := srv.ArchiveBytes(); got != as[0].Size+as[1].Size {
		t.Errorf("archive bytes sent = %d, want %d", got, as[0].Size+as[1].Size)
	}
}

func TestSelectionNamesProvidersOnTheRegistryHost(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, alpha())
	r := open(t, srv, nil)
	if r.DefaultHost() != srv.Host() {
		t.Fatalf("DefaultHost = %q, want %q", r.DefaultHost(), srv.Host())
	}
	if _, err := r.Providers(ctx); !errors.Is(err, backends.ErrNoCatalogue) {
		t.Fatalf("Providers: %v, want ErrNoCatalogue", err)
	}
	f, err := backends.ParseProviderFilter("acme/alpha")
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := backends.ParseVersionConstraint("latest")
	as, err := sync.Selection{Providers: []backends.ProviderFilter{f}, Versions: vc}.Resolve(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].Version.String() != "1.1.0" || as[0].Provider.Hostname != srv.Host() {
		t.Fatalf("resolved %v, want alpha 1.1.0 linux_amd64 on %s", as, srv.Host())
	}
	// Only the selected version's metadata was read.
	if n := srv.Count(registrytest.KindDownload); n != 1 {
		t.Errorf("download metadata requests = %d, want 1", n)
	}
}

func TestFaultsGiveSpecificErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		faults registrytest.Faults
		// listErr is expected from Archives; openErr (with Archives fine)
		// from reading the archive.
		listErr, openErr func(srv *registrytest.Server) string
	}{
		{name: "tampered archive", faults: registrytest.Faults{TamperArchive: true},
			openErr: func(srv *registrytest.Server) string {
				return "the archive's sha256 is "
			}},
		{name: "tampered SHA256SUMS", faults: registrytest.Faults{TamperSums: true},
			listErr: func(srv *registrytest.Server) string {
				return "acme/alpha 1.0.0: the SHA256SUMS signature does not check with key " + srv.KeyID()
			}},
		{name: "unknown key", faults: registrytest.Faults{UnknownKey: true},
			listErr: func(srv *registrytest.Server) string {
				return "registry " + srv.Host() + ": acme/alpha 1.0.0: the SHA256SUMS signature does not check: no key offered signed it (keys: " + srv.KeyID() + ")"
			}},
		{name: "missing signature", faults: registrytest.Faults{MissingSig: true},
			listErr: func(srv *registrytest.Server) string {
				return "acme/alpha 1.0.0: SHA256SUMS signature: GET https://" + srv.FilesHost() + "/acme/alpha/1.0.0/terraform-provider-alpha_1.0.0_SHA256SUMS.sig: HTTP 404"
			}},
		{name: "no signing keys", faults: registrytest.Faults{NoSigningKeys: true},
			listErr: func(srv *registrytest.Server) string {
				return "SHA256SUMS signature: the registry gives no signing keys"
			}},
		{name: "wrong content type", faults: registrytest.Faults{ContentType: "text/html; charset=utf-8"},
			listErr: func(srv *registrytest.Server) string {
				return `/v1/providers/acme/alpha/versions: served as "text/html; charset=utf-8", want application/json`
			}},
		{name: "redirect loop", faults: registrytest.Faults{RedirectLoop: true},
			listErr: func(srv *registrytest.Server) string {
				return "/v1/providers/acme/alpha/versions: redirect loop: "
			}},
		{name: "server error", faults: registrytest.Faults{APIStatus: 500},
			listErr: func(srv *registrytest.Server) string {
				return "acme/alpha: GET https://" + srv.Host() + "/v1/providers/acme/alpha/versions: HTTP 500 Internal Server Error"
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := registrytest.NewWithOptions(t, registrytest.Options{Faults: tc.faults}, alpha())
			r := open(t, srv, nil)
			p := provider(t, srv.Host(), "acme", "alpha")
			as, err := r.Archives(ctx, p, version(t, "1.0.0"))
			if tc.listErr != nil {
				want := tc.listErr(srv)
				t.Logf("error: %v", err)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Archives error = %v\nwant it to contain %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rc, err := r.Open(ctx, as[0])
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(rc)
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			want := tc.openErr(srv)
			t.Logf("error: %v", err)
			if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, hashing.ErrHashMismatch) {
				t.Fatalf("reading the archive: %v\nwant it to contain %q and wrap ErrHashMismatch", err, want)
			}
			f := sync.VerifyArchive(ctx, r, as[0], hashing.Options{})
			if f.Status != sync.StatusError || !strings.Contains(f.Detail, want) {
				t.Errorf("verify = %s: %s", f.Status, f.Detail)
			}
		})
	}
}

func TestServerErrorIsTransient(t *testing.T) {
	srv := registrytest.NewWithOptions(t, registrytest.Options{Faults: registrytest.Faults{APIStatus: 503}}, alpha())
	r := open(t, srv, nil)
	_, err := r.Versions(context.Background(), provider(t, srv.Host(), "acme", "alpha"))
	var tr interface{ Transient() bool }
	if !errors.As(err, &tr) || !tr.Transient() {
		t.Fatalf("503: %v: want an error that reports itself transient", err)
	}
}

func TestWithoutPackagesField(t *testing.T) {
	srv := registrytest.NewWithOptions(t, registrytest.Options{Faults: registrytest.Faults{NoPackages: true}}, alpha())
	r := open(t, srv, nil)
	as, err := r.Archives(context.Background(), provider(t, srv.Host(), "acme", "alpha"), version(t, "1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].Size != -1 || len(as[0].Evidence) != 1 {
		t.Fatalf("archives = %+v, want one with unknown size and only the signed evidence", as)
	}
	if f := sync.VerifyArchive(context.Background(), r, as[0], hashing.Options{}); f.Status != sync.StatusOK {
		t.Fatalf("verify: %s: %s", f.Status, f.Detail)
	}
}

func TestCredentialsGoToTheAPIOnly(t *testing.T) {
	ctx := context.Background()
	const token = "s3cret-token"
	srv := registrytest.NewWithOptions(t, registrytest.Options{Token: token}, alpha())
	p := provider(t, srv.Host(), "acme", "alpha")

	// Without a token the registry refuses, and the message says what to set.
	_, err := open(t, srv, nil).Versions(ctx, p)
	if !errors.Is(err, backends.ErrUnauthorized) || !strings.Contains(err.Error(), "TF_TOKEN_127_0_0_1") {
		t.Fatalf("without a token: %v, want ErrUnauthorized naming the TF_TOKEN_ variable", err)
	}

	srv.Reset()
	r := open(t, srv, backends.EnvCredentials([]string{"TF_TOKEN_" + strings.ReplaceAll(srv.Host(), ".", "_") + "=" + token}))
	as, err := r.Archives(ctx, p, version(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if f := sync.VerifyArchive(ctx, r, a, hashing.Options{}); f.Status != sync.StatusOK {
			t.Fatalf("%s: %s: %s", a.Package, f.Status, f.Detail)
		}
	}
	seen := map[registrytest.Kind]int{}
	for _, req := range srv.Requests() {
		seen[req.Kind]++
		switch req.Kind {
		case registrytest.KindDiscovery, registrytest.KindVersions, registrytest.KindDownload:
			if req.Authorization != "Bearer "+token {
				t.Errorf("%s %s: Authorization %q, want the token", req.Kind, req.Path, req.Authorization)
			}
		default:
			if req.Authorization != "" {
				t.Errorf("%s %s on %s: the token was sent (%q); it must go to the registry API only", req.Kind, req.Path, req.Host, req.Authorization)
			}
		}
	}
	for _, k := range []registrytest.Kind{registrytest.KindDiscovery, registrytest.KindVersions, registrytest.KindDownload, registrytest.KindSums, registrytest.KindSig, registrytest.KindArchive} {
		if seen[k] == 0 {
			t.Errorf("no %s request seen; the test proves nothing about it", k)
		}
	}
}

func TestAbsoluteDiscoveryURL(t *testing.T) {
	srv := registrytest.NewWithOptions(t, registrytest.Options{AbsoluteDiscovery: true}, alpha())
	r := open(t, srv, nil)
	if _, err := r.Archives(context.Background(), provider(t, srv.Host(), "acme", "alpha"), version(t, "1.1.0")); err != nil {
		t.Fatal(err)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, alpha())
	r := open(t, srv, nil)
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown provider", func() error {
			_, err := r.Versions(ctx, provider(t, srv.Host(), "acme", "nope"))
			return err
		}, "acme/nope: no such provider"},
		{"provider of another host", func() error {
			_, err := r.Versions(ctx, provider(t, "example.com", "acme", "alpha"))
			return err
		}, "this registry serves providers of " + srv.Host() + " only"},
		{"unlisted version", func() error {
			_, err := r.Archives(ctx, provider(t, srv.Host(), "acme", "alpha"), version(t, "9.9.9"))
			return err
		}, "acme/alpha 9.9.9: the registry does not list this version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, backends.ErrNotFound) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrNotFound containing %q", err, tc.want)
			}
		})
	}
}

func TestOpenWithoutListingFirst(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, alpha())
	listed, err := open(t, srv, nil).Archives(ctx, provider(t, srv.Host(), "acme", "alpha"), version(t, "1.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := open(t, srv, nil)
	rc, err := fresh.Open(ctx, backends.Archive{Package: listed[0].Package})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := registrytest.ProviderZip("alpha", "1.1.0", "linux"); string(b) != string(want) {
		t.Fatal("downloaded bytes differ from the release zip")
	}
}

// fakeRegistry serves discovery, a versions list and download metadata from
// a document the test edits, for the parser's table of bad inputs.
func fakeRegistry(t *testing.T, discovery map[string]any, download func(base string) map[string]any) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc any
		switch r.URL.Path {
		case "/.well-known/terraform.json":
			doc = discovery
		case "/v1/providers/acme/alpha/versions":
			doc = map[string]any{"versions": []any{map[string]any{"version": "1.0.0", "protocols": []string{"5.0"}, "platforms": []any{map[string]string{"os": "linux", "arch": "amd64"}}}}}
		case "/v1/providers/acme/alpha/1.0.0/download/linux/amd64":
			doc = download(srv.URL)
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func goodDownload(base string) map[string]any {
	return map[string]any{
		"protocols": []string{"5.0"}, "os": "linux", "arch": "amd64",
		"filename":              "terraform-provider-alpha_1.0.0_linux_amd64.zip",
		"download_url":          base + "/f/terraform-provider-alpha_1.0.0_linux_amd64.zip",
		"shasums_url":           base + "/f/SHA256SUMS",
		"shasums_signature_url": base + "/f/SHA256SUMS.sig",
		"shasum":                strings.Repeat("ab", 32),
		"signing_keys":          map[string]any{"gpg_public_keys": []any{}},
		"packages":              map[string]any{"linux_amd64": map[string]any{"hashes": []string{"zh:" + strings.Repeat("ab", 32)}, "package_size": 10}},
	}
}

func TestBadDownloadMetadata(t *testing.T) {
	cases := []struct {
		name string
		edit func(d map[string]any)
		want string
	}{
		{"other platform", func(d map[string]any) { d["arch"] = "arm64" }, "it describes linux_arm64, not the platform asked for"},
		{"short shasum", func(d map[string]any) { d["shasum"] = "abcd" }, `shasum "abcd": want 64 hex digits`},
		{"filename with a slash", func(d map[string]any) { d["filename"] = "../x.zip" }, `filename "../x.zip" is not a file name`},
		{"no download url", func(d map[string]any) { delete(d, "download_url") }, "download_url is missing"},
		{"ftp shasums url", func(d map[string]any) { d["shasums_url"] = "ftp://example.com/SUMS" }, `shasums_url "ftp://example.com/SUMS": must be an http or https URL`},
		{"packages lacks the platform", func(d map[string]any) { d["packages"] = map[string]any{} }, "packages does not list linux_amd64"},
		{"packages zh disagrees", func(d map[string]any) {
			d["packages"] = map[string]any{"linux_amd64": map[string]any{"hashes": []string{"zh:" + strings.Repeat("cd", 32)}, "package_size": 10}}
		}, "disagrees with shasum"},
		{"packages size zero", func(d map[string]any) {
			d["packages"] = map[string]any{"linux_amd64": map[string]any{"hashes": []string{"zh:" + strings.Repeat("ab", 32)}}}
		}, "package_size must be positive"},
		{"packages bad platform key", func(d map[string]any) {
			d["packages"] = map[string]any{"linux_amd64": map[string]any{"hashes": []string{"zh:" + strings.Repeat("ab", 32)}, "package_size": 1}, "linux": map[string]any{}}
		}, `platform "linux": must be two words`},
		{"packages bad hash", func(d map[string]any) {
			d["packages"] = map[string]any{"linux_amd64": map[string]any{"hashes": []string{"deadbeef"}, "package_size": 1}}
		}, "must start with a scheme"},
		{"packages without zh", func(d map[string]any) {
			d["packages"] = map[string]any{"linux_amd64": map[string]any{"hashes": []string{"h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}, "package_size": 1}}
		}, "no zh: hash"},
		{"not json object", nil, "not a valid document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeRegistry(t, map[string]any{"providers.v1": "/v1/providers/"}, func(base string) map[string]any {
				d := goodDownload(base)
				if tc.edit != nil {
					tc.edit(d)
				} else {
					d = nil
				}
				return d
			})
			if tc.edit == nil {
				// A JSON null is not a download document.
				srv.Config.Handler = wrapNull(srv.Config.Handler)
			}
			host := strings.TrimPrefix(srv.URL, "https://")
			r, err := registry.Open("registry://"+host, host, registry.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Archives(context.Background(), provider(t, host, "acme", "alpha"), version(t, "1.0.0"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// wrapNull answers the download endpoint with a JSON string instead of an
// object.
func wrapNull(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/download/") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `"surprise"`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestBadDiscovery(t *testing.T) {
	cases := []struct {
		name string
		doc  map[string]any
		want string
	}{
		{"no providers service", map[string]any{"modules.v1": "/m/"}, "offers no providers.v1 service (it offers modules.v1)"},
		{"not a string", map[string]any{"providers.v1": 3}, "providers.v1 must be a URL string"},
		{"ftp", map[string]any{"providers.v1": "ftp://example.com/p/"}, "must be an http or https URL"},
		{"userinfo", map[string]any{"providers.v1": "https://u:p@example.com/p/"}, "must not contain credentials"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeRegistry(t, tc.doc, goodDownload)
			host := strings.TrimPrefix(srv.URL, "https://")
			r, _ := registry.Open("registry://"+host, host, registry.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
			_, err := r.Versions(context.Background(), provider(t, host, "acme", "alpha"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("no discovery document", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.NotFoundHandler())
		defer srv.Close()
		host := strings.TrimPrefix(srv.URL, "https://")
		r, _ := registry.Open("registry://"+host, host, registry.Options{HTTP: httpclient.Client{HTTP: srv.Client()}})
		_, err := r.Versions(context.Background(), provider(t, host, "acme", "alpha"))
		if err == nil || !strings.Contains(err.Error(), "the host offers no services") {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestOpenRejectsBadHosts(t *testing.T) {
	for _, h := range []string{"", "https://example.com", "example.com:99999", "a..b", "xn--caf-dma.fr"} {
		if _, err := registry.Open("registry://"+h, h, registry.Options{}); err == nil {
			t.Errorf("Open(%q): no error", h)
		}
	}
}

func TestArchivesAtSeveralVersions(t *testing.T) {
	for _, conc := range []int{1, 0} {
		srv := registrytest.New(t, alpha())
		r, err := registry.Open("registry://"+srv.Host(), srv.Host(), registry.Options{HTTP: httpclient.Client{HTTP: srv.Client()}, Concurrency: conc})
		if err != nil {
			t.Fatal(err)
		}
		p := provider(t, srv.Host(), "acme", "alpha")
		as, err := backends.ListArchives(context.Background(), r, p, []backends.Version{version(t, "1.1.0"), version(t, "1.0.0")})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range as {
			got = append(got, a.Version.String()+" "+a.Platform.String())
		}
		if want := "[1.1.0 linux_amd64 1.0.0 darwin_arm64 1.0.0 linux_amd64]"; fmt.Sprint(got) != want {
			t.Errorf("concurrency %d: %v, want %s", conc, got, want)
		}
		if n := srv.Count(registrytest.KindSums); n != 2 {
			t.Errorf("concurrency %d: SHA256SUMS fetched %d times, want once per version", conc, n)
		}
	}
}

// TestTrustDataStaysOnHTTPS: discovery, the versions list, download
// metadata (signing keys, checksum URLs), SHA256SUMS, its signature and the
// archive are refused when a redirect takes them from https to plain http,
// with an error naming both URLs. The plain server is a faithful proxy of
// the registry: without the refusal everything would check out.
func TestTrustDataStaysOnHTTPS(t *testing.T) {
	cases := []struct {
		name  string
		match func(r *http.Request) bool
	}{
		{"discovery", func(r *http.Request) bool { return r.URL.Path == "/.well-known/terraform.json" }},
		{"versions", func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/versions") }},
		{"download metadata", func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/download/") }},
		{"SHA256SUMS", func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "_SHA256SUMS") }},
		{"signature", func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "_SHA256SUMS.sig") }},
		{"archive", func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, ".zip") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := registrytest.New(t, alpha())
			var plainAsked atomic.Int32
			plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				plainAsked.Add(1)
				origin := r.URL.Query().Get("origin")
				if origin == "" { // a URL relative to a document it proxied
					origin = srv.URL()
				}
				resp, err := srv.Client().Get(origin + r.URL.Path + "?via=plain")
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				defer resp.Body.Close()
				w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
				w.WriteHeader(resp.StatusCode)
				io.Copy(w, resp.Body)
			}))
			t.Cleanup(plain.Close)
			srv.Wrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Query().Get("via") == "" && tc.match(r) {
						http.Redirect(w, r, plain.URL+r.URL.Path+"?origin="+url.QueryEscape("https://"+r.Host), http.StatusFound)
						return
					}
					next.ServeHTTP(w, r)
				})
			})
			r := open(t, srv, nil)
			p := provider(t, srv.Host(), "acme", "alpha")
			var detail string
			as, err := r.Archives(context.Background(), p, version(t, "1.0.0"))
			if err == nil {
				for _, a := range as {
					if f := sync.VerifyArchive(context.Background(), r, a, hashing.Options{}); f.Status != sync.StatusOK {
						detail = f.Detail
					}
				}
				if detail == "" {
					t.Fatalf("%s over plain http was used", tc.name)
				}
			} else {
				detail = err.Error()
			}
			if !strings.Contains(detail, "https://127.0.0.1:") || !strings.Contains(detail, "redirects to "+plain.URL+"/") || !strings.Contains(detail, "refusing to leave https for plain http") {
				t.Errorf("error %q, want it to name both URLs and refuse", detail)
			}
			if n := plainAsked.Load(); n != 0 {
				t.Errorf("the plain server was asked %d times", n)
			}
		})
	}
}

// TestTokenStaysOnTheRegistryHost: the registry's token goes to discovery
// and to a providers.v1 on the registry's own host and port only; a
// providers.v1 that discovery puts on another port, or on plain http, gets
// no token.
func TestTokenStaysOnTheRegistryHost(t *testing.T) {
	const token = "s3cret-token"
	api := registrytest.New(t, alpha()) // serves the API the discovery names
	var plainAuth []string
	var mu gosync.Mutex
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		plainAuth = append(plainAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(plain.Close)
	for _, tc := range []struct{ name, base string }{
		{"another port", api.URL() + "/v1/providers/"},
		{"plain http", plain.URL + "/v1/providers/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api.Reset()
			disco := registrytest.New(t, alpha())
			disco.Wrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/.well-known/terraform.json" {
						next.ServeHTTP(httptest.NewRecorder(), r) // recorded, with its Authorization
						w.Header().Set("Content-Type", "application/json")
						fmt.Fprintf(w, `{"providers.v1": %q}`, tc.base)
						return
					}
					next.ServeHTTP(w, r)
				})
			})
			r := open(t, disco, backends.TokenMap{disco.Host(): token})
			r.Archives(context.Background(), provider(t, disco.Host(), "acme", "alpha"), version(t, "1.0.0"))
			for _, req := range disco.Requests() {
				if req.Kind != registrytest.KindDiscovery || req.Authorization != "Bearer "+token {
					t.Errorf("registry: %s %s Authorization %q, want discovery only, with the token", req.Kind, req.Path, req.Authorization)
				}
			}
			var seen int
			for _, req := range api.Requests() {
				seen++
				if req.Authorization != "" {
					t.Errorf("API on another port: %s %s got Authorization %q", req.Kind, req.Path, req.Authorization)
				}
			}
			mu.Lock()
			for _, a := range plainAuth {
				seen++
				if a != "" {
					t.Errorf("API over http got Authorization %q", a)
				}
			}
			plainAuth = nil
			mu.Unlock()
			if seen == 0 {
				t.Error("the API was never asked; the test proves nothing")
			}
		})
	}
}

// SignedHashes gives the zh: of every platform in the version's signed
// SHA256SUMS (what the clients lock), from the document Archives checked,
// or fetching and checking it when Archives was not called; it never
// returns hashes from a document whose signature does not check.
func TestSignedHashes(t *testing.T) {
	ctx := context.Background()
	srv := registrytest.New(t, alpha())
	p := provider(t, srv.Host(), "acme", "alpha")
	want := []hashing.Hash{
		hashing.Hash("zh:" + srv.SHA256("acme", "alpha", "1.0.0", "darwin_arm64")),
		hashing.Hash("zh:" + srv.SHA256("acme", "alpha", "1.0.0", "linux_amd64")),
	}
	want = hashing.SortUnique(want)

	r := open(t, srv, nil)
	got, err := r.SignedHashes(ctx, p, version(t, "1.0.0"))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("without Archives first: %v, %v; want %v", got, err, want)
	}
	r = open(t, srv, nil)
	if _, err := r.Archives(ctx, p, version(t, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	sums := srv.Count(registrytest.KindSums)
	got, err = r.SignedHashes(ctx, p, version(t, "1.0.0"))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after Archives: %v, %v; want %v", got, err, want)
	}
	if srv.Count(registrytest.KindSums) != sums {
		t.Error("SHA256SUMS fetched again")
	}
	if got, err := r.SignedHashes(ctx, p, version(t, "1.1.0")); err != nil || len(got) != 1 {
		t.Errorf("1.1.0: %v, %v", got, err)
	}

	bad := registrytest.NewWithOptions(t, registrytest.Options{Faults: registrytest.Faults{UnknownKey: true}}, alpha())
	if got, err := open(t, bad, nil).SignedHashes(ctx, provider(t, bad.Host(), "acme", "alpha"), version(t, "1.0.0")); err == nil {
		t.Errorf("hashes from a document no key of the registry signed: %v", got)
	}
}

// TestRefreshListsAfresh: a registry's versions are listed once and
// remembered; after Refresh the next listing asks the registry again.
func TestRefreshListsAfresh(t *testing.T) {
	srv := registrytest.New(t, alpha())
	r := open(t, srv, nil)
	ctx := context.Background()
	p := provider(t, srv.Host(), "acme", "alpha")
	for range 2 {
		if _, err := r.Versions(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Count(registrytest.KindVersions); n != 1 {
		t.Fatalf("two listings made %d versions requests, want 1 (remembered)", n)
	}
	r.Refresh(p)
	vs, err := r.Versions(ctx, p)
	if err != nil || len(vs) != 2 {
		t.Fatalf("after Refresh: %v, %v", vs, err)
	}
	if n := srv.Count(registrytest.KindVersions); n != 2 {
		t.Errorf("the listing after Refresh made %d versions requests in all, want 2", n)
	}
}
