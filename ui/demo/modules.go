package demo

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/fetch"
	"github.com/tfmirror/tfmirror/backends/modules/modfs"
	"github.com/tfmirror/tfmirror/hashing"
)

// ModuleRelease is one version of a module the demo registry offers.
type ModuleRelease struct {
	Module  string // NAMESPACE/NAME/SYSTEM on the registry
	Version string
}

// ModuleReleases is everything the demo registry offers.
func ModuleReleases() []ModuleRelease {
	return []ModuleRelease{
		{"acme/network/aws", "2.0.0"},
		{"acme/network/aws", "1.1.0"},
		{"acme/network/aws", "1.0.0"},
		{"acme/cluster/aws", "0.3.0"},
		{"acme/cluster/aws", "0.2.0"},
	}
}

// inModuleDir says which releases the world's module directory starts
// with, so the Modules view has something present and something missing.
func inModuleDir(r ModuleRelease) bool {
	return r.Module == "acme/network/aws" && r.Version == "1.0.0"
}

// ModuleRegistry is a module registry served over HTTPS on 127.0.0.1: the
// Module Registry Protocol (service discovery, versions, download answers
// by X-Terraform-Get) and the package zips, made when it starts.
type ModuleRegistry struct {
	// Host is 127.0.0.1:PORT, the registry's hostname.
	Host string
	// Client trusts the registry's certificate.
	Client *http.Client
	ts     *tlsServer
}

// ServeModules serves the demo's module registry until ctx is cancelled or
// Close is called, and fills the world's module directory (Modules) with
// what it starts with, fetched from the registry as a sync would.
func (w *World) ServeModules(ctx context.Context) (*ModuleRegistry, error) {
	zips := map[string][]byte{}
	versions := map[string][]string{}
	for _, r := range ModuleReleases() {
		zips[archivePath(r)] = moduleZip(r)
		versions[r.Module] = append(versions[r.Module], r.Version)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/terraform.json", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, map[string]string{"modules.v1": "/v1/modules/"})
	})
	mux.HandleFunc("GET /v1/modules/{ns}/{name}/{system}/versions", func(rw http.ResponseWriter, r *http.Request) {
		vs, ok := versions[r.PathValue("ns")+"/"+r.PathValue("name")+"/"+r.PathValue("system")]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		list := make([]map[string]string, len(vs))
		for i, v := range vs {
			list[i] = map[string]string{"version": v}
		}
		writeJSON(rw, map[string]any{"modules": []any{map[string]any{"versions": list}}})
	})
	mux.HandleFunc("GET /v1/modules/{ns}/{name}/{system}/{version}/download", func(rw http.ResponseWriter, r *http.Request) {
		rel := ModuleRelease{Module: r.PathValue("ns") + "/" + r.PathValue("name") + "/" + r.PathValue("system"), Version: r.PathValue("version")}
		if _, ok := zips[archivePath(rel)]; !ok {
			http.NotFound(rw, r)
			return
		}
		// A relative location, resolved against this URL, as registries
		// that host their own archives answer.
		rw.Header().Set("X-Terraform-Get", archivePath(rel))
		rw.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /archives/", func(rw http.ResponseWriter, r *http.Request) {
		b, ok := zips[r.URL.Path]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/zip")
		_, _ = rw.Write(b) // a client gone: no one left to tell
	})
	cert, err := w.cert()
	if err != nil {
		return nil, err
	}
	ts, err := serveTLS(ctx, mux, cert)
	if err != nil {
		return nil, fmt.Errorf("demo: serving the module registry: %w", err)
	}
	r := &ModuleRegistry{Host: ts.addr, Client: ts.client, ts: ts}
	if err := r.seed(ctx, w.Modules); err != nil {
		_ = ts.close() // the seeding error is the one to report
		return nil, fmt.Errorf("demo: filling the module directory: %w", err)
	}
	return r, nil
}

// Close stops the registry.
func (r *ModuleRegistry) Close() error { return r.ts.close() }

// Modules returns the addresses of the registry's modules.
func (r *ModuleRegistry) Modules() ([]modules.Module, error) {
	seen := map[string]bool{}
	var out []modules.Module
	for _, rel := range ModuleReleases() {
		if seen[rel.Module] {
			continue
		}
		seen[rel.Module] = true
		m, err := modules.ParseModule(rel.Module, r.Host)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Open returns a client of the registry, named registry://HOST.
func (r *ModuleRegistry) Open() (*modules.Registry, error) {
	return modules.NewRegistry("registry://"+r.Host, r.Host, modules.Options{HTTP: httpclient.Client{HTTP: r.Client}})
}

// Builder returns a package builder that fetches from the registry,
// keeping its work in tempDir. Close it when done.
func (r *ModuleRegistry) Builder(tempDir string) *fetch.Builder {
	return fetch.New(fetch.Options{HTTP: httpclient.Client{HTTP: r.Client}, TempDir: tempDir})
}

// seed stores in dir the releases the world's module directory starts
// with; those already there are left alone.
func (r *ModuleRegistry) seed(ctx context.Context, dir string) error {
	reg, err := r.Open()
	if err != nil {
		return err
	}
	store, err := modfs.Open(dir, dir, hashing.Options{})
	if err != nil {
		return err
	}
	b := r.Builder("")
	defer func() { _ = b.Close() }() // removes its temporary git mirrors
	for _, rel := range ModuleReleases() {
		if !inModuleDir(rel) {
			continue
		}
		m, err := modules.ParseModule(rel.Module, r.Host)
		if err != nil {
			return err
		}
		c, err := backends.ParseVersionConstraint(rel.Version)
		if err != nil {
			return err
		}
		ls, err := reg.ListModule(ctx, m, c)
		if err != nil {
			return err
		}
		if len(ls.Items) != 1 || ls.Items[0].Source == nil {
			return fmt.Errorf("%s %s: the registry does not offer it", m, rel.Version)
		}
		it := ls.Items[0]
		pkg, err := b.Build(ctx, m, it.Version, *it.Source, nil)
		if err != nil {
			return err
		}
		_, err = store.Put(ctx, pkg, false, nil)
		_ = pkg.Remove() // the temporary zip, stored or not
		if err != nil {
			return err
		}
	}
	return nil
}

func archivePath(r ModuleRelease) string {
	_, rest, _ := strings.Cut(r.Module, "/")
	name, system, _ := strings.Cut(rest, "/")
	return "/archives/" + name + "-" + system + "-" + r.Version + ".zip"
}

// moduleZip is a small module package: a variable, a resource-free output
// and a changelog, different in every release.
func moduleZip(r ModuleRelease) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{
		{"main.tf", fmt.Sprintf("# tfmirror demo module %s %s\nvariable \"name\" {\n  type = string\n}\n", r.Module, r.Version)},
		{"outputs.tf", fmt.Sprintf("output \"version\" {\n  value = %q\n}\n", r.Version)},
		{"CHANGELOG.md", "## " + r.Version + "\n\nA tfmirror demo release.\n"},
	} {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		h.SetMode(0o644)
		fw, err := zw.CreateHeader(h)
		if err == nil {
			_, _ = fw.Write([]byte(f.body))
		}
	}
	_ = zw.Close() // writing to a bytes.Buffer cannot fail
	return buf.Bytes()
}

func writeJSON(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(v)
}
