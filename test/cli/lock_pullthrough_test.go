package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// Whole locks without downloads, with the real clients. An origin that
// states no h1: (as Terraform's registry) offers pullAddr 1.0.0 for four
// platforms; a pull-through mirror's policy names the four. After one
// `terraform init` on this machine's platform through the mirror, the
// mirror has fetched the other three in the background, and `tfmirror lock
// --from DIR MIRROR` for the four writes a lock holding every hash
// `terraform providers lock` (the same four) writes from the origin,
// without downloading an archive from the mirror (its access log);
// `terraform init -lockfile=readonly` and `tofu init -lockfile=readonly`
// through the mirror accept that lock.
func TestLockFromPullThroughHoldsWhatTerraformLocksFromTheOrigin(t *testing.T) {
	clients := pullClients(t)
	if clients["terraform"] == "" {
		t.Skip("terraform is not installed: the lock is compared with the one terraform providers lock writes")
	}
	host := runtime.GOOS + "_" + runtime.GOARCH
	plats := []string{host}
	for _, p := range []string{"linux_amd64", "darwin_arm64", "windows_amd64", "linux_arm64"} {
		if len(plats) < 4 && p != host {
			plats = append(plats, p)
		}
	}
	zips := map[string][]byte{}
	for _, plat := range plats {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, pullAddr, "1.0.0", plat), "pull")
	}
	w := newPullWorldWith(t, registrytest.Faults{NoPackages: true}, zips)
	policy := writeFile(t, t.TempDir(), "policy.hcl", fmt.Sprintf("platforms = [\"%s\"]\n", strings.Join(plats, `", "`)))
	cache := filepath.Join(t.TempDir(), "cache")
	serveArgs := []string{cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--spec", policy, "--log-format", "json"}
	url, cert, stop := startServeWith(t, w.env, serveArgs...)
	caPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runClient(t, clients["terraform"], caPEM, networkMirror(url), pullConfig(t), "init", "-input=false", "-no-color")
	if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") {
		t.Fatalf("terraform init through the pull-through mirror: %v\n%s", err, out)
	}
	waitLanded(t, url, caPEM)
	if got := cacheZips(t, cache); len(got) != len(plats) {
		t.Errorf("CACHE holds %v after one init, want the %d policy platforms' zips", got, len(plats))
	}
	waitStatesH1(t, url, caPEM, plats)

	byTfmirror := pullConfig(t)
	lockArgs := []string{"lock", url, "--from", byTfmirror, "--ca-cert", cert}
	for _, p := range plats {
		lockArgs = append(lockArgs, "--platform", p)
	}
	lockStart := time.Now()
	if r := run(t, cleanEnv(t), lockArgs...); r.code != 0 {
		t.Fatalf("tfmirror lock from the pull-through mirror: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if log := stop(); len(accessedZips(t, log, lockStart)) > 0 || len(accessedZips(t, log, time.Time{})) == 0 {
		t.Errorf("the mirror was asked for %v while tfmirror lock ran (and for %v in all); want none: the lock downloads no archive\n%s",
			accessedZips(t, log, lockStart), accessedZips(t, log, time.Time{}), log)
	}

	byTerraform := pullConfig(t)
	tfArgs := []string{"providers", "lock", "-no-color"}
	for _, p := range plats {
		tfArgs = append(tfArgs, "-platform="+p)
	}
	if out, err := runClient(t, clients["terraform"], w.reg.CertPEM(), "", byTerraform, tfArgs...); err != nil {
		t.Fatalf("terraform providers lock from the origin: %v\n%s", err, out)
	}
	ours := lockHashes(t, filepath.Join(byTfmirror, ".terraform.lock.hcl"))
	theirs := lockHashes(t, filepath.Join(byTerraform, ".terraform.lock.hcl"))
	for _, h := range theirs {
		if !slices.Contains(ours, h) {
			t.Errorf("terraform providers lock from the origin records %s; tfmirror lock from the mirror does not:\nours   %v\ntheirs %v", h, ours, theirs)
		}
	}

	// The lock works under -lockfile=readonly through the mirror (a fresh
	// process on the same CACHE).
	url, cert, _ = startServeWith(t, w.env, serveArgs...)
	caPEM, _ = os.ReadFile(cert)
	lock, _ := os.ReadFile(filepath.Join(byTfmirror, ".terraform.lock.hcl"))
	for name, bin := range clients {
		dir := pullConfig(t)
		writeFile(t, dir, ".terraform.lock.hcl", string(lock))
		out, err := runClient(t, bin, caPEM, networkMirror(url), dir, "init", "-lockfile=readonly", "-input=false", "-no-color")
		if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") || notUpdated(out) {
			t.Errorf("%s init -lockfile=readonly with the lock tfmirror wrote: %v (want it installed, with nothing the lock lacks)\n%s", name, err, out)
		}
	}
	// The control: without the h1: lines (what a lock written from a
	// pull-through that has not fetched the platforms holds), terraform
	// installs, but says the lock lacks what it would record.
	var zhOnly []string
	for _, line := range strings.Split(string(lock), "\n") {
		if !strings.Contains(line, `"h1:`) {
			zhOnly = append(zhOnly, line)
		}
	}
	dir := pullConfig(t)
	writeFile(t, dir, ".terraform.lock.hcl", strings.Join(zhOnly, "\n"))
	out, err = runClient(t, clients["terraform"], caPEM, networkMirror(url), dir, "init", "-lockfile=readonly", "-input=false", "-no-color")
	if err == nil && !notUpdated(out) {
		t.Errorf("terraform init -lockfile=readonly with the lock's zh: alone neither failed nor said the lock lacks hashes: the check above proves nothing\n%s", out)
	}
}

