package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	gosync "sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// writerRounds is how many times the two-writer tests race two processes.
// Before tfmirror read its indexes back, the lost update showed in the
// first round of every run; so it did with a read back that did not wait
// for a concurrent push to land.
const writerRounds = 12

const writersTemplate = "/tf/${hostname}/${namespace}/${type}"

// platformsInIndex reads the version's index from the registry, as
// OpenTofu would, and returns the platforms it references.
func platformsInIndex(t *testing.T, reg *ocitest.Registry, provider, version string) []string {
	t.Helper()
	m, err := oci.Open("oci://"+reg.Host()+writersTemplate, reg.Host()+writersTemplate, oci.Options{PlainHTTP: true, Credentials: credentials.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := backends.ParseProvider(provider)
	if err != nil {
		t.Fatal(err)
	}
	v, err := backends.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	as, err := m.Archives(context.Background(), p, v)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range as {
		out = append(out, a.Platform.String())
	}
	sort.Strings(out)
	return out
}

func platformFlags(plats []string) []string {
	var out []string
	for _, p := range plats {
		out = append(out, "--platform", p)
	}
	return out
}

// Two syncs of disjoint platforms of one provider version into one OCI
// repository, run as two processes at once (two CI jobs, one per
// platform group): both must exit 0 only when the version's index
// references every platform each of them wrote. Without a compare-and-swap
// on tags, the last index pushed used to win and the other's platforms were
// left unreferenced while both exited 0.
func TestTwoSyncsIntoOneOCIRepository(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	groupA := []string{"freebsd_amd64", "linux_amd64", "linux_arm64"}
	groupB := []string{"darwin_amd64", "darwin_arm64", "windows_amd64"}
	var providers []string
	for i := range writerRounds {
		providers = append(providers, fmt.Sprintf("example.com/acme/race%d", i))
	}
	src := t.TempDir()
	backendtest.WritePacked(t, src, variedSeeds(t, providers, []string{"1.0.0"}, append(append([]string{}, groupA...), groupB...)))
	dst := "oci://" + reg.Host() + writersTemplate

	for i, p := range providers {
		a := start(t, append([]string{"sync", src, dst, "-p", p, "--plain-http"}, platformFlags(groupA)...)...)
		b := start(t, append([]string{"sync", src, dst, "-p", p, "--plain-http"}, platformFlags(groupB)...)...)
		ra, rb := a.wait(t), b.wait(t)
		got := strings.Join(platformsInIndex(t, reg, p, "1.0.0"), " ")
		for _, w := range []struct {
			name  string
			r     result
			plats []string
		}{{"A", ra, groupA}, {"B", rb, groupB}} {
			if w.r.code != 0 {
				t.Errorf("round %d: sync %s exited %d\n%s", i, w.name, w.r.code, w.r.stderr)
				continue
			}
			for _, plat := range w.plats {
				if !strings.Contains(got, plat) {
					t.Errorf("round %d: sync %s exited 0, but the index of %s 1.0.0 lists only [%s]: its %s is unreferenced", i, w.name, p, got, plat)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
}

// emptyConfig is the digest of the empty config blob "{}" every platform
// manifest names.
const emptyConfig = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

// countConfigUploads counts, per repository, the uploads of the empty
// config blob the registry completes (PUT .../blobs/uploads/ID?digest=).
func countConfigUploads(reg *ocitest.Registry) func() map[string]int {
	var mu gosync.Mutex
	n := map[string]int{}
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") && r.URL.Query().Get("digest") == emptyConfig {
			repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/blobs/uploads/")
			mu.Lock()
			n[repo]++
			mu.Unlock()
		}
		return false
	})
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(n)
	}
}

// The first sync into a fresh repository runs many jobs at once. Each used
// to push the empty config blob; distribution 2.8 rewrites the blob's link
// in place, so a job whose manifest arrived meanwhile was answered
// MANIFEST_BLOB_UNKNOWN and failed with a hint blaming the registry's OCI
// 1.1 support. The config is now pushed once per repository.
func TestFirstSyncIntoFreshOCIRepository(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true, TornWrites: true})
	uploads := countConfigUploads(reg)
	plats := []string{"darwin_amd64", "darwin_arm64", "freebsd_amd64", "linux_386", "linux_amd64", "linux_arm", "linux_arm64", "windows_amd64"}
	const rounds = 4
	var providers []string
	for i := range rounds {
		providers = append(providers, fmt.Sprintf("example.com/acme/fresh%d", i))
	}
	src := t.TempDir()
	backendtest.WritePacked(t, src, variedSeeds(t, providers, []string{"1.0.0"}, plats))
	dst := "oci://" + reg.Host() + writersTemplate
	for i, p := range providers {
		s := start(t, "sync", src, dst, "-p", p, "--plain-http", "--jobs", "8")
		if r := s.wait(t); r.code != 0 {
			t.Fatalf("round %d: sync into a fresh repository exited %d\n%s", i, r.code, r.stderr)
		}
		if got := strings.Join(platformsInIndex(t, reg, p, "1.0.0"), " "); got != strings.Join(plats, " ") {
			t.Fatalf("round %d: the index lists [%s], want [%s]", i, got, strings.Join(plats, " "))
		}
	}
	for repo, n := range uploads() {
		if n != 1 {
			t.Errorf("repository %s: the empty config blob was uploaded %d times by one process, want once", repo, n)
		}
	}
}

