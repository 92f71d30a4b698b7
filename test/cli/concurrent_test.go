package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/zipname"
	"github.com/tfmirror/tfmirror/hashing"
)

// concurrentRounds is how often a two-writer race is run. Before the
// provider lock and the no-replace commit, a replaced archive showed in the
// first round or two, an index rewrite that lost the other process's
// platforms about once in eight rounds (disjointRounds); each round takes a
// fraction of a second.
const (
	concurrentRounds = 20
	disjointRounds   = 40
)

// sourceMirror writes seeds into a new filesystem mirror with its index
// documents, as a mirror a sync reads from has them.
func sourceMirror(t *testing.T, seeds []backendtest.Seed) string {
	t.Helper()
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, seeds)
	m, err := fs.Open(dir, dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := map[backends.Provider]bool{}
	for _, s := range seeds {
		if !done[s.Package.Provider] {
			done[s.Package.Provider] = true
			if err := m.Flush(context.Background(), s.Package.Provider); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// started is a tfmirror process running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	cancel         context.CancelFunc
}

// start starts the built binary without waiting for it, in an environment
// without the machine's CLI configuration; a minute bounds it.
func start(t *testing.T, args ...string) *started {
	t.Helper()
	return startWith(t, nil, args...)
}

// startWith is start with env added to the clean environment.
func startWith(t *testing.T, env []string, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	p := &started{cmd: exec.CommandContext(ctx, tfmirrorBin, args...), cancel: cancel}
	p.cmd.Env = append(cleanEnv(t), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	return p
}

func (p *started) wait(t *testing.T) result {
	t.Helper()
	defer p.cancel()
	err := p.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{p.stdout.String(), p.stderr.String(), code}
}

// indexAgreesWithDisk checks that every packed archive of p in dst is listed
// in its <version>.json with the h1: and zh: of the bytes on disk, that
// nothing else is listed, and that index.json lists exactly the versions
// on disk.
func indexAgreesWithDisk(t *testing.T, round int, dst string, p backends.Provider) {
	t.Helper()
	pdir := filepath.Join(dst, p.HostnameForDisplay(), p.Namespace, p.Type)
	items, err := os.ReadDir(pdir)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	onDisk := map[string]map[string]string{} // version -> platform -> file
	for _, it := range items {
		if strings.HasPrefix(it.Name(), ".") || !strings.HasSuffix(it.Name(), ".zip") {
			continue
		}
		pkg, err := zipname.Parse(p, it.Name())
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, it.Name(), err)
		}
		v := pkg.Version.String()
		if onDisk[v] == nil {
			onDisk[v] = map[string]string{}
		}
		onDisk[v][pkg.Platform.String()] = it.Name()
	}
	var index struct{ Versions map[string]struct{} }
	if b, err := os.ReadFile(filepath.Join(pdir, "index.json")); err != nil || json.Unmarshal(b, &index) != nil {
		t.Fatalf("round %d: %s index.json: %v", round, p, err)
	}
	var listedVersions, diskVersions []string
	for v := range index.Versions {
		listedVersions = append(listedVersions, v)
	}
	for v := range onDisk {
		diskVersions = append(diskVersions, v)
	}
	slices.Sort(listedVersions)
	slices.Sort(diskVersions)
	if !slices.Equal(listedVersions, diskVersions) {
		t.Errorf("round %d: %s index.json lists %v, the disk holds %v", round, p, listedVersions, diskVersions)
	}
	for v, plats := range onDisk {
		var doc struct {
			Archives map[string]struct {
				Hashes []string
				URL    string
			}
		}
		if b, err := os.ReadFile(filepath.Join(pdir, v+".json")); err != nil || json.Unmarshal(b, &doc) != nil {
			t.Errorf("round %d: %s %s.json: %v", round, p, v, err)
			continue
		}
		for plat := range doc.Archives {
			if _, ok := plats[plat]; !ok {
				t.Errorf("round %d: %s %s.json lists %s, which is not on disk", round, p, v, plat)
			}
		}
		for plat, file := range plats {
			ad, ok := doc.Archives[plat]
			if !ok {
				t.Errorf("round %d: %s %s.json does not list %s, which is on disk", round, p, v, file)
				continue
			}
			sums, err := hashing.HashPath(filepath.Join(pdir, file), hashing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// zh: always; h1: where it was computed; nothing that is not
			// the file's.
			wrong := false
			for _, h := range ad.Hashes {
				wrong = wrong || (strings.HasPrefix(h, "h1:") || strings.HasPrefix(h, "zh:")) && !sums.Matches(hashing.Hash(h))
			}
			if ad.URL != file || !slices.Contains(ad.Hashes, string(sums.ZH)) || wrong {
				t.Errorf("round %d: %s %s.json lists %s as %s %v; on disk it is %s %s", round, p, v, plat, ad.URL, ad.Hashes, sums.H1, sums.ZH)
			}
		}
	}
}

// Two tfmirror sync processes from two sources that disagree (same file
// names, different bytes) into one directory at once: for each package
// exactly one archive lands and its process reports it done; the other
// process reports a conflict for it, replaces nothing and exits 1. The
// index documents list exactly the archives on disk, and verify agrees.
func TestConcurrentSyncsFromDisagreeingSources(t *testing.T) {
	if testing.Short() {
		t.Skip("process race skipped in -short mode")
	}
	providers := []string{"example.com/acme/alpha", "example.com/acme/beta"}
	versions := []string{"1.0.0", "1.1.0"}
	platforms := []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}
	var seedsA, seedsB []backendtest.Seed
	for _, s := range backendtest.Seeds(t, providers, versions, platforms) {
		seedsA = append(seedsA, backendtest.Seed{Package: s.Package, Zip: backendtest.ProviderZip(t, s.Package, "from A")})
		seedsB = append(seedsB, backendtest.Seed{Package: s.Package, Zip: backendtest.ProviderZip(t, s.Package, "from B")})
	}
	srcA, srcB := sourceMirror(t, seedsA), sourceMirror(t, seedsB)

	for round := range concurrentRounds {
		dst := filepath.Join(t.TempDir(), "dst")
		os.MkdirAll(dst, 0o755)
		a := start(t, "sync", srcA, dst, "--jobs", "4")
		b := start(t, "sync", srcB, dst, "--jobs", "4")
		ra, rb := a.wait(t), b.wait(t)

		lost := map[string]int{} // by process: packages it reported a conflict for
		var wrong []string
		for i, s := range seedsA {
			pkg := s.Package.String()
			got, err := os.ReadFile(filepath.Join(dst, s.Package.Provider.HostnameForDisplay(), s.Package.Provider.Namespace, s.Package.Provider.Type, s.Package.Filename()))
			if err != nil {
				wrong = append(wrong, fmt.Sprintf("%s: no archive landed: %v", pkg, err))
				continue
			}
			winner, loser, wname, lname := ra, rb, "A", "B"
			switch {
			case bytes.Equal(got, s.Zip):
			case bytes.Equal(got, seedsB[i].Zip):
				winner, loser, wname, lname = rb, ra, "B", "A"
			default:
				wrong = append(wrong, fmt.Sprintf("%s: the archive on disk is neither source's", pkg))
				continue
			}
			lost[lname]++
			if !strings.Contains(winner.stdout, "✓ "+pkg+"  ") {
				wrong = append(wrong, fmt.Sprintf("%s: %s's archive is on disk, but %s does not report it done", pkg, wname, wname))
			}
			if strings.Contains(loser.stdout, "✓ "+pkg+"  ") {
				wrong = append(wrong, fmt.Sprintf("%s: %s reports it done, but %s's archive is on disk", pkg, lname, wname))
			}
			if !hasLineWith(loser.stdout+loser.stderr, pkg, "conflict") {
				wrong = append(wrong, fmt.Sprintf("%s: %s names no conflict for it", pkg, lname))
			}
		}
		for name, r := range map[string]result{"A": ra, "B": rb} {
			if want := min(lost[name], 1); r.code != want {
				wrong = append(wrong, fmt.Sprintf("%s lost %d packages and exited %d, want %d", name, lost[name], r.code, want))
			}
		}
		if len(wrong) > 0 {
			t.Fatalf("round %d:\n%s\n\nA:\n%s%s\nB:\n%s%s", round, strings.Join(wrong, "\n"), ra.stdout, ra.stderr, rb.stdout, rb.stderr)
		}
		for _, p := range providers {
			pp, _ := backends.ParseProvider(p)
			indexAgreesWithDisk(t, round, dst, pp)
		}
		if r := run(t, nil, "verify", dst); r.code != 0 {
			t.Errorf("round %d: verify after the race: exit %d\n%s%s", round, r.code, r.stdout, r.stderr)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

func hasLineWith(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

// Two tfmirror sync processes of one provider with disjoint platforms, into
// a mirror that already holds other versions of it, at once: afterwards the
// index documents list every platform on disk (neither process's rewrite
// loses what the other landed), and verify agrees.
func TestConcurrentSyncsOfDisjointPlatforms(t *testing.T) {
	if testing.Short() {
		t.Skip("process race skipped in -short mode")
	}
	p := "example.com/acme/alpha"
	held := []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0", "1.7.0"}
	added := []string{"2.0.0", "2.1.0", "2.2.0"}
	left := []string{"linux_amd64", "linux_arm64", "linux_386", "freebsd_amd64"}
	right := []string{"darwin_arm64", "darwin_amd64", "windows_amd64", "windows_386"}
	all := append(slices.Clone(left), right...)
	// The versions the mirror already holds have archives large enough that
	// rewriting the index documents takes a while, so the two processes'
	// rewrites overlap.
	var seeds []backendtest.Seed
	rng := rand.New(rand.NewPCG(3, 4))
	for _, v := range held {
		for _, plat := range all {
			pkg := backendtest.Pkg(t, p, v, plat)
			body := make([]byte, 32<<10)
			for i := range body {
				body[i] = byte(rng.Uint32())
			}
			seeds = append(seeds, backendtest.Seed{Package: pkg, Zip: backendtest.Zip(t, backendtest.Entry{Name: "terraform-provider-alpha", Body: body})})
		}
	}
	seeds = append(seeds, backendtest.Seeds(t, []string{p}, added, all)...)
	src := sourceMirror(t, seeds)
	template := filepath.Join(t.TempDir(), "held")
	if r := run(t, nil, "sync", src, template, "-v", "< 2.0.0"); r.code != 0 {
		t.Fatalf("sync the versions held: %d %s", r.code, r.stderr)
	}
	platformFlags := func(plats []string) []string {
		var out []string
		for _, pl := range plats {
			out = append(out, "--platform", pl)
		}
		return out
	}
	pp, _ := backends.ParseProvider(p)
	for round := range disjointRounds {
		dst := filepath.Join(t.TempDir(), "dst")
		if err := os.CopyFS(dst, os.DirFS(template)); err != nil {
			t.Fatal(err)
		}
		a := start(t, append([]string{"sync", src, dst, "--jobs", "4"}, platformFlags(left)...)...)
		b := start(t, append([]string{"sync", src, dst, "--jobs", "4"}, platformFlags(right)...)...)
		for name, r := range map[string]result{"A": a.wait(t), "B": b.wait(t)} {
			if r.code != 0 {
				t.Fatalf("round %d: sync %s: exit %d\n%s%s", round, name, r.code, r.stdout, r.stderr)
			}
		}
		indexAgreesWithDisk(t, round, dst, pp)
		if r := run(t, nil, "verify", dst); r.code != 0 {
			t.Errorf("round %d: verify after the race: exit %d\n%s%s", round, r.code, r.stdout, r.stderr)
		}
		if r := run(t, nil, "diff", src, dst); r.code != 0 {
			t.Errorf("round %d: diff after both syncs: exit %d\n%s%s", round, r.code, r.stdout, r.stderr)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// verify exits 1 when an index document disagrees with the archives on
// disk, and names each disagreement: an archive on disk that its version's
// document does not list, a version index.json does not list, and an
// archive a document lists that is not on disk.
func TestVerifyIndexDisagreesWithDisk(t *testing.T) {
	p := "example.com/acme/alpha"
	src := sourceMirror(t, backendtest.Seeds(t, []string{p}, []string{"1.0.0"}, []string{"linux_amd64", "darwin_arm64"}))
	dst := filepath.Join(t.TempDir(), "dst")
	if r := run(t, nil, "sync", src, dst); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, nil, "verify", dst); r.code != 0 {
		t.Fatalf("verify a clean mirror: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pdir := filepath.Join(dst, "example.com/acme/alpha")
	listedAbsent := backendtest.Pkg(t, p, "1.0.0", "darwin_arm64")
	unlistedPlatform := backendtest.Pkg(t, p, "1.0.0", "windows_amd64")
	unlistedVersion := backendtest.Pkg(t, p, "2.0.0", "linux_amd64")
	os.Remove(filepath.Join(pdir, listedAbsent.Filename()))
	backendtest.WritePacked(t, dst, []backendtest.Seed{
		{Package: unlistedPlatform, Zip: backendtest.ProviderZip(t, unlistedPlatform, "")},
		{Package: unlistedVersion, Zip: backendtest.ProviderZip(t, unlistedVersion, "")},
	})

	r := run(t, nil, "verify", dst, "--json")
	if r.code != 1 {
		t.Fatalf("verify: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var findings []struct{ Provider, Version, Platform, Status, Detail string }
	if err := json.Unmarshal([]byte(r.stdout), &findings); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, r.stdout)
	}
	for _, c := range []struct {
		pkg    backends.Package
		status string
		detail []string
	}{
		{listedAbsent, "missing", []string{"1.0.0.json lists " + listedAbsent.Filename(), "missing"}},
		{unlistedPlatform, "mismatch", []string{unlistedPlatform.Filename(), "not listed in example.com/acme/alpha/1.0.0.json"}},
		{unlistedVersion, "mismatch", []string{unlistedVersion.Filename(), "not listed in example.com/acme/alpha/index.json"}},
	} {
		found := false
		for _, f := range findings {
			if f.Provider != p || f.Version != c.pkg.Version.String() || f.Platform != c.pkg.Platform.String() || f.Status != c.status {
				continue
			}
			all := true
			for _, d := range c.detail {
				all = all && strings.Contains(f.Detail, d)
			}
			found = found || all
		}
		if !found {
			t.Errorf("verify names no %s finding for %s with %q:\n%s", c.status, c.pkg, c.detail, r.stdout)
		}
	}
	// Plain output names them too.
	r = run(t, nil, "verify", dst)
	if r.code != 1 || !strings.Contains(r.stdout, unlistedPlatform.Filename()) || !strings.Contains(r.stdout, unlistedVersion.Filename()) || !strings.Contains(r.stdout, listedAbsent.Filename()) {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A sync lists what is on disk again.
	if r := run(t, nil, "sync", src, dst); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, nil, "verify", dst); r.code != 0 {
		t.Fatalf("verify after the sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
