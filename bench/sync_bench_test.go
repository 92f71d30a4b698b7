// Package bench measures tfmirror against its peers and against the
// physical limit, in one run each. Run with bench/sync.sh (or go test
// ./bench -run XXX -bench . -benchtime 1x -v); CI does not run it.
package bench

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// buildTfmirror builds the binary under test ($TFMIRROR_BIN, when set, is
// used instead: to compare two builds).
func buildTfmirror(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("TFMIRROR_BIN"); p != "" {
		return p
	}
	bin := filepath.Join(b.TempDir(), "tfmirror")
	out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// executableBytes returns n bytes of a real Go binary (terraform where
// present, else this test binary), repeated: they deflate ~3-4x, as real
// provider binaries do, unlike random bytes.
func executableBytes(b *testing.B, n int) []byte {
	src, err := exec.LookPath("terraform")
	if err != nil {
		src, _ = os.Executable()
	}
	seed, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, seed[:min(len(seed), n-len(out))]...)
	}
	return out
}

// releaseZips builds one zip per name, each holding the same ~60 MB
// executable (compressed once, written raw into each zip) and a small file
// that makes each zip unique.
func releaseZips(b *testing.B, body []byte, names []string) map[string][]byte {
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.DefaultCompression)
	if _, err := fw.Write(body); err != nil {
		b.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		b.Fatal(err)
	}
	crc := crc32.ChecksumIEEE(body)
	out := map[string][]byte{}
	for _, name := range names {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "terraform-provider-" + strings.Split(name, "/")[1], Method: zip.Deflate,
			CRC32: crc, CompressedSize64: uint64(deflated.Len()), UncompressedSize64: uint64(len(body))})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(deflated.Bytes()); err != nil {
			b.Fatal(err)
		}
		n, _ := zw.Create("NOTICE")
		fmt.Fprintf(n, "%s\n", name)
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
		out[name] = buf.Bytes()
	}
	return out
}

type world struct {
	reg       *registrytest.Server
	providers []registrytest.Provider
	platforms []string
	urls      []string // archive download URLs
	env       []string // trust the registry's certificate, isolated HOME
	zipBytes  int64
}

// newWorld serves archives (a multiple of 12) from a local origin registry:
// archives/12 providers x 3 versions x 4 platforms, each zip ~17 MB
// holding a 60 MB executable.
func newWorld(b *testing.B, archives int) *world {
	platforms := []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"}
	versions := []string{"1.0.0", "1.1.0", "1.2.0"}
	if archives%12 != 0 {
		b.Fatalf("a world has a multiple of 12 archives, not %d", archives)
	}
	var types []string
	for i := range archives / 12 {
		types = append(types, fmt.Sprintf("p%02d", i))
	}
	body := executableBytes(b, 60<<20)
	w := &world{platforms: platforms}
	var names []string
	for _, t := range types {
		for _, v := range versions {
			for _, p := range platforms {
				names = append(names, fmt.Sprintf("bench/%s/%s/%s", t, v, p))
			}
		}
	}
	zips := releaseZips(b, body, names)
	for _, t := range types {
		p := registrytest.Provider{Namespace: "bench", Type: t}
		for _, v := range versions {
			ver := registrytest.Version{Version: v, Archives: map[string][]byte{}}
			for _, plat := range platforms {
				z := zips[fmt.Sprintf("bench/%s/%s/%s", t, v, plat)]
				ver.Archives[plat] = z
				w.zipBytes += int64(len(z))
			}
			p.Versions = append(p.Versions, ver)
		}
		w.providers = append(w.providers, p)
	}
	w.reg = registrytest.New(b, w.providers...)
	dir := b.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, w.reg.CertPEM(), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(dir, "cli.tfrc")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		b.Fatal(err)
	}
	w.env = append(os.Environ(), "SSL_CERT_FILE="+ca, "SSL_CERT_DIR="+dir, "HOME="+home, "TF_CLI_CONFIG_FILE="+cfg, "TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1")
	w.urls = w.downloadURLs(b)
	return w
}

