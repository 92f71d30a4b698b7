package fetch_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modulestest"
)

var testModule = modulestest.Net

func version(t *testing.T, s string) modules.Version {
	t.Helper()
	v, err := modules.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// zipContents reads a packed zip: name -> body, and name -> mode.
func zipContents(t *testing.T, path string) (map[string]string, map[string]fs.FileMode) {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	bodies, modes := map[string]string{}, map[string]fs.FileMode{}
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		bodies[f.Name] = string(b)
		modes[f.Name] = f.Mode()
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("entries are not sorted: %v", names)
	}
	return bodies, modes
}

func build(t *testing.T, b *fetch.Builder, loc modules.Location) (*modules.Package, error) {
	t.Helper()
	pkg, err := b.Build(context.Background(), testModule, version(t, "1.0.0"), loc, nil)
	if err == nil {
		t.Cleanup(func() { pkg.Remove() })
	}
	return pkg, err
}

var moduleFiles = []modulestest.Entry{
	{Name: "main.tf", Body: `variable "x" {}`},
	{Name: "modules/vpc/main.tf", Body: `module "up" { source = "../.." }`},
	{Name: "scripts/run.sh", Body: "#!/bin/sh\n", Mode: 0o755},
	{Name: "README.md", Body: "readme"},
}

func TestBuildHTTPArchives(t *testing.T) {
	s := modulestest.New(t)
	zipBytes := modulestest.Zip(t, moduleFiles)
	tgz := modulestest.TarGz(t, moduleFiles)
	sum := sha256.Sum256(tgz)
	s.File("/pkg/net.zip", zipBytes)
	s.File("/pkg/net.tar.gz", tgz)
	s.File("/pkg/blob", tgz)
	s.File("/pkg/mislabelled", zipBytes)
	s.Handle("/indirect", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("terraform-get") != "1" {
			http.Error(w, "want terraform-get=1", http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Terraform-Get", "./pkg/net.tar.gz")
		w.WriteHeader(http.StatusNoContent)
	})
	s.Handle("/indirect-sub", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><head><meta name="terraform-get" content="/pkg/net.zip//modules"></head></html>`))
	})
	b := fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: s.Client()}, TempDir: t.TempDir()})

	var first *modules.Package
	for _, c := range []struct {
		name   string
		source string
		direct bool
		files  []string
	}{
		{"zip", s.URL() + "/pkg/net.zip", false, nil},
		{"tar.gz", s.URL() + "/pkg/net.tar.gz", false, nil},
		{"archive argument", s.URL() + "/pkg/blob?archive=tgz", false, nil},
		{"checksum", s.URL() + "/pkg/net.tar.gz?checksum=sha256:" + hex.EncodeToString(sum[:]), false, nil},
		{"https:: getter", "https::" + s.URL() + "/pkg/net.zip", false, nil},
		{"X-Terraform-Get", s.URL() + "/indirect", false, nil},
		{"direct, sniffed", s.URL() + "/pkg/blob", true, nil},
		{"direct, mislabelled", s.URL() + "/pkg/mislabelled", true, nil},
		{"meta tag with subdir", s.URL() + "/indirect-sub", false, []string{"vpc/main.tf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pkg, err := build(t, b, modules.Location{Source: c.source, Direct: c.direct})
			if err != nil {
				t.Fatal(err)
			}
			bodies, modes := zipContents(t, pkg.Path)
			if c.files != nil {
				var names []string
				for n := range bodies {
					names = append(names, n)
				}
				if strings.Join(names, ",") != strings.Join(c.files, ",") {
					t.Fatalf("files %v, want %v", names, c.files)
				}
				return
			}
			if len(bodies) != 4 || bodies["modules/vpc/main.tf"] != `module "up" { source = "../.." }` {
				t.Fatalf("contents %v", bodies)
			}
			if modes["scripts/run.sh"] != 0o755 || modes["main.tf"] != 0o644 {
				t.Errorf("modes %v, want 0755 for the script and 0644 otherwise", modes)
			}
			if pkg.Files != 4 || pkg.Size <= 0 || pkg.Sums.H1 == "" || !strings.HasPrefix(pkg.Digest(), "sha256:") {
				t.Errorf("package %+v", pkg)
			}
			// The same files from any archive format give the same bytes.
			if first == nil {
				first = pkg
			} else if pkg.Sums != first.Sums {
				t.Errorf("sums %v differ from the first build's %v", pkg.Sums, first.Sums)
			}
		})
	}
}

func TestBuildRefusals(t *testing.T) {
	s := modulestest.New(t)
	bomb := modulestest.Zip(t, []modulestest.Entry{{Name: "big.tf", Body: strings.Repeat("#", 4<<20)}})
	serve := map[string][]byte{
		"/dotdot.zip":         modulestest.Zip(t, []modulestest.Entry{{Name: "main.tf", Body: "x"}, {Name: "../evil.tf", Body: "x"}}),
		"/dotdot-inner.zip":   modulestest.Zip(t, []modulestest.Entry{{Name: "a/../../evil.tf", Body: "x"}}),
		"/backslash.zip":      modulestest.Zip(t, []modulestest.Entry{{Name: `a\..\..\evil.tf`, Body: "x"}}),
		"/absolute.zip":       modulestest.Zip(t, []modulestest.Entry{{Name: "/etc/evil.tf", Body: "x"}}),
		"/absolute.tar.gz":    modulestest.TarGz(t, []modulestest.Entry{{Name: "/etc/evil.tf", Body: "x"}}),
		"/dotdot.tar.gz":      modulestest.TarGz(t, []modulestest.Entry{{Name: "../evil.tf", Body: "x"}}),
		"/escape.tar.gz":      modulestest.TarGz(t, []modulestest.Entry{{Name: "main.tf", Body: "x"}, {Name: "link", Link: "../../etc/passwd"}}),
		"/escape-abs.zip":     modulestest.Zip(t, []modulestest.Entry{{Name: "main.tf", Body: "x"}, {Name: "link", Link: "/etc/passwd"}}),
		"/through-link.tgz":   modulestest.TarGz(t, []modulestest.Entry{{Name: "d", Link: "."}, {Name: "d/x.tf", Body: "x"}}),
		"/empty.zip":          modulestest.Zip(t, nil),
		"/only-dirs.zip":      modulestest.Zip(t, []modulestest.Entry{{Name: "a/", Dir: true}}),
		"/bomb.zip":           bomb,
		"/not-an-archive":     []byte("<html>hello</html>"),
		"/corrupt.zip":        []byte("PK\x03\x04 this is not really a zip"),
		"/xz.tar.xz":          []byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 0},
		"/inside-link.tar.gz": modulestest.TarGz(t, []modulestest.Entry{{Name: "main.tf", Body: "x"}, {Name: "link.tf", Link: "main.tf"}}),
	}
	for p, b := range serve {
		s.File(p, b)
	}
	s.Handle("/redirect-a.zip", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/redirect-b.zip", http.StatusFound) })
	s.Handle("/redirect-b.zip", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/redirect-a.zip", http.StatusFound) })
	s.Handle("/xtg-loop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Terraform-Get", "/xtg-loop")
		w.WriteHeader(http.StatusNoContent)
	})
	s.Handle("/none", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("plain page")) })
	s.Handle("/big.zip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "999999999")
		w.Write([]byte("PK"))
	})
	s.Handle("/short.zip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("PK"))
	})

	b := fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: s.Client()}, TempDir: t.TempDir(), MaxDownload: 1 << 20, MaxUnpacked: 1 << 20})
	for _, c := range []struct {
		path      string
		sentinel  error
		want      string
		transient bool
	}{
		{"/dotdot.zip", fetch.ErrUnsafePath, `contains ".."`, false},
		{"/dotdot-inner.zip", fetch.ErrUnsafePath, `contains ".."`, false},
		{"/backslash.zip", fetch.ErrUnsafePath, `contains ".."`, false},
		{"/absolute.zip", fetch.ErrUnsafePath, "absolute name", false},
		{"/absolute.tar.gz", fetch.ErrUnsafePath, "absolute name", false},
		{"/dotdot.tar.gz", fetch.ErrUnsafePath, `contains ".."`, false},
		{"/escape.tar.gz", fetch.ErrUnsafePath, "leads outside the package", false},
		{"/escape-abs.zip", fetch.ErrUnsafePath, "leads outside the package", false},
		{"/through-link.tgz", fetch.ErrUnsafePath, "through the symlink", false},
		{"/empty.zip", fetch.ErrEmpty, "no entries", false},
		{"/only-dirs.zip", fetch.ErrEmpty, "no files", false},
		{"/bomb.zip", fetch.ErrTooLarge, "more than 1048576 bytes", false},
		{"/big.zip", fetch.ErrTooLarge, "more than the 1048576 allowed", false},
		{"/short.zip", nil, "unexpected EOF", true},
		{"/not-an-archive?archive=zip", nil, "not a usable zip", false},
		{"/corrupt.zip", nil, "not a usable zip", false},
		{"/xz.tar.xz", nil, "tar.xz archives are not supported", false},
		{"/redirect-a.zip", modules.ErrRedirectLoop, "redirect loop", false},
		{"/xtg-loop", modules.ErrRedirectLoop, "leads back to", false},
		{"/none", nil, "neither an archive", false},
		{"/missing.zip", backends.ErrNotFound, "HTTP 404", false},
	} {
		_, err := build(t, b, modules.Location{Source: s.URL() + c.path})
		if err == nil {
			t.Errorf("%s: no error, want %q", c.path, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "registry.example.com/acme/net/aws 1.0.0") {
			t.Errorf("%s: error %q, want it to contain %q and name the module", c.path, err, c.want)
		}
		if c.sentinel != nil && !errors.Is(err, c.sentinel) {
			t.Errorf("%s: error %q does not wrap %v", c.path, err, c.sentinel)
		}
		if backends.IsTransient(err) != c.transient {
			t.Errorf("%s: transient %v, want %v", c.path, !c.transient, c.transient)
		}
	}
	// A symlink that stays inside becomes a copy of its target.
	pkg, err := build(t, b, modules.Location{Source: s.URL() + "/inside-link.tar.gz"})
	if err != nil {
		t.Fatal(err)
	}
	if bodies, _ := zipContents(t, pkg.Path); bodies["link.tf"] != "x" || len(bodies) != 2 {
		t.Errorf("contents %v, want link.tf to hold main.tf's text", bodies)
	}
	// The location's subdir must exist in the package.
	_, err = build(t, b, modules.Location{Source: s.URL() + "/inside-link.tar.gz", Subdir: "modules/nope"})
	if err == nil || !strings.Contains(err.Error(), `no directory "modules/nope"`) {
		t.Errorf("missing subdir: %v", err)
	}
}

func TestBuildUnsupported(t *testing.T) {
	b := fetch.New(fetch.Options{TempDir: t.TempDir()})
	for _, c := range []struct{ src, want string }{
		{"s3::https://s3.amazonaws.com/b/x.zip", "s3 sources are not supported"},
		{"gcs::https://www.googleapis.com/storage/v1/b/x.zip", "gcs sources are not supported"},
		{"hg::https://example.com/repo", "mercurial"},
		{"oci://example.com/repo?tag=1", "already in an OCI registry"},
		{"bitbucket.org/a/b", "bitbucket.org shorthand"},
		{"ftp://example.com/x.zip", `"ftp" sources are not supported`},
		{"relative/path", "not an address tfmirror can fetch"},
		{"git::ext::sh -c evil", "not a URL or an scp-style"},
		{"git::-uhttps://x/y", "bad repository"},
		{"git::https://example.com/r.git?ref=--upload-pack=evil", "bad ref"},
		{"git::ftp://example.com/r.git", `transport "ftp" is not allowed`},
		{"https://example.com/x.zip?checksum=md5:abc", "only sha256"},
	} {
		_, err := build(t, b, modules.Location{Source: c.src})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestDirectCredentials: use_registry_credentials sends the registry's
// token with a package download only where it is the registry's own scheme,
// host and port; not to a package on another host, another port or plain
// http, nor past a redirect that leaves the registry (even one that comes
// back). A location without use_registry_credentials, and every indirect
// one, gets no token.
func TestDirectCredentials(t *testing.T) {
	const registry = "registry.example.com"
	zipBytes := modulestest.Zip(t, moduleFiles)
	a, b, p := modulestest.New(t), modulestest.New(t), modulestest.NewPlain(t)
	for _, s := range []*modulestest.Server{a, b, p} {
		s.File("/pkg", zipBytes)
	}
	a.Handle("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://"+registry+":8443/hop", http.StatusFound)
	})
	b.Handle("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://"+registry+"/pkg", http.StatusFound)
	})
	hc := modulestest.Names(map[string]*modulestest.Server{
		registry + ":443": a, "cdn.example.com:443": b, registry + ":8443": b, registry + ":80": p,
	})
	bld := fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: hc}, TempDir: t.TempDir(), Credentials: backends.TokenMap{registry: "tok"}})
	m := modules.Module{Host: registry, Namespace: "acme", Name: "net", System: "aws"}
	for _, c := range []struct {
		name string
		loc  modules.Location
		want map[*modulestest.Server][]string // "PATH AUTHORIZATION"
	}{
		{"the registry itself", modules.Location{Source: "https://" + registry + "/pkg", Direct: true, UseRegistryCredentials: true},
			map[*modulestest.Server][]string{a: {"/pkg Bearer tok"}}},
		{"without use_registry_credentials", modules.Location{Source: "https://" + registry + "/pkg", Direct: true},
			map[*modulestest.Server][]string{a: {"/pkg "}}},
		{"indirect", modules.Location{Source: "https://" + registry + "/pkg?archive=zip"},
			map[*modulestest.Server][]string{a: {"/pkg "}}},
		{"another host", modules.Location{Source: "https://cdn.example.com/pkg", Direct: true, UseRegistryCredentials: true},
			map[*modulestest.Server][]string{b: {"/pkg "}}},
		{"another port", modules.Location{Source: "https://" + registry + ":8443/pkg", Direct: true, UseRegistryCredentials: true},
			map[*modulestest.Server][]string{b: {"/pkg "}}},
		{"plain http", modules.Location{Source: "http://" + registry + "/pkg", Direct: true, UseRegistryCredentials: true},
			map[*modulestest.Server][]string{p: {"/pkg "}}},
		{"redirect to another port and back", modules.Location{Source: "https://" + registry + "/away", Direct: true, UseRegistryCredentials: true},
			map[*modulestest.Server][]string{a: {"/away Bearer tok", "/pkg "}, b: {"/hop "}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := map[*modulestest.Server]int{a: len(a.Seen()), b: len(b.Seen()), p: len(p.Seen())}
			pkg, err := bld.Build(context.Background(), m, version(t, "1.0.0"), c.loc, nil)
			if err != nil {
				t.Fatal(err)
			}
			pkg.Remove()
			for s, name := range map[*modulestest.Server]string{a: "registry", b: "other", p: "plain"} {
				var got []string
				for _, seen := range s.Seen()[before[s]:] {
					got = append(got, seen.Path+" "+seen.Authorization)
				}
				if strings.Join(got, "|") != strings.Join(c.want[s], "|") {
					t.Errorf("%s server saw %q, want %q", name, got, c.want[s])
				}
			}
		})
	}
	// A package elsewhere that wants the token fails, saying why it got none.
	b.Handle("/private", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "who are you", http.StatusUnauthorized) })
	_, err := bld.Build(context.Background(), m, version(t, "1.0.0"), modules.Location{Source: "https://cdn.example.com/private", Direct: true, UseRegistryCredentials: true}, nil)
	if !errors.Is(err, backends.ErrUnauthorized) || !strings.Contains(err.Error(), "the token for "+registry+" goes to https://"+registry+" only") {
		t.Errorf("401 from a package on another host: %v", err)
	}
}

// TestEncodedArchiveNotInflated: an archive served with Content-Encoding:
// gzip (a megabyte on the wire that inflates to a gigabyte) is written as
// the bytes sent, never inflated into the work directory; the package then
// fails as what it is, and the message says how it was sent.
func TestEncodedArchiveNotInflated(t *testing.T) {
	var one bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat(one.Bytes(), 1024) // 1 GiB of zeros once inflated
	s := modulestest.New(t)
	var acceptEncoding atomic.Value
	s.Handle("/bomb.zip", func(w http.ResponseWriter, r *http.Request) {
		acceptEncoding.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	b := fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: s.Client()}, TempDir: t.TempDir(), MaxDownload: 64 << 20})
	var written int64
	_, err := b.Build(context.Background(), testModule, version(t, "1.0.0"), modules.Location{Source: s.URL() + "/bomb.zip"}, func(n int64) { written += n })
	if written != int64(len(body)) {
		t.Errorf("%d bytes written to the work directory, want the %d bytes sent", written, len(body))
	}
	if err == nil || !strings.Contains(err.Error(), "not a usable zip") || !strings.Contains(err.Error(), `Content-Encoding "gzip"`) {
		t.Errorf("error %v, want the zip refused with the encoding named", err)
	}
	if acceptEncoding.Load() != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", acceptEncoding.Load())
	}
}

func TestBuildGit(t *testing.T) {
	v1 := append([]modulestest.Entry{}, moduleFiles...)
	v1 = append(v1, modulestest.Entry{Name: "modules/vpc/shared.tf", Link: "../../main.tf"})
	v2 := []modulestest.Entry{{Name: "main.tf", Body: "v2"}, {Name: "modules/vpc/main.tf", Body: "v2"}}
	repo := modulestest.GitRepo(t, []string{"v1.0.0", "v1.1.0"}, [][]modulestest.Entry{v1, v2})
	head := modulestest.Git(t, repo, "rev-parse", "v1.0.0^{commit}")
	b := fetch.New(fetch.Options{TempDir: t.TempDir()})

	for _, c := range []struct {
		name, src string
		want      string // main.tf
	}{
		{"ref", "git::file://" + repo + "?ref=v1.0.0", `variable "x" {}`},
		{"shallow", "git::file://" + repo + "?ref=v1.1.0&depth=1", "v2"},
		{"commit", "git::file://" + repo + "?ref=" + head, `variable "x" {}`},
		{"default branch", "git::file://" + repo, "v2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pkg, err := build(t, b, modules.Location{Source: c.src, Subdir: "modules/vpc"})
			if err != nil {
				t.Fatal(err)
			}
			bodies, _ := zipContents(t, pkg.Path)
			if bodies["main.tf"] != c.want {
				t.Errorf("main.tf = %q, want %q", bodies["main.tf"], c.want)
			}
			for n := range bodies {
				if strings.HasPrefix(n, ".git") {
					t.Errorf("the package holds %s", n)
				}
			}
			if c.want != "v2" {
				if pkg.Revision != head {
					t.Errorf("revision %s, want %s", pkg.Revision, head)
				}
				if bodies["modules/vpc/shared.tf"] != bodies["main.tf"] {
					t.Errorf("the symlink was not replaced by its target: %q", bodies["modules/vpc/shared.tf"])
				}
			}
			if pkg.Source != strings.Split(c.src, "//modules")[0] || pkg.Subdir != "modules/vpc" {
				t.Errorf("source %q subdir %q", pkg.Source, pkg.Subdir)
			}
		})
	}
	// Building twice gives the same bytes.
	p1, err := build(t, b, modules.Location{Source: "git::file://" + repo + "?ref=v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := build(t, b, modules.Location{Source: "git::file://" + repo + "?ref=v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(p1.Path)
	b2, _ := os.ReadFile(p2.Path)
	if !bytes.Equal(b1, b2) || p1.Sums != p2.Sums {
		t.Error("two builds of the same commit differ")
	}

	// The builder cloned the repository once: with the origin gone, other
	// refs still build from its mirror, until Close.
	moved := repo + ".moved"
	if err := os.Rename(repo, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := build(t, b, modules.Location{Source: "git::file://" + repo + "?ref=v1.1.0"}); err != nil {
		t.Errorf("a second ref of the same repository was not built from the mirror: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := build(t, b, modules.Location{Source: "git::file://" + repo + "?ref=v1.1.0"}); err == nil {
		t.Error("after Close, a build did not clone again")
	}
	if err := os.Rename(moved, repo); err != nil {
		t.Fatal(err)
	}

	_, err = build(t, b, modules.Location{Source: "git::file://" + repo + "?ref=v9.9.9"})
	if err == nil || !strings.Contains(err.Error(), `ref "v9.9.9"`) {
		t.Errorf("unknown ref: %v", err)
	}
	nogit := fetch.New(fetch.Options{TempDir: t.TempDir(), Git: filepath.Join(t.TempDir(), "no-such-git")})
	_, err = build(t, nogit, modules.Location{Source: "git::file://" + repo + "?ref=v1.0.0"})
	if !errors.Is(err, fetch.ErrNoGit) || !strings.Contains(err.Error(), "install git") {
		t.Errorf("without git: %v", err)
	}
}

func TestBuildGitEscapingSymlink(t *testing.T) {
	repo := modulestest.GitRepo(t, []string{"v1"}, [][]modulestest.Entry{{
		{Name: "main.tf", Body: "x"},
		{Name: "secrets", Link: "../../../../../../etc"},
	}})
	b := fetch.New(fetch.Options{TempDir: t.TempDir()})
	_, err := build(t, b, modules.Location{Source: "git::file://" + repo + "?ref=v1"})
	if !errors.Is(err, fetch.ErrUnsafePath) {
		t.Fatalf("got %v, want ErrUnsafePath", err)
	}
}

func TestPack(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode fs.FileMode) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("b.tf", "b", 0o600) // unreadable for others here; packed 0644
	write("a/x.tf", "x", 0o644)
	write("a-b.tf", "ab", 0o700)
	write(".git/config", "secret", 0o644)
	write("sub/.git", "gitdir: elsewhere", 0o644)
	if err := os.Symlink("a", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(dir, "a", "loop")); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	_, err := fetch.Pack(context.Background(), dir, &out, fetch.Limits{})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("a symlink cycle: %v", err)
	}
	os.Remove(filepath.Join(dir, "a", "loop"))
	out.Reset()
	n, err := fetch.Pack(context.Background(), dir, &out, fetch.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range zr.File {
		got = append(got, f.Name+" "+f.Mode().String())
		if !f.Modified.Equal(zr.File[0].Modified) {
			t.Errorf("%s: mtime %v differs", f.Name, f.Modified)
		}
	}
	want := []string{"a-b.tf -rwxr-xr-x", "a/x.tf -rw-r--r--", "alias/x.tf -rw-r--r--", "b.tf -rw-r--r--"}
	if n != 4 || strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("entries %v, want %v", got, want)
	}
	// Packing again, after touching every file, gives the same bytes.
	first := append([]byte(nil), out.Bytes()...)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		os.Chtimes(p, modTimeLater, modTimeLater)
		return nil
	})
	out.Reset()
	if _, err := fetch.Pack(context.Background(), dir, &out, fetch.Limits{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, out.Bytes()) {
		t.Error("packing the same files twice gave different bytes")
	}
	// Limits.
	if _, err := fetch.Pack(context.Background(), dir, io.Discard, fetch.Limits{MaxFiles: 3}); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("file limit: %v", err)
	}
	if _, err := fetch.Pack(context.Background(), dir, io.Discard, fetch.Limits{MaxBytes: 3}); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("byte limit: %v", err)
	}
	// Broken and escaping symlinks.
	if err := os.Symlink("nowhere", filepath.Join(dir, "broken")); err != nil {
		t.Fatal(err)
	}
	if _, err := fetch.Pack(context.Background(), dir, io.Discard, fetch.Limits{}); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("broken symlink: %v", err)
	}
	os.Remove(filepath.Join(dir, "broken"))
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := fetch.Pack(context.Background(), dir, io.Discard, fetch.Limits{}); !errors.Is(err, fetch.ErrUnsafePath) {
		t.Errorf("escaping symlink: %v", err)
	}
	// Nothing to pack.
	if _, err := fetch.Pack(context.Background(), t.TempDir(), io.Discard, fetch.Limits{}); !errors.Is(err, fetch.ErrEmpty) {
		t.Errorf("empty dir: %v", err)
	}
}

var modTimeLater = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)

// BenchmarkPack packs a tree of 1000 files of 10 KiB (about the size of a
// large module package), reporting bytes per second of file content.
func BenchmarkPack(b *testing.B) {
	dir := b.TempDir()
	body := bytes.Repeat([]byte("resource \"null_resource\" \"x\" {}\n"), 10<<10/34)
	for i := range 1000 {
		p := filepath.Join(dir, "modules", strconv.Itoa(i%20), strconv.Itoa(i)+".tf")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(1000 * len(body)))
	b.ResetTimer()
	for range b.N {
		if _, err := fetch.Pack(context.Background(), dir, io.Discard, fetch.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// An http(s) URL answering X-Terraform-Get is a remote server: it may lead
// to another remote address, never to this machine's files (go-getter
// refuses that protocol switch since HCSEC-2022-13). Otherwise a package a
// registry's indirection points at file:///home/ci/.aws would pack local
// files into the mirror.
func TestIndirectionNeverLeadsToLocalFiles(t *testing.T) {
	s := modulestest.New(t)
	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "secret.tf"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "local.zip")
	if err := os.WriteFile(archive, modulestest.Zip(t, []modulestest.Entry{{Name: "secret.tf", Body: "secret"}}), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := modulestest.GitRepo(t, []string{"v1"}, [][]modulestest.Entry{{{Name: "secret.tf", Body: "secret"}}})
	b := fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: s.Client()}, TempDir: t.TempDir()})
	for i, next := range []string{
		"file://" + local,
		"file::" + local,
		"FILE://" + local,
		"file://" + archive,
		"git::file://" + repo,
		"git::FILE://" + repo,
		"file://" + local + "//sub",
	} {
		p := "/indirect" + strconv.Itoa(i)
		s.Handle(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", next)
			w.WriteHeader(http.StatusNoContent)
		})
		pkg, err := build(t, b, modules.Location{Source: s.URL() + p})
		if err == nil {
			bodies, _ := zipContents(t, pkg.Path)
			t.Errorf("X-Terraform-Get %s: packed %v from this machine", next, bodies)
			continue
		}
		if !errors.Is(err, fetch.ErrUnsafePath) || !strings.Contains(err.Error(), "X-Terraform-Get") {
			t.Errorf("X-Terraform-Get %s: %v, want an unsafe-path error naming the header", next, err)
		}
	}
	// "/PATH" is a path on the server that answered, as the clients read it.
	s.Handle("/abs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Terraform-Get", local)
		w.WriteHeader(http.StatusNoContent)
	})
	if _, err := build(t, b, modules.Location{Source: s.URL() + "/abs"}); err == nil || !strings.Contains(err.Error(), s.URL()+local) {
		t.Errorf("X-Terraform-Get %s: %v, want it fetched from the server", local, err)
	}
	// The registry's own location may name a local package (tests and
	// air-gapped setups serve git::file:// repositories that way).
	if _, err := build(t, b, modules.Location{Source: "git::file://" + repo}); err != nil {
		t.Errorf("git::file:// as the registry's location: %v", err)
	}
}