// notUpdated reports whether a client's init output says the lock file
// lacks what it would record (and, under -lockfile=readonly, was not
// updated).
func notUpdated(out string) bool {
	return strings.Contains(strings.ToLower(out), "lock file not updated")
}

// waitStatesH1 waits until the mirror's version document of pullAddr
// 1.0.0 states an h1: for each of plats (a network mirror reuses a listing
// for a moment).
func waitStatesH1(t *testing.T, url string, caPEM []byte, plats []string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound for a loaded machine
	for {
		resp, err := pullClient(caPEM).Get(url + pullAddr + "/1.0.0.json")
		var doc struct {
			Archives map[string]struct{ Hashes []string }
		}
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
		}
		n := 0
		for _, p := range plats {
			if slices.ContainsFunc(doc.Archives[p].Hashes, func(h string) bool { return strings.HasPrefix(h, "h1:") }) {
				n++
			}
		}
		if n == len(plats) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the prefetch, the version document states an h1: for %d of %d platforms (%v): %+v", n, len(plats), err, doc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// accessedZips are the requests for zips (method and path) a serve
// --log-format json access log records from since on.
func accessedZips(t *testing.T, log string, since time.Time) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(log, "\n") {
		var a struct {
			Time         time.Time
			Method, Path string
		}
		if json.Unmarshal([]byte(line), &a) == nil && strings.HasSuffix(a.Path, ".zip") && !a.Time.Before(since) {
			out = append(out, a.Method+" "+a.Path)
		}
	}
	return out
}

