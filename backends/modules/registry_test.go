package modules_test

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
)

func newRegistry(t *testing.T, s *modulestest.Server, creds backends.Credentials) *modules.Registry {
	t.Helper()
	r, err := modules.NewRegistry("registry://"+s.Host(), s.Host(), modules.Options{HTTP: httpclient.Client{HTTP: s.Client()}, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustModule(t *testing.T, host, s string) modules.Module {
	t.Helper()
	m, err := modules.ParseModule(s, host)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustVersion(t *testing.T, s string) modules.Version {
	t.Helper()
	v, err := modules.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustConstraint(t *testing.T, s string) backends.VersionConstraint {
	t.Helper()
	c, err := backends.ParseVersionConstraint(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDownloadLocations runs every style of download answer the clients
// accept through a real TLS registry, and checks where each lands.
func TestDownloadLocations(t *testing.T) {
	s := modulestest.New(t)
	base := s.URL() + "/v1/modules/acme/net/aws/"
	cases := []struct {
		listed string
		d      modulestest.Download
		want   string // Location.String()
		source string
		subdir string
		via    string
		direct bool
	}{
		{"1.0.0", modulestest.Download{Location: "https://example.com/net-1.0.0.zip"}, "https://example.com/net-1.0.0.zip", "https://example.com/net-1.0.0.zip", "", "body", false},
		// Relative to the download URL: "./x" replaces the "download" segment.
		{"1.1.0", modulestest.Download{Location: "./pkg.zip"}, base + "1.1.0/pkg.zip", base + "1.1.0/pkg.zip", "", "body", false},
		{"1.2.0", modulestest.Download{Location: "../archive/1.2.0.tar.gz", Style: modulestest.Header204}, base + "archive/1.2.0.tar.gz", base + "archive/1.2.0.tar.gz", "", "X-Terraform-Get", false},
		{"1.3.0", modulestest.Download{Location: "/files/1.3.0.zip", Style: modulestest.HeaderEmptyJSON}, s.URL() + "/files/1.3.0.zip", s.URL() + "/files/1.3.0.zip", "", "X-Terraform-Get", false},
		// A subdir stays out of the package address, before the query when
		// printed.
		{"1.4.0", modulestest.Download{Location: "git::https://example.com/r.git//modules/vpc?ref=v1.4.0"}, "git::https://example.com/r.git//modules/vpc?ref=v1.4.0", "git::https://example.com/r.git?ref=v1.4.0", "modules/vpc", "body", false},
		// Listed with a "v" and short: asked for at the canonical version.
		{"v1.5", modulestest.Download{Location: "https://example.com/1.5.0.zip"}, "https://example.com/1.5.0.zip", "https://example.com/1.5.0.zip", "", "body", false},
		// Direct: any relative URL resolves; the format will be sniffed.
		{"1.6.0", modulestest.Download{Location: "pkg", Style: modulestest.Direct, UseCreds: true}, base + "1.6.0/pkg", base + "1.6.0/pkg", "", "body", true},
	}
	for _, c := range cases {
		s.Add("acme/net/aws", c.listed, c.d)
	}
	r := newRegistry(t, s, nil)
	m := mustModule(t, s.Host(), "acme/net/aws")
	ls, err := r.ListModule(context.Background(), m, backends.VersionConstraint{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Items) != len(cases) {
		t.Fatalf("listed %d versions, want %d", len(ls.Items), len(cases))
	}
	byVersion := map[string]modules.Listing{}
	for _, it := range ls.Items {
		byVersion[it.Version.String()] = it
	}
	for _, c := range cases {
		v, _ := modules.ParseVersion(c.listed)
		it, ok := byVersion[v.String()]
		if !ok {
			t.Errorf("%s: not listed", c.listed)
			continue
		}
		if it.Err != nil {
			t.Errorf("%s: %v", c.listed, it.Err)
			continue
		}
		if it.Listed != c.listed || it.Location != c.want || it.Source.Source != c.source || it.Source.Subdir != c.subdir || it.Source.Via != c.via || it.Source.Direct != c.direct {
			t.Errorf("%s: got listed %q location %q source %q subdir %q via %q direct %v\nwant %q %q %q %q %q %v", c.listed,
				it.Listed, it.Location, it.Source.Source, it.Source.Subdir, it.Source.Via, it.Source.Direct,
				c.listed, c.want, c.source, c.subdir, c.via, c.direct)
		}
	}
	if n := s.Count("/1.5.0/download"); n != 1 {
		t.Errorf("the canonical download URL for v1.5 was asked %d times, want 1 (requests: %v)", n, s.Requests())
	}
	if n := s.Count("/.well-known/terraform.json"); n != 1 {
		t.Errorf("discovery ran %d times, want once", n)
	}
	// Newest first.
	if got := ls.Items[0].Version.String(); got != "1.6.0" {
		t.Errorf("first listed %s, want 1.6.0", got)
	}
}

// TestVersionSelection: versions that do not parse are skipped with a
// warning, prereleases only come with a constraint that names them.
func TestVersionSelection(t *testing.T) {
	s := modulestest.New(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0-beta1", "v2.0.0"} {
		s.Add("acme/net/aws", v, modulestest.Download{Location: "https://example.com/" + v + ".zip"})
	}
	s.List("acme/net/aws", "not-a-version", "1.1")
	r := newRegistry(t, s, nil)
	m := mustModule(t, s.Host(), "acme/net/aws")
	for _, c := range []struct {
		constraint string
		want       string
	}{
		{"", "2.0.0 2.0.0-beta1 1.1.0 1.0.0"},
		{">= 1.0", "2.0.0 1.1.0 1.0.0"},
		{"~> 1.0", "1.1.0 1.0.0"},
		{"latest", "2.0.0"},
		{"= 2.0.0-beta1", "2.0.0-beta1"},
		{"< 1.0", ""},
	} {
		ls, err := r.ListModule(context.Background(), m, mustConstraint(t, c.constraint))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range ls.Items {
			got = append(got, it.Version.String())
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%q: got %v, want %s", c.constraint, got, c.want)
		}
		if len(ls.Warnings) != 1 || !strings.Contains(ls.Warnings[0], `"not-a-version"`) {
			t.Errorf("%q: warnings %q, want one about not-a-version", c.constraint, ls.Warnings)
		}
	}
}

func TestRegistryErrors(t *testing.T) {
	s := modulestest.New(t)
	s.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "https://example.com/a.zip", Style: modulestest.BadBody})
	s.Add("acme/net/aws", "1.1.0", modulestest.Download{Location: "acme/other/aws", Style: modulestest.Body})
	s.Add("acme/net/aws", "1.2.0", modulestest.Download{Location: "", Style: modulestest.Header204})
	s.Add("acme/net/aws", "1.3.0", modulestest.Download{Location: "ftp://example.com/x.zip", Style: modulestest.Direct})
	s.Add("acme/net/aws", "1.4.0", modulestest.Download{Location: "https://example.com/x.zip#frag", Style: modulestest.Direct})
	s.Add("acme/net/aws", "1.5.0", modulestest.Download{Location: "git::https://example.com/r.git//../up?ref=x"})
	s.Add("acme/net/aws", "1.6.0", modulestest.Download{Location: "example.com/acme/other/aws"})
	s.Handle("/v1/modules/acme/net/aws/1.7.0/download", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop/a", http.StatusFound)
	})
	s.Handle("/loop/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop/b", http.StatusFound) })
	s.Handle("/loop/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop/a", http.StatusFound) })
	s.List("acme/net/aws", "1.7.0")
	s.Handle("/v1/modules/acme/net/aws/1.8.0/download", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	s.List("acme/net/aws", "1.8.0")

	r := newRegistry(t, s, nil)
	m := mustModule(t, s.Host(), "acme/net/aws")
	ctx := context.Background()
	for _, c := range []struct {
		version   string
		want      string
		sentinel  error
		transient bool
	}{
		{"1.0.0", "not a JSON download document", nil, false},
		{"1.1.0", "another registry address", nil, false},
		{"1.2.0", "no location", nil, false},
		{"1.3.0", "must be an http or https URL", nil, false},
		{"1.4.0", "must not have a fragment", nil, false},
		{"1.5.0", "leads outside of the package", nil, false},
		{"1.6.0", "another registry address", nil, false},
		{"1.7.0", "redirect loop", modules.ErrRedirectLoop, false},
		{"1.8.0", "HTTP 503", nil, true},
		{"9.9.9", "not found", backends.ErrNotFound, false},
	} {
		v, _ := modules.ParseVersion(c.version)
		_, err := r.Location(ctx, m, v)
		if err == nil {
			t.Errorf("%s: no error, want %q", c.version, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "acme/net/aws "+c.version) {
			t.Errorf("%s: error %q, want it to contain %q and name the module and version", c.version, err, c.want)
		}
		if c.sentinel != nil && !errors.Is(err, c.sentinel) {
			t.Errorf("%s: error %q does not wrap %v", c.version, err, c.sentinel)
		}
		if backends.IsTransient(err) != c.transient {
			t.Errorf("%s: transient = %v, want %v (%v)", c.version, !c.transient, c.transient, err)
		}
	}
	if _, err := r.Versions(ctx, mustModule(t, s.Host(), "acme/none/aws")); !errors.Is(err, backends.ErrNotFound) {
		t.Errorf("unknown module: %v, want ErrNotFound", err)
	}
}

func TestRegistryToken(t *testing.T) {
	s := modulestest.New(t)
	s.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "https://example.com/a.zip"})
	s.RequireToken("s3cret")
	m := mustModule(t, s.Host(), "acme/net/aws")
	_, err := newRegistry(t, s, nil).Versions(context.Background(), m)
	if !errors.Is(err, backends.ErrUnauthorized) || !strings.Contains(err.Error(), "TF_TOKEN_127_0_0_1") {
		t.Fatalf("without a token: %v, want ErrUnauthorized naming the TF_TOKEN_ variable", err)
	}
	r := newRegistry(t, s, backends.TokenMap{s.Host(): "s3cret"})
	ls, err := r.ListModule(context.Background(), m, backends.VersionConstraint{})
	if err != nil || len(ls.Items) != 1 || ls.Items[0].Err != nil {
		t.Fatalf("with a token: %v %+v", err, ls)
	}
}

func TestDiscovery(t *testing.T) {
	ctx := context.Background()
	t.Run("relative base", func(t *testing.T) {
		s := modulestest.New(t)
		s.SetBase("v1/modules") // relative to the document, no trailing slash
		s.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "./p.zip"})
		r := newRegistry(t, s, nil)
		m := mustModule(t, s.Host(), "acme/net/aws")
		// "v1/modules" relative to /.well-known/terraform.json is
		// /.well-known/v1/modules/, which this server does not serve.
		if _, err := r.Versions(ctx, m); !errors.Is(err, backends.ErrNotFound) {
			t.Fatalf("got %v, want not found at /.well-known/v1/modules/", err)
		}
		if s.Count("GET /.well-known/v1/modules/acme/net/aws/versions") != 1 {
			t.Fatalf("requests: %v", s.Requests())
		}
		s2 := modulestest.New(t)
		s2.SetBase("../v1/modules")
		s2.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "./p.zip"})
		m2 := mustModule(t, s2.Host(), "acme/net/aws")
		loc, err := newRegistry(t, s2, nil).Location(ctx, m2, mustVersion(t, "1.0.0"))
		if err != nil || loc.Source != s2.URL()+"/v1/modules/acme/net/aws/1.0.0/p.zip" {
			t.Fatalf("got %v %v", loc, err)
		}
	})
	t.Run("no modules.v1", func(t *testing.T) {
		s := modulestest.New(t)
		s.Handle("/.well-known/terraform.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"providers.v1":"/v1/providers/"}`))
		})
		_, err := newRegistry(t, s, nil).Versions(ctx, mustModule(t, s.Host(), "acme/net/aws"))
		if err == nil || !strings.Contains(err.Error(), "offers no modules.v1 service (it offers providers.v1)") || !errors.Is(err, httpclient.ErrNoService) {
			t.Fatalf("got %v", err)
		}
	})
	// Service discovery wants application/json, as the clients' does.
	t.Run("not json", func(t *testing.T) {
		s := modulestest.New(t)
		s.Handle("/.well-known/terraform.json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`<html>`)) })
		_, err := newRegistry(t, s, nil).Versions(ctx, mustModule(t, s.Host(), "acme/net/aws"))
		if err == nil || !strings.Contains(err.Error(), `served as "text/html; charset=utf-8", want application/json`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("empty modules", func(t *testing.T) {
		s := modulestest.New(t)
		s.Handle("/v1/modules/acme/net/aws/versions", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"modules":[]}`)) })
		_, err := newRegistry(t, s, nil).Versions(ctx, mustModule(t, s.Host(), "acme/net/aws"))
		if err == nil || !strings.Contains(err.Error(), `"modules" is empty`) {
			t.Fatalf("got %v", err)
		}
	})
}

// TestRegistryTokenStaysOnItsHost: the registry's token goes to the
// registry's own host and port over https only: never to a modules.v1 that
// discovery puts on another host, another port or plain http, nor past a
// redirect that leaves the registry, even one that comes back.
func TestRegistryTokenStaysOnItsHost(t *testing.T) {
	const registry = "registry.example.com"
	const dl = "/v1/modules/acme/net/aws/1.0.0/download"
	cases := []struct {
		name  string
		setup func(a, b, c *modulestest.Server)
		want  []string // "SERVER PATH AUTHORIZATION" in order, a's then b's then c's
	}{
		{"modules.v1 on the registry", func(a, b, c *modulestest.Server) {}, []string{
			"a /.well-known/terraform.json Bearer tok", "a /v1/modules/acme/net/aws/versions Bearer tok", "a " + dl + " Bearer tok"}},
		{"modules.v1 on another host", func(a, b, c *modulestest.Server) { a.SetBase("https://modules.example.com/v1/modules/") }, []string{
			"a /.well-known/terraform.json Bearer tok", "b /v1/modules/acme/net/aws/versions ", "b " + dl + " "}},
		{"modules.v1 on another port", func(a, b, c *modulestest.Server) { a.SetBase("https://" + registry + ":8443/v1/modules/") }, []string{
			"a /.well-known/terraform.json Bearer tok", "b /v1/modules/acme/net/aws/versions ", "b " + dl + " "}},
		{"modules.v1 over http", func(a, b, c *modulestest.Server) { a.SetBase("http://" + registry + "/v1/modules/") }, []string{
			"a /.well-known/terraform.json Bearer tok", "c /v1/modules/acme/net/aws/versions ", "c " + dl + " "}},
		{"redirect to another port and back", func(a, b, c *modulestest.Server) {
			a.Handle(dl, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://"+registry+":8443/elsewhere", http.StatusFound)
			})
			b.Handle("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://"+registry+"/back", http.StatusFound)
			})
			a.Handle("/back", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Terraform-Get", "https://example.com/a.zip")
				w.WriteHeader(http.StatusNoContent)
			})
		}, []string{
			"a /.well-known/terraform.json Bearer tok", "a /v1/modules/acme/net/aws/versions Bearer tok", "a " + dl + " Bearer tok", "a /back ",
			"b /elsewhere "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := modulestest.New(t), modulestest.New(t), modulestest.NewPlain(t)
			for _, s := range []*modulestest.Server{a, b, c} {
				s.Add("acme/net/aws", "1.0.0", modulestest.Download{Location: "https://example.com/a.zip"})
			}
			tc.setup(a, b, c)
			hc := modulestest.Names(map[string]*modulestest.Server{
				registry + ":443": a, "modules.example.com:443": b, registry + ":8443": b, registry + ":80": c,
			})
			r, err := modules.NewRegistry("registry://"+registry, registry, modules.Options{HTTP: httpclient.Client{HTTP: hc}, Credentials: backends.TokenMap{registry: "tok"}})
			if err != nil {
				t.Fatal(err)
			}
			m := mustModule(t, registry, "acme/net/aws")
			if _, err := r.Versions(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Location(context.Background(), m, mustVersion(t, "1.0.0")); err != nil {
				t.Fatal(err)
			}
			var got []string
			for name, s := range map[string]*modulestest.Server{"a": a, "b": b, "c": c} {
				for _, seen := range s.Seen() {
					got = append(got, name+" "+seen.Path+" "+seen.Authorization)
				}
			}
			sort.SliceStable(got, func(i, j int) bool { return got[i][0] < got[j][0] })
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