// Two processes pushing into one fresh repository each push the empty
// config once, at the same moment: on distribution 2.8 one of them may
// find the other rewriting the blob's link. That answer (blob unknown,
// digest invalid) for a blob just pushed is retried, and both succeed.
func TestTwoFirstSyncsIntoFreshOCIRepository(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true, TornWrites: true})
	groupA := []string{"freebsd_amd64", "linux_amd64", "linux_arm64", "linux_386"}
	groupB := []string{"darwin_amd64", "darwin_arm64", "windows_amd64", "linux_arm"}
	const rounds = 6
	var providers []string
	for i := range rounds {
		providers = append(providers, fmt.Sprintf("example.com/acme/twofresh%d", i))
	}
	src := t.TempDir()
	backendtest.WritePacked(t, src, variedSeeds(t, providers, []string{"1.0.0"}, append(append([]string{}, groupA...), groupB...)))
	dst := "oci://" + reg.Host() + writersTemplate
	for i, p := range providers {
		a := start(t, append([]string{"sync", src, dst, "-p", p, "--plain-http"}, platformFlags(groupA)...)...)
		b := start(t, append([]string{"sync", src, dst, "-p", p, "--plain-http"}, platformFlags(groupB)...)...)
		ra, rb := a.wait(t), b.wait(t)
		for _, w := range []struct {
			name string
			r    result
		}{{"A", ra}, {"B", rb}} {
			if w.r.code != 0 {
				t.Errorf("round %d: sync %s exited %d\n%s", i, w.name, w.r.code, w.r.stderr)
			}
			if strings.Contains(w.r.stderr, "OCI 1.1") {
				t.Errorf("round %d: sync %s blames OCI 1.1 support for a concurrent push:\n%s", i, w.name, w.r.stderr)
			}
		}
		want := append(append([]string{}, groupA...), groupB...)
		sort.Strings(want)
		if got := strings.Join(platformsInIndex(t, reg, p, "1.0.0"), " "); got != strings.Join(want, " ") {
			t.Errorf("round %d: the index lists [%s], want [%s]", i, got, strings.Join(want, " "))
		}
		if t.Failed() {
			return
		}
	}
}

// variedSeeds makes release zips of different sizes (as real platforms'
// binaries are), so that concurrent jobs reach each step at different
// moments rather than in lockstep.
func variedSeeds(t *testing.T, providers, versions, platforms []string) []backendtest.Seed {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	var out []backendtest.Seed
	for _, s := range backendtest.Seeds(t, providers, versions, platforms) {
		pad := make([]byte, rnd.IntN(3<<20))
		for i := range pad {
			pad[i] = byte(rnd.Uint32())
		}
		exe := fmt.Sprintf("terraform-provider-%s_v%s", s.Package.Provider.Type, s.Package.Version)
		s.Zip = backendtest.Zip(t, backendtest.Entry{Name: exe, Body: []byte("#!/bin/sh\nexit 1\n")}, backendtest.Entry{Name: "padding", Body: pad, Mode: 0o644})
		out = append(out, s)
	}
	return out
}

