package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

// BenchmarkOCIPush pushes 12 release zips (one provider, 3 versions x 4
// platforms, ~23 MB each holding a 60 MB executable) into a real registry
// (the distribution registry, in process, TLS), each tool into a fresh one,
// ROUNDS times:
//
//	tfmirror push ZIPS      the zips as given (release files: zh:, the
//	                        layer digest, computed as each is read for it,
//	                        then uploaded straight from the file)
//	push ZIPS + SHA256SUMS  the zips with goreleaser's SHA256SUMS per
//	                        version (the fair equivalent of a layout that
//	                        states its digests): uploaded under the stated
//	                        digests without a read before, and again
//	push DIST/ signed       the same zips, SHA256SUMS and their signatures
//	                        in a goreleaser dist (with its reports and
//	                        build directories), with --signing-key: the
//	                        signature checked, provenance written
//	tfmirror sync MIRROR    a filesystem mirror whose index states zh:
//	push again              re-push of the same zips: uploads nothing
//	oras, crane, regctl     the same layout (an OCI image layout per version,
//	                        as OpenTofu reads it) copied into the registry,
//	                        the three versions at once; each tool is looked
//	                        for in $TFMIRROR_TOOLS (bench/report.sh installs
//	                        them with the Go toolchain) and skipped if absent
//	plain HTTP              the same blobs and manifests with plain requests
func BenchmarkOCIPush(b *testing.B) {
	bin := buildTfmirror(b)
	body := executableBytes(b, 60<<20)
	var names []string
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
			names = append(names, fmt.Sprintf("bench/alpha/%s/%s", v, p))
		}
	}
	zips := releaseZips(b, body, names)
	src := b.TempDir() // a filesystem mirror
	pdir := filepath.Join(src, "example.com", "bench", "alpha")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		b.Fatal(err)
	}
	var files []string
	var total int64
	docs := map[string]map[string]any{}
	for name, z := range zips {
		parts := strings.Split(name, "/")
		v, p := parts[2], parts[3]
		file := filepath.Join(pdir, fmt.Sprintf("terraform-provider-alpha_%s_%s.zip", v, p))
		if err := os.WriteFile(file, z, 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, file)
		total += int64(len(z))
		if docs[v] == nil {
			docs[v] = map[string]any{}
		}
		docs[v][p] = map[string]any{"url": filepath.Base(file), "hashes": []string{fmt.Sprintf("zh:%x", sha256.Sum256(z))}}
	}
	index := map[string]any{}
	for v, d := range docs {
		doc, _ := json.Marshal(map[string]any{"archives": d})
		if err := os.WriteFile(filepath.Join(pdir, v+".json"), doc, 0o644); err != nil {
			b.Fatal(err)
		}
		index[v] = map[string]any{}
	}
	doc, _ := json.Marshal(map[string]any{"versions": index})
	if err := os.WriteFile(filepath.Join(pdir, "index.json"), doc, 0o644); err != nil {
		b.Fatal(err)
	}
	layouts := writeLayouts(b, zips)
	sums := writeSHA256SUMS(b, zips)
	dist, key := signedDist(b, files, sums)
	b.Logf("%d zips, %.0f MB, %d cores", len(zips), float64(total)/1e6, runtime.NumCPU())
	rounds := 1
	fmt.Sscan(os.Getenv("ROUNDS"), &rounds)
	var all []map[string]float64
	for round := 1; round <= rounds; round++ {
		b.Logf("round %d of %d", round, rounds)
		all = append(all, ociRound(b, bin, files, sums, dist, key, src, layouts, zips))
	}
	if rounds > 1 {
		logMedians(b, all)
	}
}

