package spec_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/httpclient"
	"github.com/tfmirror/tfmirror/backends/registry"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/sync"
	"github.com/tfmirror/tfmirror/sync/engine"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// benchSpec is a spec of n providers on host, each wanting its newest three
// versions on four platforms, from source into dst.
func benchSpec(b *testing.B, dir, host, source, dst string, n int) string {
	b.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "destinations = [%q]\nplatforms = [\"linux_amd64\", \"linux_arm64\", \"darwin_arm64\", \"windows_amd64\"]\n", dst)
	if source != "" {
		fmt.Fprintf(&sb, "source = %q\n", source)
	}
	for i := range n {
		fmt.Fprintf(&sb, "provider \"%s/acme/p%02d\" {\n  versions = \"latest 3\"\n}\n", host, i)
	}
	p := filepath.Join(dir, "mirror.hcl")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

var benchPlatforms = []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}

// planSpec is what `tfmirror diff --spec` does: load, resolve, plan every
// destination. It fails the benchmark unless every package is present.
func planSpec(b *testing.B, path string, open spec.Opener, want int) {
	ctx := context.Background()
	s, err := spec.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := s.Wanted(ctx, open)
	if err != nil {
		b.Fatal(err)
	}
	if len(w.Problems) > 0 {
		b.Fatalf("problems: %+v", w.Problems)
	}
	for _, d := range w.Destinations {
		dst, err := fs.Open(d.Place, d.Place, fs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		planned, err := spec.Plan(ctx, d, dst, sync.PlanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		present := 0
		for _, p := range planned {
			if p.Err != nil {
				b.Fatal(p.Err)
			}
			present += p.Plan.Count(sync.StatusPresent)
		}
		if present != want {
			b.Fatalf("%d packages present, want %d", present, want)
		}
	}
}

// fill syncs the spec once, so that its destination holds everything.
func fill(b *testing.B, path string, open spec.Opener) {
	ctx := context.Background()
	s, err := spec.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := s.Wanted(ctx, open)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range w.Destinations {
		dst, err := fs.Open(d.Place, d.Place, fs.Options{Create: true})
		if err != nil {
			b.Fatal(err)
		}
		planned, err := spec.Plan(ctx, d, dst, sync.PlanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var plans []*sync.Plan
		for _, p := range planned {
			plans = append(plans, p.Plan)
		}
		sum := sync.Sync(ctx, engine.NewEngine(ctx, engine.Options{Jobs: 4}), dst, false, sinkFunc(func(engine.Event) {}), plans...)
		if !sum.OK() {
			b.Fatalf("fill: %d failed, %d skipped", len(sum.Failed), len(sum.Skipped))
		}
	}
}

// BenchmarkSpecPlan plans a spec of 50 providers x 3 versions x 4
// platforms (600 packages) against a filesystem mirror that already holds
// everything: load the spec, resolve it against the source, plan. The
// source is a filesystem mirror with index documents (fs), or an origin
// registry over loopback TLS with signed SHA256SUMS (registry), which costs
// a metadata request per package and a signature check per version.
//
//	go test -run '^$' -bench BenchmarkSpecPlan ./sync/spec/
func BenchmarkSpecPlan(b *testing.B) {
	const providers, versions = 50, 4 // "latest 3" of four
	var names []string
	for i := range providers {
		names = append(names, fmt.Sprintf("example.com/acme/p%02d", i))
	}
	vs := []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0"}[:versions]
	want := providers * 3 * len(benchPlatforms)

	b.Run("fs", func(b *testing.B) {
		dir := b.TempDir()
		upstream := filepath.Join(dir, "upstream")
		backendtest.WritePacked(b, upstream, backendtest.Seeds(b, names, vs, benchPlatforms))
		src, err := fs.Open(upstream, upstream, fs.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range names {
			p, _ := backends.ParseProvider(n)
			if err := src.Flush(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
		path := benchSpec(b, dir, "example.com", upstream, filepath.Join(dir, "mirror"), providers)
		fill(b, path, openFS)
		b.ResetTimer()
		for b.Loop() {
			planSpec(b, path, openFS, want)
		}
	})

	b.Run("registry", func(b *testing.B) {
		var ps []registrytest.Provider
		for i := range providers {
			p := registrytest.Provider{Namespace: "acme", Type: fmt.Sprintf("p%02d", i)}
			for _, v := range vs {
				ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
				for _, plat := range benchPlatforms {
					ver.Archives[plat] = backendtest.ProviderZip(b, backendtest.Pkg(b, names[i], v, plat), "")
				}
				p.Versions = append(p.Versions, ver)
			}
			ps = append(ps, p)
		}
		reg := registrytest.New(b, ps...)
		// Connections kept for reuse as tfmirror's own transport keeps them
		// (httpclient.New), so that TLS handshakes are not what is measured.
		tr := reg.Client().Transport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 32
		hc := &http.Client{Transport: tr}
		open := func(ctx context.Context, arg string) (backends.Reader, error) {
			if strings.HasPrefix(arg, "registry://") {
				return registry.Open(arg, strings.TrimPrefix(arg, "registry://"), registry.Options{HTTP: httpclient.Client{HTTP: hc}})
			}
			return openFS(ctx, arg)
		}
		dir := b.TempDir()
		path := benchSpec(b, dir, reg.Host(), "", filepath.Join(dir, "mirror"), providers)
		fill(b, path, open)
		b.ResetTimer()
		for b.Loop() {
			planSpec(b, path, open, want)
		}
	})
}
