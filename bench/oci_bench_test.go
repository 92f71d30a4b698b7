package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	gosync "sync"
	"testing"

	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// BenchmarkOCIPush pushes 24 release zips from a filesystem mirror into a
// real registry (the distribution registry, in process, TLS) with tfmirror
// sync, and compares with the same blobs and equivalent manifests pushed
// with plain HTTP requests (monolithic blob uploads, no checks): the limit
// for an OCI push on this machine.
func BenchmarkOCIPush(b *testing.B) {
	bin := buildTfmirror(b)
	src, zips := mirrorOf24Zips(b)

	reg := ocitest.New(b)
	push := timeIt(b, "tfmirror sync fs -> oci", func() error {
		cmd := []string{"sync", src, "oci://" + reg.Host() + "/tf/${namespace}/${type}", "--ca-cert", reg.CAFile()}
		w := &world{env: os.Environ()}
		return w.run(bin, cmd...)
	})

	reg2 := ocitest.New(b)
	raw := timeIt(b, "plain HTTP pushes of the same blobs", func() error { return rawPush(reg2, zips) })
	b.Logf("ratio: tfmirror / plain HTTP = %.2f", push.Seconds()/raw.Seconds())
}

// mirrorOf24Zips writes a filesystem mirror of 24 release zips (8 MB
// executables; example.com/bench/{alpha,beta}, 3 versions, 4 platforms),
// without index documents, and returns it with the zips by
// bench/TYPE/VERSION/PLATFORM: what the write benchmarks push.
func mirrorOf24Zips(b *testing.B) (string, map[string][]byte) {
	body := executableBytes(b, 8<<20)
	var names []string
	for _, t := range []string{"alpha", "beta"} {
		for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
			for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
				names = append(names, fmt.Sprintf("bench/%s/%s/%s", t, v, p))
			}
		}
	}
	zips := releaseZips(b, body, names)
	src := b.TempDir()
	var total int64
	for name, z := range zips {
		parts := bytes.Split([]byte(name), []byte("/"))
		ns, ty, v, p := string(parts[0]), string(parts[1]), string(parts[2]), string(parts[3])
		dir := filepath.Join(src, "example.com", ns, ty)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("terraform-provider-%s_%s_%s.zip", ty, v, p)), z, 0o644)
		total += int64(len(z))
	}
	b.Logf("%d zips, %.0f MB, %d cores", len(zips), float64(total)/1e6, runtime.NumCPU())
	return src, zips
}

// rawPush uploads every zip as a monolithic blob, one image manifest each and
// one index per provider version, with as many requests in flight as
// tfmirror uses by default.
func rawPush(reg *ocitest.Registry, zips map[string][]byte) error {
	client := reg.Client()
	base := "https://" + reg.Host()
	put := func(repo, digest string, data []byte) error {
		resp, err := client.Post(base+"/v2/"+repo+"/blobs/uploads/", "application/octet-stream", nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			return fmt.Errorf("no upload location: %s", resp.Status)
		}
		u := loc
		if u[0] == '/' {
			u = base + u
		}
		sep := "?"
		if bytes.ContainsRune([]byte(u), '?') {
			sep = "&"
		}
		req, _ := http.NewRequest(http.MethodPut, u+sep+"digest="+digest, bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err = client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("blob PUT: %s", resp.Status)
		}
		return nil
	}
	putManifest := func(repo, ref, mediaType string, doc []byte) error {
		req, _ := http.NewRequest(http.MethodPut, base+"/v2/"+repo+"/manifests/"+ref, bytes.NewReader(doc))
		req.Header.Set("Content-Type", mediaType)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("manifest PUT: %s", resp.Status)
		}
		return nil
	}
	digestOf := func(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }
	empty := []byte("{}")

	type entry struct {
		repo, version, platform string
		manifest                []byte
	}
	var mu gosync.Mutex
	var entries []entry
	var wg gosync.WaitGroup
	errs := make(chan error, len(zips))
	sem := make(chan struct{}, max(4, 2*runtime.NumCPU()))
	for name, z := range zips {
		parts := bytes.Split([]byte(name), []byte("/"))
		repo := "tf/" + string(parts[0]) + "/" + string(parts[1])
		version, plat := string(parts[2]), string(parts[3])
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := put(repo, digestOf(z), z); err != nil {
				errs <- err
				return
			}
			if err := put(repo, digestOf(empty), empty); err != nil {
				errs <- err
				return
			}
			m, _ := json.Marshal(map[string]any{
				"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
				"artifactType": "application/vnd.opentofu.provider-target",
				"config":       map[string]any{"mediaType": "application/vnd.oci.empty.v1+json", "digest": digestOf(empty), "size": 2},
				"layers":       []any{map[string]any{"mediaType": "archive/zip", "digest": digestOf(z), "size": len(z)}},
			})
			if err := putManifest(repo, digestOf(m), "application/vnd.oci.image.manifest.v1+json", m); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			entries = append(entries, entry{repo, version, plat, m})
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	indexes := map[[2]string][]any{}
	for _, e := range entries {
		os, arch, _ := bytes.Cut([]byte(e.platform), []byte("_"))
		k := [2]string{e.repo, e.version}
		indexes[k] = append(indexes[k], map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "artifactType": "application/vnd.opentofu.provider-target",
			"digest": digestOf(e.manifest), "size": len(e.manifest),
			"platform": map[string]string{"os": string(os), "architecture": string(arch)},
		})
	}
	for k, ms := range indexes {
		idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
			"artifactType": "application/vnd.opentofu.provider", "manifests": ms})
		if err := putManifest(k[0], k[1], "application/vnd.oci.image.index.v1+json", idx); err != nil {
			return err
		}
	}
	return nil
}
