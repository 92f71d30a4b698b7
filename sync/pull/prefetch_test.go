package pull_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync/pull"
	"github.com/tfmirror/tfmirror/sync/spec"
)

// policyPlatforms are the platforms the prefetch tests' policy names.
var policyPlatforms = []string{"darwin_arm64", "linux_amd64", "linux_arm64", "windows_amd64"}

// prefetchWorld is a world whose origin offers alpha 1.0.0 for the four
// policy platforms and freebsd_amd64, under a policy naming the four.
func prefetchWorld(t *testing.T, faults registrytest.Faults) (*world, map[string]hashing.Sums) {
	t.Helper()
	zips := map[string][]byte{}
	sums := map[string]hashing.Sums{}
	for _, plat := range append(slices.Clone(policyPlatforms), "freebsd_amd64") {
		zips[plat] = bigZip(t, "alpha", "1.0.0", plat, 256<<10)
		f := filepath.Join(t.TempDir(), "a.zip")
		os.WriteFile(f, zips[plat], 0o644)
		s, err := hashing.HashPath(f, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sums[plat] = s
	}
	w := newWorld(t, faults, func(host string) *pull.Policy {
		file := filepath.Join(t.TempDir(), "policy.hcl")
		os.WriteFile(file, []byte(fmt.Sprintf("platforms = [\"%s\"]\n", strings.Join(policyPlatforms, `", "`))), 0o644)
		s, err := spec.LoadPolicy(file)
		if err != nil {
			t.Fatal(err)
		}
		return &pull.Policy{Spec: s}
	}, zips)
	w.reg.Reset()
	return w, sums
}

// versionHashes GETs 1.0.0.json and returns the hashes it lists by
// platform.
func (w *world) versionHashes(t *testing.T) map[string][]string {
	t.Helper()
	code, body := w.body(t, "1.0.0.json")
	if code != 200 {
		t.Fatalf("1.0.0.json: %d %s", code, body)
	}
	var doc struct {
		Archives map[string]struct{ Hashes []string }
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("1.0.0.json: %v\n%s", err, body)
	}
	out := map[string][]string{}
	for plat, a := range doc.Archives {
		out[plat] = a.Hashes
		sort.Strings(out[plat])
	}
	return out
}

// statesAll reports whether got lists exactly h1: and zh: of each of want's
// platforms.
func statesAll(got map[string][]string, want map[string]hashing.Sums, plats []string) bool {
	if len(got) != len(plats) {
		return false
	}
	for _, plat := range plats {
		s := want[plat]
		if !slices.Equal(got[plat], []string{string(s.H1), string(s.ZH)}) {
			return false
		}
	}
	return true
}

// With a policy naming four platforms, the first request for a version's
// document (of an origin that states no h1:, as Terraform's registry)
// makes the mirror fetch the four packages in the background, each once,
// verified and landed in CACHE, and none of a platform the policy leaves
// out; from then on the document states h1: and zh: for each. A second
// request starts nothing more.
func TestFirstRequestPrefetchesThePolicyPlatforms(t *testing.T) {
	w, sums := prefetchWorld(t, registrytest.Faults{NoPackages: true})
	first := w.versionHashes(t)
	if len(first) != len(policyPlatforms) {
		t.Errorf("the first document lists %v, want the policy's %v", first, policyPlatforms)
	}
	w.waitIdle(t)
	var want []string
	for _, plat := range policyPlatforms {
		want = append(want, "terraform-provider-alpha_1.0.0_"+plat+".zip")
	}
	got := w.cached()
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("CACHE holds %v after the prefetch, want %v", got, want)
	}
	// The handler reuses a listing for a moment (netmirror.ListingTTL).
	deadline := time.Now().Add(time.Minute)
	for hs := w.versionHashes(t); !statesAll(hs, sums, policyPlatforms); hs = w.versionHashes(t) {
		if time.Now().After(deadline) {
			t.Fatalf("after the prefetch, 1.0.0.json lists %v, want h1: and zh: of each policy platform", hs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.waitIdle(t)
	if n := w.reg.Count(registrytest.KindArchive); n != len(policyPlatforms) {
		t.Errorf("the origin served %d archives, want %d (each policy platform once)", n, len(policyPlatforms))
	}
	if !strings.Contains(w.logs.String(), "prefetching") {
		t.Errorf("the log does not say what it prefetches:\n%s", w.logs)
	}
}

// Prefetches run a few at a time (two by default), and Close stops the
// ones running: nothing of them lands, no staging file stays open.
func TestPrefetchIsBoundedAndStopsOnClose(t *testing.T) {
	w, _ := prefetchWorld(t, registrytest.Faults{NoPackages: true})
	g := newGate()
	var mu gosync.Mutex
	running, most := 0, 0
	w.reg.Wrap(func(next http.Handler) http.Handler {
		gated := g.wrap(next)
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, ".zip") {
				next.ServeHTTP(rw, r)
				return
			}
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			gated.ServeHTTP(rw, r)
		})
	})
	defer func() {
		select {
		case <-g.open:
		default:
			close(g.open)
		}
	}()
	w.versionHashes(t)
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := running
		mu.Unlock()
		if n == pull.DefaultPrefetchJobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d prefetches reached the origin after a minute, want %d", n, pull.DefaultPrefetchJobs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-g.half
	done := make(chan struct{})
	go func() { w.m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a bound for a loaded machine
		t.Fatal("Close did not stop the prefetches within a minute")
	}
	mu.Lock()
	if most > pull.DefaultPrefetchJobs {
		t.Errorf("%d prefetches ran at once, want at most %d", most, pull.DefaultPrefetchJobs)
	}
	mu.Unlock()
	if got := w.cached(); len(got) != 0 {
		t.Errorf("CACHE holds %v after Close stopped the prefetches", got)
	}
	w.noSpoolLeft(t)
	filepath.WalkDir(w.cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("left in CACHE by a stopped prefetch: %s", p)
		}
		return nil
	})
}