// Two providers of one type pushed one at a time into one repository
// (each push alone names one namespace, so a template without
// ${namespace} is valid for it): the second is refused, by the annotation
// tfmirror writes on its indexes, and the first's index is left as it was.
func TestCLIRefusesAnotherProvidersIndex(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true})
	src := t.TempDir()
	backendtest.WritePacked(t, src, backendtest.Seeds(t, []string{"example.com/acme/alpha", "example.com/other/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	dst := "oci://" + reg.Host() + "/one-repository/${type}"
	if r := run(t, cleanEnv(t), "sync", src, dst, "-p", "example.com/acme/alpha", "--plain-http"); r.code != 0 {
		t.Fatalf("acme/alpha: %d\n%s", r.code, r.stderr)
	}
	r := run(t, cleanEnv(t), "sync", src, dst, "-p", "example.com/other/alpha", "--plain-http", "--force")
	if r.code != 1 || !strings.Contains(r.stderr, `tag "1.0.0" holds the index of example.com/acme/alpha`) {
		t.Fatalf("other/alpha into acme/alpha's index: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, cleanEnv(t), "ls", dst, "-p", "example.com/acme/alpha", "--plain-http")
	if r.code != 0 || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "example.com/acme/alpha 1.0.0 linux_amd64") {
		t.Fatalf("acme/alpha after the refusal: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// While another writer keeps pushing the empty config into the repository
// (on distribution 2.8 each push rewrites the config's link in place), a
// sync's manifests are answered as if the config were missing. The sync
// retries them and succeeds, and says nothing of OCI 1.1. Whether a
// manifest meets a rewrite is a matter of timing: rounds run until one
// has.
func TestSyncRetriesWhileAnotherPushRewritesTheConfig(t *testing.T) {
	reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: true, TornWrites: true})
	plats := []string{"darwin_amd64", "darwin_arm64", "freebsd_amd64", "linux_386", "linux_amd64", "linux_arm", "linux_arm64", "windows_amd64"}
	const rounds = 20
	var providers []string
	for i := range rounds {
		providers = append(providers, fmt.Sprintf("example.com/acme/rewritten%d", i))
	}
	src := t.TempDir()
	backendtest.WritePacked(t, src, variedSeeds(t, providers, []string{"1.0.0"}, plats))
	refused := func() int {
		n := 0
		for _, q := range reg.Requests() {
			if q.Method == http.MethodPut && strings.Contains(q.Path, "/manifests/sha256:") && q.Status == http.StatusBadRequest {
				n++
			}
		}
		return n
	}
	for i, p := range providers {
		reg.ResetRequests()
		repo, err := remote.NewRepository(reg.Host() + "/tf/" + p)
		if err != nil {
			t.Fatal(err)
		}
		repo.PlainHTTP = true
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		pushConfig := func() error {
			return repo.Blobs().Push(ctx, ocispec.DescriptorEmptyJSON, bytes.NewReader(ocispec.DescriptorEmptyJSON.Data))
		}
		if err := pushConfig(); err != nil {
			t.Fatal(err)
		}
		// The other writer: several pushes at once, out of step, so that
		// the link is being rewritten most of the time. It stops once the
		// registry has refused a few of the sync's manifests, so that the
		// retries then meet a quiet repository.
		const pushers = 6
		other := make(chan error, pushers)
		for range pushers {
			go func() {
				for refused() < 3 && ctx.Err() == nil {
					time.Sleep(rand.N(15 * time.Millisecond))
					if err := pushConfig(); err != nil && ctx.Err() == nil {
						other <- err
						return
					}
				}
				other <- nil
			}()
		}
		s := start(t, "sync", src, "oci://"+reg.Host()+writersTemplate, "-p", p, "--plain-http", "--jobs", "8")
		r := s.wait(t)
		cancel()
		for range pushers {
			if err := <-other; err != nil {
				t.Fatalf("round %d: the other writer: %v", i, err)
			}
		}
		if r.code != 0 || strings.Contains(r.stderr, "OCI 1.1") {
			t.Fatalf("round %d: sync while another push rewrites the config: exit %d\n%s", i, r.code, r.stderr)
		}
		if got := strings.Join(platformsInIndex(t, reg, p, "1.0.0"), " "); got != strings.Join(plats, " ") {
			t.Fatalf("round %d: the index lists [%s], want [%s]", i, got, strings.Join(plats, " "))
		}
		if n := refused(); n > 0 {
			t.Logf("round %d: %d manifest pushes were refused and retried", i, n)
			return
		}
	}
	t.Skipf("in %d rounds, the registry refused none of the syncs' manifests: the race this test is for did not happen on this machine, so it shows nothing", rounds)
}