// downloadURLs asks the registry where each archive is, as a client would.
func (w *world) downloadURLs(b *testing.B) []string {
	c := w.reg.Client()
	var urls []string
	for _, p := range w.providers {
		for _, v := range p.Versions {
			for _, plat := range w.platforms {
				os, arch, _ := strings.Cut(plat, "_")
				resp, err := c.Get(fmt.Sprintf("%s/v1/providers/%s/%s/%s/download/%s/%s", w.reg.URL(), p.Namespace, p.Type, v.Version, os, arch))
				if err != nil {
					b.Fatal(err)
				}
				var meta struct {
					DownloadURL string `json:"download_url"`
				}
				json.NewDecoder(resp.Body).Decode(&meta)
				resp.Body.Close()
				if meta.DownloadURL == "" {
					b.Fatalf("no download_url for %s %s %s (is the registry API at /v1/providers/?)", p.Type, v.Version, plat)
				}
				urls = append(urls, meta.DownloadURL)
			}
		}
	}
	return urls
}

func timeIt(b *testing.B, name string, f func() error) time.Duration {
	d, _ := measure(b, name, f)
	return d
}

// measure times f and counts the CPU it cost this process (the registry
// server, an in-process download or hash) and the children it waited for
// (tfmirror, the clients): on a machine shared with other work, the wall
// clock says how long, and the CPU-seconds what the work itself costs.
func measure(b *testing.B, name string, f func() error) (wall, cpu time.Duration) {
	cpu0 := cpuSpent()
	start := time.Now()
	if err := f(); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	wall, cpu = time.Since(start), cpuSpent()-cpu0
	b.Logf("  %-52s %8.2fs  (cpu %.2fs)", name, wall.Seconds(), cpu.Seconds())
	return wall, cpu
}

// cpuSpent is the user and system CPU time of this process and of its
// children that have been waited for.
func cpuSpent() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