// From an origin that states every platform's h1: (OpenTofu 1.12's packages
// field), the version document states h1: and zh: of every platform at
// once, before any archive is fetched: the registry's h1: beside its
// signed zh:.
func TestVersionDocumentStatesTheRegistrysPackages(t *testing.T) {
	zips := map[string][]byte{}
	sums := map[string]hashing.Sums{}
	for _, plat := range policyPlatforms {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", plat), "")
		f := filepath.Join(t.TempDir(), "a.zip")
		os.WriteFile(f, zips[plat], 0o644)
		s, err := hashing.HashPath(f, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sums[plat] = s
	}
	w := newWorld(t, registrytest.Faults{}, nil, zips)
	w.reg.Reset()
	if got := w.versionHashes(t); !statesAll(got, sums, policyPlatforms) {
		t.Errorf("1.0.0.json lists %v, want the registry's h1: and the signed zh: of every platform", got)
	}
	if n := w.reg.Count(registrytest.KindArchive); n != 0 {
		t.Errorf("the origin served %d archives for a version document", n)
	}
	// Fetched, the package's h1: is computed, checked against the
	// registry's, and recorded in CACHE's own index.
	if code, body := w.body(t, "terraform-provider-alpha_1.0.0_linux_amd64.zip"); code != 200 || body != string(zips["linux_amd64"]) {
		t.Fatalf("the zip: %d, %d bytes", code, len(body))
	}
	w.waitIdle(t)
	index, err := os.ReadFile(filepath.Join(w.cache, w.prov.Hostname, "acme", "alpha", "1.0.0.json"))
	if err != nil || !strings.Contains(string(index), string(sums["linux_amd64"].H1)) {
		t.Errorf("CACHE's index does not record the landed package's h1: %s (%v)\n%s", sums["linux_amd64"].H1, err, index)
	}
}

// A registry whose packages field states another package's h1: beside
// the signed zh: has that statement recomputed where the archive is at
// hand: the clients' stream is cut, and nothing lands.
func TestAWrongStatedH1IsRefused(t *testing.T) {
	zips := map[string][]byte{"linux_amd64": bigZip(t, "alpha", "1.0.0", "linux_amd64", 256<<10)}
	w := newWorld(t, registrytest.Faults{WrongPackagesH1: true}, nil, zips)
	resp, err := w.get(t, t.Context(), "terraform-provider-alpha_1.0.0_linux_amd64.zip")
	if err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil && resp.StatusCode == 200 {
			t.Errorf("a zip whose stated h1: is another package's was served whole (%d bytes)", len(b))
		}
	}
	w.waitIdle(t)
	if got := w.cached(); len(got) != 0 {
		t.Errorf("CACHE holds %v: a package landed against the registry's h1:", got)
	}
	if !strings.Contains(w.logs.String(), "h1") {
		t.Errorf("the log does not name the h1: mismatch:\n%s", w.logs)
	}
}

// Clients of a zip CACHE lacks, from a registry that states its h1:, are
// checked against the h1: the fetch computes as it lands the zip: the
// server spools no copy of its own per client to hash (none is in the
// temp directory while they stream), and each client gets the whole zip.
func TestClientsShareTheFetchsH1(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	zips := map[string][]byte{"linux_amd64": bigZip(t, "alpha", "1.0.0", "linux_amd64", 1<<20)}
	w := newWorld(t, registrytest.Faults{}, nil, zips)
	g := newGate()
	w.reg.Wrap(g.wrap)
	const clients = 4
	bodies := make(chan []byte, clients)
	halfway := make(chan struct{}, clients)
	for range clients {
		go func() {
			resp, err := w.get(t, t.Context(), "terraform-provider-alpha_1.0.0_linux_amd64.zip")
			if err != nil {
				bodies <- nil
				halfway <- struct{}{}
				return
			}
			defer resp.Body.Close()
			first := make([]byte, 64<<10)
			io.ReadFull(resp.Body, first)
			halfway <- struct{}{}
			rest, _ := io.ReadAll(resp.Body)
			bodies <- append(first, rest...)
		}()
	}
	for range clients {
		select {
		case <-halfway:
		case <-time.After(time.Minute): // a bound for a loaded machine
			t.Fatal("the clients received nothing within a minute")
		}
	}
	spooled, _ := filepath.Glob(filepath.Join(tmp, "tfmirror-serve-*"))
	close(g.open)
	for range clients {
		if b := <-bodies; string(b) != string(zips["linux_amd64"]) {
			t.Errorf("a client got %d bytes, not the %d of the zip\n%s", len(b), len(zips["linux_amd64"]), w.logs)
		}
	}
	if len(spooled) > 0 {
		t.Errorf("the server spooled %d copies of the zip to hash while the fetch computes its h1:", len(spooled))
	}
}
