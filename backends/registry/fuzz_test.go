package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// fakeRelease is a registry served by one TLS server whose answers come
// from the fuzzer for one endpoint and are correct for the rest: service
// discovery, the versions list, one platform's download metadata, and a
// SHA256SUMS signed with a real key.
type fakeRelease struct {
	srv    *httptest.Server
	client *http.Client
	host   string

	mu                        gosync.Mutex
	disco, versions, download []byte

	zipSum  string
	sums    []byte
	sig     []byte
	armored string
}

func newFakeRelease(f *testing.F) *fakeRelease {
	r := &fakeRelease{}
	key, err := registrytest.NewKey("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	if r.armored, err = registrytest.ArmoredPublicKey(key); err != nil {
		f.Fatal(err)
	}
	zb := registrytest.ProviderZip("alpha", "1.0.0", "")
	sum := sha256.Sum256(zb)
	r.zipSum = hex.EncodeToString(sum[:])
	r.sums = []byte(fmt.Sprintf("%s  terraform-provider-alpha_1.0.0_linux_amd64.zip\n", r.zipSum))
	if r.sig, err = registrytest.Sign(key, r.sums); err != nil {
		f.Fatal(err)
	}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		p := req.URL.Path
		switch {
		case p == "/.well-known/terraform.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write(r.disco)
		case strings.HasSuffix(p, "/versions"):
			w.Header().Set("Content-Type", "application/json")
			w.Write(r.versions)
		case strings.Contains(p, "/download/"):
			w.Header().Set("Content-Type", "application/json")
			w.Write(r.download)
		case strings.HasSuffix(p, "_SHA256SUMS"):
			w.Write(r.sums)
		case strings.HasSuffix(p, "_SHA256SUMS.sig"):
			w.Write(r.sig)
		default:
			http.NotFound(w, req)
		}
	}))
	f.Cleanup(r.srv.Close)
	r.client = loopbackOnly(r.srv)
	u, _ := url.Parse(r.srv.URL)
	r.host = u.Host
	r.disco, r.versions, r.download = r.goodDisco(), r.goodVersions(), r.goodDownload()
	return r
}

func (r *fakeRelease) goodDisco() []byte { return []byte(`{"providers.v1":"/v1/providers/"}`) }

func (r *fakeRelease) goodVersions() []byte {
	return []byte(`{"versions":[{"version":"1.0.0","protocols":["5.0"],"platforms":[{"os":"linux","arch":"amd64"}]}]}`)
}

func (r *fakeRelease) goodDownload() []byte {
	base := "https://" + r.host + "/files/"
	return []byte(fmt.Sprintf(`{"protocols":["5.0"],"os":"linux","arch":"amd64","filename":"terraform-provider-alpha_1.0.0_linux_amd64.zip",`+
		`"download_url":%q,"shasums_url":%q,"shasums_signature_url":%q,"shasum":%q,`+
		`"signing_keys":{"gpg_public_keys":[{"key_id":"x","ascii_armor":%q}]},`+
		`"packages":{"linux_amd64":{"hashes":["zh:%s"],"package_size":1234}}}`,
		base+"terraform-provider-alpha_1.0.0_linux_amd64.zip", base+"terraform-provider-alpha_1.0.0_SHA256SUMS",
		base+"terraform-provider-alpha_1.0.0_SHA256SUMS.sig", r.zipSum, r.armored, r.zipSum))
}

func (r *fakeRelease) set(disco, versions, download []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.disco, r.versions, r.download = disco, versions, download
}

// loopbackOnly returns a client for srv that refuses to dial anything else
// at once: fuzzed URLs name any host, and no test reaches beyond its own
// server (nor waits on a DNS lookup).
func loopbackOnly(srv *httptest.Server) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if a != addr {
			return nil, fmt.Errorf("fuzz: dial %s refused: only %s is reachable", a, addr)
		}
		return dial(ctx, network, a)
	}
	return &http.Client{Transport: tr}
}