func (w *world) run(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// BenchmarkSync measures, for 12 and 48 archives (SYNC_ARCHIVES="12 48"),
// each figure and what it is compared with in one run, ROUNDS times
// (default 1), and prints the ratios of each round:
//
//	(L1) a raw parallel download of the same files, to disk
//	(L1+) the same download, each byte hashed with SHA-256 and each file
//	     fsynced: the floor of a sync that checks and keeps every byte
//	(a)  tfmirror sync registry -> fs (zh: against the signed SHA256SUMS)
//	(b)  the same sync again (nothing to do)
//	(A)  tfmirror sync --hashes all (h1: of every archive too)
//	(L2) h1: of the same files on all cores with the standard library's
//	     inflater (dirhash.HashZip): the floor for (A), lock and verify
//	(V)  tfmirror verify of (A)'s mirror (its index states h1:)
//	(K)  tfmirror lock --hashes all of (A)'s mirror, every platform
//	(c)  terraform providers mirror, (d) tofu providers mirror
func BenchmarkSync(b *testing.B) {
	bin := buildTfmirror(b)
	sizes := strings.Fields(os.Getenv("SYNC_ARCHIVES"))
	if len(sizes) == 0 {
		sizes = []string{"12", "48"}
	}
	rounds := 1
	fmt.Sscan(os.Getenv("ROUNDS"), &rounds)
	for _, size := range sizes {
		var n int
		fmt.Sscan(size, &n)
		w := newWorld(b, n)
		b.Logf("%d archives, %.0f MB of zips, %d cores, tofu %s", len(w.urls), float64(w.zipBytes)/1e6, runtime.NumCPU(), tofuPath())
		for round := 1; round <= rounds; round++ {
			b.Logf("round %d of %d", round, rounds)
			w.syncRound(b, bin)
		}
	}
}

func (w *world) syncRound(b *testing.B, bin string) {
	host := w.reg.Host()
	args := func(dst string, extra ...string) []string {
		a := []string{"sync", "registry://" + host, dst, "-v", ">= 1.0"}
		for _, p := range w.providers {
			a = append(a, "-p", p.Namespace+"/"+p.Type)
		}
		for _, p := range w.platforms {
			a = append(a, "--platform", p)
		}
		return append(a, extra...)
	}
	dl, dlCPU, files := w.rawDownload(b, "(L1) raw parallel download", false)
	dlChecked, dlCheckedCPU, _ := w.rawDownload(b, "(L1+) the same, SHA-256 of every byte, fsync", true)
	dst := filepath.Join(b.TempDir(), "tfmirror")
	a, aCPU := measure(b, "(a)  tfmirror sync registry -> fs", func() error { return w.run(bin, args(dst)...) })
	bb := timeIt(b, "(b)  the same sync again (no-op)", func() error { return w.run(bin, args(dst)...) })
	all := filepath.Join(b.TempDir(), "tfmirror-all")
	aAll, aAllCPU := measure(b, "(A)  tfmirror sync --hashes all", func() error { return w.run(bin, args(all, "--hashes", "all")...) })
	floor, floorCPU := measure(b, "(L2) h1 on all cores, standard library inflate", func() error { return hashAllStdlib(files) })
	verify := timeIt(b, "(V)  tfmirror verify of (A) (h1: listed)", func() error { return w.run(bin, "verify", all) })
	// --hashes all: hash every package (the mirror states its hashes, which
	// lock would otherwise record without reading an archive).
	lockArgs := []string{"lock", all, "--hashes", "all", "--lock", filepath.Join(b.TempDir(), ".terraform.lock.hcl")}
	for _, p := range w.providers {
		lockArgs = append(lockArgs, "-p", host+"/"+p.Namespace+"/"+p.Type)
	}
	lockArgs = append(lockArgs, "-v", "1.2.0")
	for _, p := range w.platforms {
		lockArgs = append(lockArgs, "--platform", p)
	}
	lockT := timeIt(b, "(K)  tfmirror lock --hashes all of (A), every platform", func() error { return w.run(bin, lockArgs...) })
	lockFiles := len(w.providers) * len(w.platforms)
	lockFloor := timeIt(b, "(L3) h1 of the locked archives, standard library", func() error { return hashAllStdlib(lockedFiles(files, len(w.platforms), lockFiles)) })

	tf := w.providersMirror(b, "terraform", "(c)  terraform providers mirror")
	tofu := w.providersMirror(b, tofuPath(), "(d)  tofu providers mirror")

	b.Logf("  ratios:")
	b.Logf("    (a)/(L1) = %.2f   sync vs raw download (target <= 1.15); CPU-seconds %.2f", a.Seconds()/dl.Seconds(), aCPU.Seconds()/dlCPU.Seconds())
	b.Logf("    (a)/(L1+) = %.2f  sync vs the checked, durable download (its floor); CPU-seconds %.2f", a.Seconds()/dlChecked.Seconds(), aCPU.Seconds()/dlCheckedCPU.Seconds())
	b.Logf("    (b)/(a)  = %.1f%%  no-op re-sync vs sync", 100*bb.Seconds()/a.Seconds())
	b.Logf("    (A)/(L2) = %.2f   --hashes all vs stdlib h1 floor (target <= 1.0); CPU-seconds %.2f", aAll.Seconds()/floor.Seconds(), aAllCPU.Seconds()/floorCPU.Seconds())
	b.Logf("    (V)/(L2) = %.2f   verify vs stdlib h1 floor (target <= 1.1)", verify.Seconds()/floor.Seconds())
	b.Logf("    (K)/(L3) = %.2f   lock vs stdlib h1 floor (target <= 1.1)", lockT.Seconds()/lockFloor.Seconds())
	if tf > 0 {
		b.Logf("    (c)/(a)  = %.2fx  faster than terraform providers mirror (target >= 5)", tf.Seconds()/a.Seconds())
	}
	if tofu > 0 {
		b.Logf("    (d)/(a)  = %.2fx  faster than tofu providers mirror (target >= 1.3)", tofu.Seconds()/a.Seconds())
	}
}

// lockedFiles are the downloaded files of the versions lock locks (the
// newest: every provider's last version), one per platform.
func lockedFiles(files []string, platforms, n int) []string {
	var out []string
	perProvider := 3 * platforms
	for i := 0; len(out) < n && i*perProvider < len(files); i++ {
		last := i*perProvider + 2*platforms
		out = append(out, files[last:last+platforms]...)
	}
	return out
}

// tofuPath is OpenTofu as backendtest finds it (see shared/testing.md), or
// "" when it is not installed.
func tofuPath() string {
	if p := os.Getenv("TFMIRROR_TOFU"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "tfmirror-tools", "tofu-1.12.6")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath("tofu"); err == nil {
		return p
	}
	return ""
}

// providersMirror runs `providers mirror` of a client for the world's
// providers and platforms, once per version (it takes the newest match).
func (w *world) providersMirror(b *testing.B, client, name string) time.Duration {
	bin, err := exec.LookPath(client)
	if client == "" || err != nil {
		b.Logf("  %-52s skipped: not installed", name)
		return 0
	}
	cfgDir := b.TempDir()
	out := b.TempDir()
	return timeIt(b, name, func() error {
		for _, v := range w.providers[0].Versions {
			var req strings.Builder
			req.WriteString("terraform {\n  required_providers {\n")
			for _, p := range w.providers {
				fmt.Fprintf(&req, "    %s = { source = %q, version = \"= %s\" }\n", p.Type, w.reg.Host()+"/"+p.Namespace+"/"+p.Type, v.Version)
			}
			req.WriteString("  }\n}\n")
			os.WriteFile(filepath.Join(cfgDir, "main.tf"), []byte(req.String()), 0o644)
			args := []string{"-chdir=" + cfgDir, "providers", "mirror"}
			for _, p := range w.platforms {
				args = append(args, "-platform="+p)
			}
			if err := w.run(bin, append(args, out)...); err != nil {
				return err
			}
		}
		return nil
	})
}

// rawDownload fetches every archive with one goroutine per core, to disk;
// it returns the wall and CPU time (the server's included) it took.
// rawDownload downloads every archive in parallel to disk, as fast as it
// goes (L1). With checked, each file is also hashed with SHA-256 as it
// arrives and fsynced before it counts (L1+): the least any sync that checks
// every byte against its zh: and keeps what it wrote through a crash must do.
func (w *world) rawDownload(b *testing.B, name string, checked bool) (time.Duration, time.Duration, []string) {
	dir := b.TempDir()
	files := make([]string, len(w.urls))
	client := w.reg.Client()
	d, cpu := measure(b, name, func() error {
		var wg gosync.WaitGroup
		errs := make(chan error, len(w.urls))
		sem := make(chan struct{}, max(4, 2*runtime.NumCPU()))
		for i, u := range w.urls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				resp, err := client.Get(u)
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				files[i] = filepath.Join(dir, fmt.Sprintf("%d.zip", i))
				f, _ := os.Create(files[i])
				var dst io.Writer = f
				h := sha256.New()
				if checked {
					dst = io.MultiWriter(f, h)
				}
				_, err = io.Copy(dst, resp.Body)
				if checked && err == nil {
					h.Sum(nil)
					err = f.Sync()
				}
				f.Close()
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	})
	return d, cpu, files
}

// hashAllStdlib computes the h1: of every file with dirhash.HashZip (the
// standard library's inflater, as the clients do), one file per core.
func hashAllStdlib(files []string) error {
	var wg gosync.WaitGroup
	errs := make(chan error, len(files))
	sem := make(chan struct{}, runtime.NumCPU())
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := dirhash.HashZip(f, dirhash.Hash1); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// hashAll computes the h1: of every file with tfmirror's hashing (the
// faster inflater), one file per core.
func hashAll(files []string) error {
	var wg gosync.WaitGroup
	errs := make(chan error, len(files))
	sem := make(chan struct{}, runtime.NumCPU())
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := hashing.ZipH1(f, hashing.Options{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