// SIGTERM while the policy's platforms are being prefetched: serve stops
// (the prefetches are no requests to drain), and nothing of them is left
// in CACHE, staging files included.
func TestPullThroughStopsPrefetchesOnSIGTERM(t *testing.T) {
	plats := []string{"linux_amd64", "darwin_arm64", "windows_amd64", "linux_arm64"}
	zips := map[string][]byte{}
	for _, plat := range plats {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, pullAddr, "1.0.0", plat), "pull")
	}
	w := newPullWorldWith(t, registrytest.Faults{NoPackages: true}, zips)
	asked := make(chan struct{}, len(plats))
	release := make(chan struct{})
	defer close(release)
	w.reg.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ".zip") {
				asked <- struct{}{}
				<-release // held until the test ends
			}
			next.ServeHTTP(rw, r)
		})
	})
	policy := writeFile(t, t.TempDir(), "policy.hcl", fmt.Sprintf("platforms = [\"%s\"]\n", strings.Join(plats, `", "`)))
	cache := filepath.Join(t.TempDir(), "cache")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--spec", policy)
	caPEM, _ := os.ReadFile(cert)
	resp, err := pullClient(caPEM).Get(url + pullAddr + "/1.0.0.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the version document: %d %s", resp.StatusCode, body)
	}
	select {
	case <-asked:
	case <-time.After(time.Minute): // a bound for a loaded machine
		t.Fatal("the mirror asked the origin for no archive within a minute of the version document")
	}
	stopped := make(chan string, 1)
	go func() { stopped <- stop() }()
	var log string
	select {
	case log = <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop within a minute of SIGTERM while it prefetched")
	}
	if !strings.Contains(log, "prefetching") {
		t.Errorf("serve's log does not say what it prefetched:\n%s", log)
	}
	if !regexp.MustCompile(`stopped serving; no request was in flight; \d+ downloads? from upstream cancelled, nothing of them landed`).MatchString(log) {
		t.Errorf("serve does not say it cancelled the prefetches:\n%s", log)
	}
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".tfmirror-lock") {
			t.Errorf("left in CACHE by a stopped prefetch: %s", p)
		}
		return nil
	})
}

// From an origin that states every platform's h1: (OpenTofu 1.12's
// packages field), the pull-through's version document states them at
// once: `tfmirror lock` from the mirror, before any client installed
// anything, writes every platform's h1: and zh:, and nothing asks the
// mirror or the origin for an archive; terraform and tofu init
// -lockfile=readonly through the mirror accept the lock with nothing to
// add.
func TestLockFromPullThroughOfARegistryStatingPackages(t *testing.T) {
	clients := pullClients(t)
	plats := []string{"linux_amd64", "darwin_arm64", "windows_amd64", "linux_arm64"}
	zips := map[string][]byte{}
	var want []string
	for _, plat := range plats {
		zips[plat] = backendtest.ProviderZip(t, backendtest.Pkg(t, pullAddr, "1.0.0", plat), "pull")
		f := filepath.Join(t.TempDir(), "a.zip")
		os.WriteFile(f, zips[plat], 0o644)
		s, err := hashing.HashPath(f, hashing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(s.H1), string(s.ZH))
	}
	w := newPullWorldWith(t, registrytest.Faults{}, zips)
	cache := filepath.Join(t.TempDir(), "cache")
	url, cert, stop := startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1", "--log-format", "json")
	cfg := pullConfig(t)
	args := []string{"lock", url, "--from", cfg, "--ca-cert", cert}
	for _, p := range plats {
		args = append(args, "--platform", p)
	}
	if r := run(t, cleanEnv(t), args...); r.code != 0 {
		t.Fatalf("tfmirror lock from the pull-through mirror: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := lockHashes(t, filepath.Join(cfg, ".terraform.lock.hcl"))
	for _, h := range want {
		if !slices.Contains(got, h) {
			t.Errorf("the lock lacks %s (the registry states every platform's h1: and zh:): %v", h, got)
		}
	}
	if zs := accessedZips(t, stop(), time.Time{}); len(zs) > 0 || w.reg.Count(registrytest.KindArchive) > 0 {
		t.Errorf("locking asked the mirror for %v and the origin for %d archives; want none", zs, w.reg.Count(registrytest.KindArchive))
	}
	url, cert, _ = startServeWith(t, w.env, cache, "--upstream", "origin", "--allow-host", "127.0.0.1")
	caPEM, _ := os.ReadFile(cert)
	lock, _ := os.ReadFile(filepath.Join(cfg, ".terraform.lock.hcl"))
	for name, bin := range clients {
		dir := pullConfig(t)
		writeFile(t, dir, ".terraform.lock.hcl", string(lock))
		out, err := runClient(t, bin, caPEM, networkMirror(url), dir, "init", "-lockfile=readonly", "-input=false", "-no-color")
		if err != nil || !strings.Contains(out, "Installed 127.0.0.1/acme/alpha v1.0.0") || notUpdated(out) {
			t.Errorf("%s init -lockfile=readonly with the lock tfmirror wrote: %v (want it installed, with nothing the lock lacks)\n%s", name, err, out)
		}
	}
}