func (r *fakeRelease) open(t testing.TB) (*Registry, backends.Provider) {
	reg, err := Open("registry://"+r.host, r.host, Options{HTTP: httpclient.Client{
		HTTP: r.client, Timeout: 10 * time.Second, Retries: -1, MaxDocument: 1 << 20,
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := backends.NewProvider(r.host, "acme", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	return reg, p
}

// checkArchives holds for whatever a registry said: every archive listed is
// the package asked for, at an absolute http(s) URL, vouched for by the
// signed SHA256SUMS.
func checkArchives(t *testing.T, p backends.Provider, as []backends.Archive, zipSum string) {
	for _, a := range as {
		if a.Provider != p || a.Layout != backends.Packed {
			t.Fatalf("archive %+v is not the package asked for", a.Package)
		}
		if _, err := backends.ParsePlatform(a.Platform.String()); err != nil {
			t.Fatalf("platform %q: %v", a.Platform, err)
		}
		u, err := url.Parse(a.Location)
		if err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") {
			t.Fatalf("location %q is not an absolute http(s) URL", a.Location)
		}
		if a.Size == 0 || a.Size < -1 {
			t.Fatalf("size %d", a.Size)
		}
		signed := false
		for _, ev := range a.Evidence {
			for _, h := range ev.Hashes {
				if _, err := hashing.ParseHash(string(h)); err != nil {
					t.Fatalf("hash %q: %v", h, err)
				}
				if ev.Source.Kind == hashing.SourceRegistrySigned {
					signed = signed || h == hashing.Hash("zh:"+zipSum)
				}
			}
		}
		if !signed {
			t.Fatalf("archive listed without the signed zh: hash: %+v", a.Evidence)
		}
	}
}

// FuzzDiscovery: whatever the service discovery document holds, reading
// the registry ends in versions or an error naming the registry.
func FuzzDiscovery(f *testing.F) {
	for _, seed := range []string{
		`{"providers.v1":"/v1/providers/"}`, `{"providers.v1":"https://127.0.0.1:1/v1/"}`,
		`{"providers.v1":"ftp://x/"}`, `{"providers.v1":"https://user:pw@x/"}`, `{"providers.v1":1}`,
		`{"modules.v1":"/m/"}`, `{}`, `[]`, `{"providers.v1":"%zz"}`, `{"providers.v1":"//other.example/p/?q=1#f"}`,
	} {
		f.Add([]byte(seed))
	}
	r := newFakeRelease(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		r.set(doc, r.goodVersions(), r.goodDownload())
		reg, p := r.open(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		vs, err := reg.Versions(ctx, p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "registry "+r.host+": ") {
				t.Fatalf("error %q does not name the registry", err)
			}
			return
		}
		if len(vs) != 1 || vs[0].String() != "1.0.0" {
			t.Fatalf("versions %v", vs)
		}
	})
}

// FuzzVersionsList: whatever the versions list holds, Versions returns
// valid versions and Archives only what the signed release vouches for.
func FuzzVersionsList(f *testing.F) {
	for _, seed := range []string{
		`{"versions":[{"version":"1.0.0","protocols":["5.0"],"platforms":[{"os":"linux","arch":"amd64"}]}]}`,
		`{"versions":[{"version":"1.0.0","platforms":[{"os":"linux","arch":"amd64"},{"os":"../x","arch":"y"},{"os":"","arch":""}]},{"version":"2.0.0"}],"warnings":["deprecated"]}`,
		`{"versions":[{"version":"../../x"}]}`, `{"versions":[]}`, `{"versions":null}`, `{}`,
		`{"versions":[{"version":"1.0.0","platforms":[{"os":"linux","arch":"amd64"},{"os":"linux","arch":"amd64"}]}]}`,
		`{"versions":[{"version":"1.0.0"},{"version":"1.0.0+x"},{"version":"1.0.0"}]}`,
	} {
		f.Add([]byte(seed))
	}
	r := newFakeRelease(f)
	v1, _ := backends.ParseVersion("1.0.0")
	f.Fuzz(func(t *testing.T, doc []byte) {
		r.set(r.goodDisco(), doc, r.goodDownload())
		reg, p := r.open(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		vs, err := reg.Versions(ctx, p)
		if err != nil {
			return
		}
		for _, v := range vs {
			if _, err := backends.ParseVersion(v.String()); err != nil {
				t.Fatalf("version %q: %v", v, err)
			}
		}
		as, err := reg.Archives(ctx, p, v1)
		if err == nil {
			checkArchives(t, p, as, r.zipSum)
		}
	})
}

// FuzzDownloadMetadata: whatever one platform's download metadata holds,
// Archives lists it only with a valid URL and the signed hash, or reports
// an error naming the registry and the package.
func FuzzDownloadMetadata(f *testing.F) {
	r := newFakeRelease(f)
	good := r.goodDownload()
	f.Add(good)
	for _, edit := range [][2]string{
		{`"os":"linux"`, `"os":"darwin"`},
		{`"filename":"terraform-provider-alpha_1.0.0_linux_amd64.zip"`, `"filename":"../x.zip"`},
		{`"package_size":1234`, `"package_size":-1`},
		{`"package_size":1234`, `"package_size":1e30`},
		{`"hashes":["zh:`, `"hashes":["h1:`},
		{`"download_url":"https://`, `"download_url":"file://`},
		{`"linux_amd64":{`, `"../../x_y":{`},
		{`"ascii_armor":"`, `"ascii_armor":"x`},
		{`"shasum":"`, `"shasum":"00`},
	} {
		f.Add([]byte(strings.Replace(string(good), edit[0], edit[1], 1)))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"os":"linux","arch":"amd64","packages":{}}`))
	v1, _ := backends.ParseVersion("1.0.0")
	// The honest release lists, so the fuzzer starts from the deepest path.
	reg, p := r.open(f)
	if as, err := reg.Archives(context.Background(), p, v1); err != nil || len(as) != 1 {
		f.Fatalf("the honest release: %v %v", as, err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		r.set(r.goodDisco(), r.goodVersions(), doc)
		reg, p := r.open(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		as, err := reg.Archives(ctx, p, v1)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "registry "+r.host+": acme/alpha 1.0.0") {
				t.Fatalf("error %q does not name the registry and the package", err)
			}
			return
		}
		checkArchives(t, p, as, r.zipSum)
	})
}
