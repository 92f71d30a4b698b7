// Package bench measures tfmirror against its peers and against the
// physical limit, in one run each. Run with bench/sync.sh (or go test
// ./bench -run XXX -bench . -benchtime 1x -v); CI does not run it.
package bench

import (
	"archive/zip"
	"bytes"
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
	"testing"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/tfmirror/tfmirror/backends/registry/registrytest"
	"github.com/tfmirror/tfmirror/hashing"
)

// buildTfmirror builds the binary under test.
func buildTfmirror(b *testing.B) string {
	b.Helper()
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
	fw.Write(body)
	fw.Close()
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
		w.Write(deflated.Bytes())
		n, _ := zw.Create("NOTICE")
		fmt.Fprintf(n, "%s\n", name)
		zw.Close()
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

func newWorld(b *testing.B, archives int) *world {
	platforms := []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"}
	types := []string{"alpha", "beta"}
	versions := []string{"1.0.0", "1.1.0", "1.2.0"}
	if archives != len(platforms)*len(types)*len(versions) {
		b.Fatalf("world has %d archives", len(platforms)*len(types)*len(versions))
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
	os.WriteFile(ca, w.reg.CertPEM(), 0o644)
	cfg := filepath.Join(dir, "cli.tfrc")
	os.WriteFile(cfg, nil, 0o644)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
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
	start := time.Now()
	if err := f(); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	d := time.Since(start)
	b.Logf("%-44s %8.2fs", name, d.Seconds())
	return d
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

// BenchmarkSync: (a) tfmirror sync to an empty filesystem mirror, (b) the
// same sync again, (c) terraform providers mirror for the same providers and
// platforms, and (L) the limit: the larger of a raw parallel download of the
// same files and computing their h1: on all cores with the fastest inflate.
func BenchmarkSync(b *testing.B) {
	bin := buildTfmirror(b)
	w := newWorld(b, 24)
	b.Logf("%d archives, %.0f MB of zips, %d cores", len(w.urls), float64(w.zipBytes)/1e6, runtime.NumCPU())
	host := w.reg.Host()

	dst := filepath.Join(b.TempDir(), "tfmirror")
	args := []string{"sync", "registry://" + host, dst, "-p", "bench/alpha", "-p", "bench/beta", "-v", ">= 1.0"}
	for _, p := range w.platforms {
		args = append(args, "--platform", p)
	}
	a := timeIt(b, "(a) tfmirror sync, empty destination", func() error { return w.run(bin, args...) })
	bb := timeIt(b, "(b) tfmirror sync again (no-op)", func() error { return w.run(bin, args...) })
	if err := w.run(bin, "verify", dst); err != nil {
		b.Fatalf("verify: %v", err)
	}

	var c time.Duration
	if tf, err := exec.LookPath("terraform"); err == nil {
		cfgDir := b.TempDir()
		var req strings.Builder
		req.WriteString("terraform {\n  required_providers {\n")
		for _, p := range w.providers {
			fmt.Fprintf(&req, "    %s = { source = %q }\n", p.Type, host+"/"+p.Namespace+"/"+p.Type)
		}
		req.WriteString("  }\n}\n")
		os.WriteFile(filepath.Join(cfgDir, "main.tf"), []byte(req.String()), 0o644)
		// providers mirror takes the newest version per provider; run it
		// once per version so it fetches the same 24 archives.
		c = timeIt(b, "(c) terraform providers mirror", func() error {
			for _, v := range w.providers[0].Versions {
				mainTF := strings.ReplaceAll(req.String(), "\" }", "\", version = \"= "+v.Version+"\" }")
				os.WriteFile(filepath.Join(cfgDir, "main.tf"), []byte(mainTF), 0o644)
				targs := []string{"-chdir=" + cfgDir, "providers", "mirror"}
				for _, p := range w.platforms {
					targs = append(targs, "-platform="+p)
				}
				targs = append(targs, filepath.Join(b.TempDir(), "tf"))
				if err := w.run(tf, targs...); err != nil {
					return err
				}
			}
			return nil
		})
	} else {
		b.Log("(c) skipped: terraform is not on PATH")
	}

	dl, files := w.rawDownload(b)
	h1 := timeIt(b, "(L2) h1 of every archive on all cores", func() error { return hashAll(files) })
	limit := max(dl, h1)
	b.Logf("(L)  limit = max(download, h1)                %8.2fs", limit.Seconds())
	b.Logf("ratios: (a)/(L) = %.2f (target <= 1.15)   (b)/(a) = %.1f%% (target < 3%%)", a.Seconds()/limit.Seconds(), 100*bb.Seconds()/a.Seconds())
	if c > 0 {
		b.Logf("        (c)/(a) = %.2fx faster than terraform providers mirror (target >= 2.8)", c.Seconds()/a.Seconds())
	}
}

// rawDownload fetches every archive with one goroutine per core, to disk.
func (w *world) rawDownload(b *testing.B) (time.Duration, []string) {
	dir := b.TempDir()
	files := make([]string, len(w.urls))
	client := w.reg.Client()
	d := timeIt(b, "(L1) raw parallel download", func() error {
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
				_, err = io.Copy(f, resp.Body)
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
	return d, files
}

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
			if _, err := hashing.HashZip(f, hashing.Options{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