// logMedians prints each peer's ratios to tfmirror's pushes as the median
// over the rounds: the registry shares the two cores with the tools, so a
// single round's wall ratio swings with its CPU; the tools' own CPU does
// not.
func logMedians(b *testing.B, rounds []map[string]float64) {
	median := func(key string) float64 {
		var v []float64
		for _, r := range rounds {
			if x, ok := r[key]; ok {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	b.Logf("  medians over %d rounds (wall; the tool's own CPU):", len(rounds))
	for _, tool := range []string{"oras", "crane", "regctl"} {
		if median(tool+"/push") == 0 {
			continue
		}
		b.Logf("    %-7s / push = %.2fx (CPU %.2fx)   / push+SUMS = %.2fx (CPU %.2fx)   / sync = %.2fx (CPU %.2fx)  (target > 1)", tool,
			median(tool+"/push"), median(tool+"/push cpu"), median(tool+"/push+SUMS"), median(tool+"/push+SUMS cpu"), median(tool+"/sync"), median(tool+"/sync cpu"))
	}
}

// writeSHA256SUMS writes goreleaser's terraform-provider-alpha_VERSION_SHA256SUMS
// for each version of zips (by bench/alpha/VERSION/PLATFORM) into a
// directory of its own, and returns their paths.
func writeSHA256SUMS(b *testing.B, zips map[string][]byte) []string {
	dir := b.TempDir()
	lines := map[string][]string{}
	for name, z := range zips {
		parts := strings.Split(name, "/")
		v, p := parts[2], parts[3]
		lines[v] = append(lines[v], fmt.Sprintf("%x  terraform-provider-alpha_%s_%s.zip\n", sha256.Sum256(z), v, p))
	}
	var out []string
	for v, ls := range lines {
		p := filepath.Join(dir, "terraform-provider-alpha_"+v+"_SHA256SUMS")
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
			b.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// signedDist lays the zips and SHA256SUMS out as goreleaser's dist/ does
// (hard links), with a detached signature beside each SHA256SUMS, the
// reports and a build directory; it returns dist/ and the public key.
func signedDist(b *testing.B, files, sums []string) (string, string) {
	dist := b.TempDir()
	signer := backendtest.NewSigner(b, "bench releases")
	for _, f := range append(append([]string(nil), files...), sums...) {
		if err := os.Link(f, filepath.Join(dist, filepath.Base(f))); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range sums {
		doc, _ := os.ReadFile(s)
		var sig bytes.Buffer
		if err := openpgp.DetachSign(&sig, signer.Entity, bytes.NewReader(doc), nil); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dist, filepath.Base(s)+".sig"), sig.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"artifacts.json", "metadata.json", "config.yaml"} {
		if err := os.WriteFile(filepath.Join(dist, name), []byte("{}"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dist, "terraform-provider-alpha_linux_amd64_v1"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "terraform-provider-alpha_linux_amd64_v1", "terraform-provider-alpha_v1.2.0"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	key := filepath.Join(b.TempDir(), "bench.asc")
	if err := os.WriteFile(key, []byte(signer.Armor), 0o644); err != nil {
		b.Fatal(err)
	}
	return dist, key
}

// ociRound measures one round and returns its ratios: each peer's wall
// time and CPU to tfmirror's push, push+SUMS and sync ("oras/push",
// "oras/push cpu", ...).
func ociRound(b *testing.B, bin string, files, sums []string, dist, key, src string, layouts map[string]string, zips map[string][]byte) map[string]float64 {
	w := &world{env: os.Environ()}
	tmpl := func(reg *ocitest.Registry) string { return "oci://" + reg.Host() + "/tf/${namespace}/${type}" }
	reg := ocitest.New(b)
	timeIt := func(b *testing.B, name string, f func() error) time.Duration {
		d, _ := timeCPU(b, name, f)
		return d
	}
	push, pushCPU := timeCPU(b, "tfmirror push ZIPS (zh:, read once)", func() error {
		return w.run(bin, append(append([]string{"push"}, files...), tmpl(reg), "--provider", "example.com/bench/alpha", "--ca-cert", reg.CAFile())...)
	})
	uploads := reg.BlobUploads()
	again := timeIt(b, "tfmirror push ZIPS again", func() error {
		return w.run(bin, append(append([]string{"push"}, files...), tmpl(reg), "--provider", "example.com/bench/alpha", "--ca-cert", reg.CAFile())...)
	})
	b.Logf("    blob uploads: %d, then %d on the re-push", uploads, reg.BlobUploads()-uploads)
	regS := ocitest.New(b)
	withSums := append(append([]string{"push"}, files...), sums...)
	withSums = append(withSums, tmpl(regS), "--provider", "example.com/bench/alpha", "--ca-cert", regS.CAFile())
	pushSums, pushSumsCPU := timeCPU(b, "tfmirror push ZIPS + SHA256SUMS (no read before)", func() error { return w.run(bin, withSums...) })
	uploads = regS.BlobUploads()
	requests := len(regS.Requests())
	timeIt(b, "tfmirror push ZIPS + SHA256SUMS again", func() error { return w.run(bin, withSums...) })
	b.Logf("    blob uploads: %d, then %d on the re-push; %d requests, then %d", uploads, regS.BlobUploads()-uploads, requests, len(regS.Requests())-requests)
	regD := ocitest.New(b)
	signed := timeIt(b, "tfmirror push DIST/ --signing-key (signed)", func() error {
		return w.run(bin, "push", dist, tmpl(regD), "--provider", "example.com/bench/alpha", "--signing-key", key, "--ca-cert", regD.CAFile())
	})
	b.Logf("    push DIST/ signed / push ZIPS + SHA256SUMS = %.2f (wall); blob uploads: %d, %d requests (provenance: a referrer per version)", signed.Seconds()/pushSums.Seconds(), regD.BlobUploads(), len(regD.Requests()))
	reg2 := ocitest.New(b)
	sync, syncCPU := timeCPU(b, "tfmirror sync MIRROR (index states zh:)", func() error {
		return w.run(bin, "sync", src, tmpl(reg2), "--ca-cert", reg2.CAFile())
	})
	tools, toolCPU := map[string]time.Duration{}, map[string]float64{}
	for _, tool := range []string{"oras", "crane", "regctl"} {
		exe := toolPath(tool)
		if exe == "" {
			b.Logf("  %-52s skipped: not installed (bench/report.sh installs it with go install)", tool)
			continue
		}
		r := ocitest.New(b)
		tools[tool], toolCPU[tool] = timeCPU(b, tool+" of the same layout", func() error { return pushLayouts(b, tool, exe, r, layouts) })
	}
	reg3 := ocitest.New(b)
	raw := timeIt(b, "plain HTTP pushes of the same blobs", func() error { return rawPush(reg3, zips) })
	b.Logf("  ratios:")
	ratios := map[string]float64{}
	for _, tool := range []string{"oras", "crane", "regctl"} {
		d, ok := tools[tool]
		if !ok {
			continue
		}
		for name, t := range map[string]struct {
			wall time.Duration
			cpu  float64
		}{"push": {push, pushCPU}, "push+SUMS": {pushSums, pushSumsCPU}, "sync": {sync, syncCPU}} {
			ratios[tool+"/"+name] = d.Seconds() / t.wall.Seconds()
			ratios[tool+"/"+name+" cpu"] = toolCPU[tool] / t.cpu
		}
		b.Logf("    %-7s / push = %.2fx   / push+SUMS = %.2fx   / sync = %.2fx  (target > 1)", tool, ratios[tool+"/push"], ratios[tool+"/push+SUMS"], ratios[tool+"/sync"])
	}
	b.Logf("    push / plain HTTP = %.2f   sync / plain HTTP = %.2f   re-push / push = %.1f%%", push.Seconds()/raw.Seconds(), sync.Seconds()/raw.Seconds(), 100*again.Seconds()/push.Seconds())
	return ratios
}

// timeCPU is timeIt with the CPU each side spent, which load does not
// distort as it does wall time: the tool's processes (user+sys of the
// children waited for) and this process, where the registry runs. The
// page cache's dirty pages are written out first, so that no step pays
// for the writes of the one before.
func timeCPU(b *testing.B, name string, f func() error) (wall time.Duration, toolCPU float64) {
	syscall.Sync()
	var self0, self1, kids0, kids1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids0)
	start := time.Now()
	if err := f(); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	d := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids1)
	cpu := func(a, b syscall.Rusage) float64 {
		return float64(b.Utime.Nano()+b.Stime.Nano()-a.Utime.Nano()-a.Stime.Nano()) / 1e9
	}
	b.Logf("  %-52s %8.2fs   cpu: tool %.2fs, registry %.2fs", name, d.Seconds(), cpu(kids0, kids1), cpu(self0, self1))
	return d, cpu(kids0, kids1)
}

// toolPath finds a peer tool: $TFMIRROR_TOOLS/NAME, then PATH.
func toolPath(name string) string {
	if dir := os.Getenv("TFMIRROR_TOOLS"); dir != "" {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// writeLayouts writes one OCI image layout per version, as OpenTofu's
// oci_mirror reads them: per platform an image manifest (empty config, the
// zip as its single archive/zip layer), per version an index tagged with
// the version. It returns the layout directories by version.
func writeLayouts(b *testing.B, zips map[string][]byte) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	byVersion := map[string][]ocispec.Descriptor{}
	stores := map[string]*oci.Store{}
	for name, z := range zips {
		parts := strings.Split(name, "/")
		v, plat := parts[2], parts[3]
		st := stores[v]
		if st == nil {
			dir := filepath.Join(b.TempDir(), "layout-"+v)
			var err error
			if st, err = oci.New(dir); err != nil {
				b.Fatal(err)
			}
			stores[v], out[v] = st, dir
		}
		layer := content.NewDescriptorFromBytes("archive/zip", z)
		cfg := ocispec.DescriptorEmptyJSON
		man, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
			ArtifactType: "application/vnd.opentofu.provider-target", Config: cfg, Layers: []ocispec.Descriptor{layer}})
		mdesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man)
		for _, blob := range []struct {
			d ocispec.Descriptor
			b []byte
		}{{layer, z}, {cfg, cfg.Data}, {mdesc, man}} {
			if err := st.Push(ctx, blob.d, bytes.NewReader(blob.b)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
				b.Fatal(err)
			}
		}
		os, arch, _ := strings.Cut(plat, "_")
		mdesc.ArtifactType = "application/vnd.opentofu.provider-target"
		mdesc.Platform = &ocispec.Platform{OS: os, Architecture: arch}
		byVersion[v] = append(byVersion[v], mdesc)
	}
	for v, ms := range byVersion {
		idx, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
			ArtifactType: "application/vnd.opentofu.provider", Manifests: ms})
		idesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, idx)
		if err := stores[v].Push(ctx, idesc, bytes.NewReader(idx)); err != nil {
			b.Fatal(err)
		}
		if err := stores[v].Tag(ctx, idesc, v); err != nil {
			b.Fatal(err)
		}
		// index.json names the version's index only (the store lists every
		// manifest it was given), so crane pushes it as the tagged thing.
		ij := filepath.Join(out[v], "index.json")
		raw, _ := os.ReadFile(ij)
		var top ocispec.Index
		json.Unmarshal(raw, &top)
		var tagged []ocispec.Descriptor
		for _, d := range top.Manifests {
			if d.Annotations[ocispec.AnnotationRefName] != "" {
				tagged = append(tagged, d)
			}
		}
		top.Manifests = tagged
		raw, _ = json.Marshal(top)
		if err := os.WriteFile(ij, raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// pushLayouts copies every version's layout into reg with a peer tool, the
// versions at once (as tfmirror pushes them).
func pushLayouts(b *testing.B, tool, exe string, reg *ocitest.Registry, layouts map[string]string) error {
	home := b.TempDir()
	env := append(os.Environ(), "HOME="+home, "SSL_CERT_FILE="+reg.CAFile(), "DOCKER_CONFIG="+home)
	if tool == "regctl" {
		cmd := exec.Command(exe, "registry", "set", reg.Host(), "--tls", "insecure")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
	}
	errs := make(chan error, len(layouts))
	for v, dir := range layouts {
		ref := reg.Host() + "/tf/bench/alpha:" + v
		var args []string
		switch tool {
		case "oras":
			args = []string{"cp", "--from-oci-layout", dir + ":" + v, ref, "--to-ca-file", reg.CAFile()}
		case "crane":
			args = []string{"push", dir, ref}
		case "regctl":
			args = []string{"image", "copy", "ocidir://" + dir + ":" + v, ref}
		}
		go func() {
			cmd := exec.Command(exe, args...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%s %v: %v\n%s", tool, args, err, out)
			}
			errs <- err
		}()
	}
	var first error
	for range layouts {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
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
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("terraform-provider-%s_%s_%s.zip", ty, v, p)), z, 0o644); err != nil {
			b.Fatal(err)
		}
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
