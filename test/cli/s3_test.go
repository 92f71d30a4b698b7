package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/test/killtest"
)

// s3World is a real S3 server (versitygw, over TLS), one bucket on it, and
// what a tfmirror process needs to reach it: the AWS environment and the
// --s3-endpoint and --ca-cert flags.
type s3World struct {
	srv    *s3test.Server
	bucket string
}

func newS3World(t *testing.T) *s3World {
	t.Helper()
	srv := s3test.Start(t)
	return &s3World{srv: srv, bucket: srv.Bucket(t)}
}

// place is s3://BUCKET/prefix.
func (w *s3World) place(prefix string) string { return "s3://" + w.bucket + "/" + prefix }

// run runs the binary with the server's environment and flags.
func (w *s3World) run(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, append(cleanEnv(t), w.srv.Env()...), append(args, w.srv.Args()...)...)
}

// must runs the binary and fails the test unless it exits 0.
func (w *s3World) must(t *testing.T, args ...string) result {
	t.Helper()
	r := w.run(t, args...)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// object reads an object anonymously over HTTPS, as a client of the
// network mirror does (the bucket must be public-read).
func (w *s3World) object(t *testing.T, key string) (int, string, []byte) {
	t.Helper()
	return w.srv.Get(t, w.bucket, key)
}

type lsRow struct {
	Provider, Version, Platform string
	Hashes                      []string
	Size                        int64
}

func lsRows(t *testing.T, r result) []lsRow {
	t.Helper()
	var rows []lsRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, r.stdout)
	}
	return rows
}

// A sync into a bucket leaves exactly the documents a sync into a directory
// writes, byte for byte, served as application/json; every command reads
// the bucket as it reads the directory; and a sync out of the bucket gives
// the same mirror back.
func TestS3SyncBothWays(t *testing.T) {
	w := newS3World(t)
	w.srv.PublicRead(t, w.bucket)
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha", "registry.terraform.io/hashicorp/null"},
		[]string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "darwin_arm64"})
	src := sourceMirror(t, seeds)
	dst := w.place("tf/providers")
	w.must(t, "sync", src, dst)
	dir := filepath.Join(t.TempDir(), "dir")
	w.must(t, "sync", src, dir)

	for _, p := range []string{"example.com/acme/alpha", "registry.terraform.io/hashicorp/null"} {
		for _, doc := range []string{"index.json", "1.0.0.json", "1.1.0.json"} {
			want, err := os.ReadFile(filepath.Join(dir, p, doc))
			if err != nil {
				t.Fatal(err)
			}
			status, ctype, got := w.object(t, "tf/providers/"+p+"/"+doc)
			if status != 200 || ctype != "application/json" || !bytes.Equal(got, want) {
				t.Errorf("%s/%s: %d %q\n%s\nwant, as in the directory:\n%s", p, doc, status, ctype, got, want)
			}
		}
	}

	fromDir := lsRows(t, w.must(t, "ls", dir, "--json"))
	fromBucket := lsRows(t, w.must(t, "ls", dst, "--json"))
	if len(fromBucket) != len(seeds) || !slices.EqualFunc(fromDir, fromBucket, func(a, b lsRow) bool {
		return a.Provider == b.Provider && a.Version == b.Version && a.Platform == b.Platform && slices.Equal(a.Hashes, b.Hashes) && a.Size == b.Size
	}) {
		t.Errorf("ls of the bucket:\n%+v\nof the directory:\n%+v", fromBucket, fromDir)
	}
	w.must(t, "verify", dst)
	w.must(t, "diff", src, dst)
	if r := w.must(t, "sync", src, dst); !strings.Contains(r.stderr, "0 synced (0 B)") || !strings.Contains(r.stderr, "8 already present") {
		t.Errorf("a second sync is not a no-op:\n%s%s", r.stdout, r.stderr)
	}

	back := filepath.Join(t.TempDir(), "back")
	w.must(t, "sync", dst, back)
	w.must(t, "diff", dst, back)
	w.must(t, "verify", back)

	lock := filepath.Join(t.TempDir(), "team.lock.hcl")
	w.must(t, "lock", dst, "--lock", lock, "-p", "acme/alpha", "-v", "1.1.0", "--platform", "linux_amd64", "--platform", "darwin_arm64")
	var rows []struct{ Status string }
	if r := w.must(t, "check", dst, "--lock", lock, "--json"); json.Unmarshal([]byte(r.stdout), &rows) != nil || len(rows) != 2 || rows[0].Status != "ok" || rows[1].Status != "ok" {
		t.Errorf("check against the bucket:\n%s", r.stdout)
	}
}

// A different archive for a package the bucket holds is a conflict, left
// alone (exit 1) unless --force, which replaces it and its listing.
func TestS3ConflictUnlessForced(t *testing.T) {
	w := newS3World(t)
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	a := sourceMirror(t, []backendtest.Seed{{Package: pkg, Zip: backendtest.ProviderZip(t, pkg, "a")}})
	b := sourceMirror(t, []backendtest.Seed{{Package: pkg, Zip: backendtest.ProviderZip(t, pkg, "b")}})
	dst := w.place("")
	w.must(t, "sync", a, dst)
	r := w.run(t, "sync", b, dst)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "conflict") {
		t.Fatalf("a different archive without --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.must(t, "diff", a, dst)
	w.must(t, "sync", b, dst, "--force")
	w.must(t, "diff", b, dst)
	w.must(t, "verify", dst)
}

// Usage errors about the bucket and its store exit 2 and say what to do.
func TestS3UsageErrors(t *testing.T) {
	w := newS3World(t)
	noRegion := append(cleanEnv(t), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y", "AWS_REGION=", "AWS_DEFAULT_REGION=",
		"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_EC2_METADATA_DISABLED=true")
	noCredentials := append(cleanEnv(t), "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_PROFILE=", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_EC2_METADATA_DISABLED=true")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no bucket", nil, []string{"ls", "s3://"}, "no bucket"},
		{"bad endpoint", nil, []string{"ls", "s3://b", "--s3-endpoint", "ftp://x"}, "--s3-endpoint ftp://x"},
		{"no region", noRegion, []string{"ls", "s3://b"}, "no AWS region"},
		{"no such bucket", nil, append([]string{"ls", "s3://nosuch-bucket/tf"}, w.srv.Args()...), "the bucket does not exist"},
		{"no credentials", noCredentials, append([]string{"ls", "s3://" + w.bucket}, w.srv.Args()...), "no AWS credentials: set AWS_ACCESS_KEY_ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = append(cleanEnv(t), w.srv.Env()...)
			}
			r := run(t, env, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.HasSuffix(strings.TrimSpace(r.stderr), ": usage") {
				t.Errorf("%v: exit %d, want 2 with %q\n%s%s", tc.args, r.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
	// A store whose certificate is not trusted: the message says how to.
	r := run(t, append(cleanEnv(t), append(w.srv.Env(), "AWS_CA_BUNDLE=")...), "ls", "s3://"+w.bucket, "--s3-endpoint", w.srv.URL)
	if r.code == 0 || !strings.Contains(r.stderr, "ListObjectsV2: ") || !strings.Contains(r.stderr, "--ca-cert") || strings.Contains(r.stderr, "RequestID") {
		t.Errorf("an untrusted store: exit %d\n%s", r.code, r.stderr)
	}
}

// listKeys returns every key in the bucket under prefix.
func (w *s3World) listKeys(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	pages := s3api.NewListObjectsV2Paginator(w.srv.Client(), &s3api.ListObjectsV2Input{Bucket: &w.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, *o.Key)
		}
	}
	return keys
}

// bucketConsistent checks, with nothing of tfmirror in between, that the
// documents under prefix are never ahead of the archives: every version an
// index.json lists has its version document, and every archive a version
// document lists is in the bucket with the zh: the document states. It
// returns how many archives the documents do not list (yet): all a killed
// sync may leave, for the next sync to list.
func (w *s3World) bucketConsistent(t *testing.T, prefix string) (unlisted int) {
	t.Helper()
	keys := w.listKeys(t, prefix)
	have := map[string]bool{}
	byDir := map[string][]string{}
	for _, k := range keys {
		have[k] = true
		byDir[path.Dir(k)] = append(byDir[path.Dir(k)], k)
	}
	for dir, ks := range byDir {
		listed := map[string]bool{}
		if have[dir+"/index.json"] {
			var idx struct{ Versions map[string]struct{} }
			if err := json.Unmarshal(w.getObject(t, dir+"/index.json"), &idx); err != nil {
				t.Fatalf("%s/index.json: %v", dir, err)
			}
			for v := range idx.Versions {
				if !have[dir+"/"+v+".json"] {
					t.Fatalf("%s/index.json lists %s, whose document is not there", dir, v)
				}
				var doc struct {
					Archives map[string]struct {
						Hashes []string
						URL    string
					}
				}
				if err := json.Unmarshal(w.getObject(t, dir+"/"+v+".json"), &doc); err != nil {
					t.Fatalf("%s/%s.json: %v", dir, v, err)
				}
				for plat, a := range doc.Archives {
					key := dir + "/" + a.URL
					if !have[key] {
						t.Fatalf("%s/%s.json lists %s for %s, which is not in the bucket", dir, v, a.URL, plat)
					}
					sum := sha256.Sum256(w.getObject(t, key))
					if zh := "zh:" + hex.EncodeToString(sum[:]); !slices.Contains(a.Hashes, zh) {
						t.Fatalf("%s/%s.json lists %v for %s, the archive is %s", dir, v, a.Hashes, a.URL, zh)
					}
					listed[key] = true
				}
			}
		}
		for _, k := range ks {
			if strings.HasSuffix(k, ".zip") && !listed[k] {
				unlisted++
			}
		}
	}
	return unlisted
}

// getObject reads an object through the plain S3 client.
func (w *s3World) getObject(t *testing.T, key string) []byte {
	t.Helper()
	out, err := w.srv.Client().GetObject(context.Background(), &s3api.GetObjectInput{Bucket: &w.bucket, Key: &key})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return b
}

// randomSeeds are packages whose zips hold incompressible bytes, so each
// takes a while to move.
func randomSeeds(t *testing.T, seed uint64, size int, providers, versions, platforms []string) []backendtest.Seed {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var seeds []backendtest.Seed
	for _, p := range providers {
		for _, v := range versions {
			for _, plat := range platforms {
				pkg := backendtest.Pkg(t, p, v, plat)
				body := make([]byte, size)
				for i := range body {
					body[i] = byte(rng.Uint32())
				}
				seeds = append(seeds, backendtest.Seed{Package: pkg, Zip: backendtest.Zip(t,
					backendtest.Entry{Name: "terraform-provider-" + pkg.Provider.Type, Body: body})})
			}
		}
	}
	return seeds
}

// TestS3KillLeavesNoIndexAheadOfArchives kills syncs into a bucket with
// SIGKILL at random moments. After each kill no document is ahead of the
// archives (checked object by object with a plain S3 client), verify finds
// nothing but archives not listed yet, and a re-run completes the sync and
// lists them.
func TestS3KillLeavesNoIndexAheadOfArchives(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test skipped in -short mode")
	}
	w := newS3World(t)
	seeds := randomSeeds(t, 5, 256<<10, []string{"example.com/acme/alpha", "example.com/acme/beta"},
		[]string{"1.0.0", "1.1.0"}, []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"})
	src := sourceMirror(t, seeds)
	begin := time.Now()
	w.must(t, "sync", src, w.place("probe"), "--jobs", "4")
	full := time.Since(begin)
	t.Logf("a full sync of %d archives into the bucket takes %s", len(seeds), full)

	killtest.Kills{
		Start: func(t *testing.T, i int) *exec.Cmd {
			cmd := exec.Command(tfmirrorBin, append([]string{"sync", src, w.place(fmt.Sprintf("kill%d", i)), "--jobs", "4"}, w.srv.Args()...)...)
			cmd.Env = append(cleanEnv(t), w.srv.Env()...)
			return cmd
		},
		Window: full, N: 20, Seed: 7,
		Check: func(t *testing.T, k killtest.Kill) {
			i, delay, prefix := k.I, k.Delay, fmt.Sprintf("kill%d", k.I)
			unlisted := w.bucketConsistent(t, prefix+"/")
			if unlisted > 0 {
				r := w.run(t, "verify", w.place(prefix), "--json")
				var findings []struct{ Status, Detail string }
				if err := json.Unmarshal([]byte(r.stdout), &findings); err != nil || r.code != 1 {
					t.Fatalf("kill %d after %s: verify: exit %d %v\n%s%s", i, delay, r.code, err, r.stdout, r.stderr)
				}
				for _, f := range findings {
					if f.Status != "ok" && !strings.Contains(f.Detail, "not listed in") {
						t.Fatalf("kill %d after %s: verify: %s: %s", i, delay, f.Status, f.Detail)
					}
				}
			}
			w.must(t, "sync", src, w.place(prefix), "--jobs", "4")
			w.must(t, "diff", src, w.place(prefix))
			w.must(t, "verify", w.place(prefix))
			if n := w.bucketConsistent(t, prefix+"/"); n != 0 {
				t.Fatalf("kill %d: %d archives still unlisted after the re-run", i, n)
			}
		},
	}.Run(t)
}

// Two tfmirror processes sync disjoint platforms of the same versions into
// one bucket at once, rounds over: afterwards the documents list every
// archive both landed (neither rewrite loses the other's), with the right
// hashes, and verify and diff agree.
func TestS3ConcurrentWritersConverge(t *testing.T) {
	if testing.Short() {
		t.Skip("process race skipped in -short mode")
	}
	w := newS3World(t)
	left := []string{"linux_amd64", "linux_arm64", "linux_386", "freebsd_amd64"}
	right := []string{"darwin_arm64", "darwin_amd64", "windows_amd64", "windows_386"}
	seeds := randomSeeds(t, 9, 16<<10, []string{"example.com/acme/alpha"},
		[]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0", "2.2.0"}, append(slices.Clone(left), right...))
	src := sourceMirror(t, seeds)
	for round := range 10 {
		dst := w.place(fmt.Sprintf("round%d", round))
		a := startWith(t, w.srv.Env(), append(append([]string{"sync", src, dst, "--jobs", "4"}, platformFlags(left)...), w.srv.Args()...)...)
		b := startWith(t, w.srv.Env(), append(append([]string{"sync", src, dst, "--jobs", "4"}, platformFlags(right)...), w.srv.Args()...)...)
		for name, r := range map[string]result{"A": a.wait(t), "B": b.wait(t)} {
			if r.code != 0 {
				t.Fatalf("round %d: sync %s: exit %d\n%s%s", round, name, r.code, r.stdout, r.stderr)
			}
		}
		if n := w.bucketConsistent(t, fmt.Sprintf("round%d/", round)); n != 0 {
			t.Fatalf("round %d: the documents miss %d archives the two syncs landed", round, n)
		}
		w.must(t, "verify", dst)
		w.must(t, "diff", src, dst)
	}
}

// tofuBinary finds OpenTofu: TFMIRROR_TOFU, the tool cache the test setup
// builds it into, or PATH; it skips the test otherwise.
func tofuBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TFMIRROR_TOFU"); p != "" {
		return p
	}
	if cache, err := os.UserCacheDir(); err == nil {
		if p := filepath.Join(cache, "tfmirror-tools", "tofu-1.12.6"); isFile(p) {
			return p
		}
	}
	if p, err := exec.LookPath("tofu"); err == nil {
		return p
	}
	t.Skip("tofu is not installed (set TFMIRROR_TOFU, or build OpenTofu 1.12.6 into ~/.cache/tfmirror-tools/tofu-1.12.6): skipping the test against the real client")
	return ""
}

func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

// networkMirror is a CLI configuration whose only installation method is
// the network mirror at url.
func networkMirror(url string) string {
	return fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", url)
}

// clientInit runs `init` of a real client (terraform or tofu) in a fresh
// directory whose configuration pins provider at version, with the CLI
// configuration cliConfig, trusting only caPEM. It returns the output, the
// lock file written and how the client exited.
func clientInit(t *testing.T, bin string, caPEM []byte, cliConfig, provider, version string) (out, lock string, err error) {
	t.Helper()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	cfg := filepath.Join(dir, "cli.tfrc")
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(ca, caPEM, 0o644)
	os.WriteFile(cfg, []byte(cliConfig), 0o644)
	os.WriteFile(filepath.Join(work, "main.tf"), []byte(fmt.Sprintf(
		"terraform {\n  required_providers {\n    alpha = { source = %q, version = \"= %s\" }\n  }\n}\n", provider, version)), 0o644)
	cmd := exec.Command(bin, "-chdir="+work, "init", "-input=false", "-no-color")
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+ca, "SSL_CERT_DIR="+dir, "HOME="+home, "TF_CLI_CONFIG_FILE="+cfg,
		"TF_PLUGIN_CACHE_DIR=", "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	b, err := cmd.CombinedOutput()
	l, _ := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	return string(b), string(l), err
}

// terraform init and tofu init install straight from the bucket, read
// anonymously over HTTPS as a network mirror, the provider tfmirror synced
// into it; they record the h1: tfmirror lists; and they refuse an archive
// swapped behind the bucket's documents.
func TestS3ClientsInstallFromTheBucket(t *testing.T) {
	clients := map[string]string{"tofu": tofuBinary(t)}
	if tf, err := exec.LookPath("terraform"); err == nil {
		clients["terraform"] = tf
	} else {
		t.Log("terraform is not on PATH: only tofu is tried")
	}
	w := newS3World(t)
	w.srv.PublicRead(t, w.bucket)
	host := runtime.GOOS + "_" + runtime.GOARCH
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, []string{host, "windows_386"})
	src := sourceMirror(t, seeds)
	w.must(t, "sync", src, w.place("tf/providers"))
	url := w.srv.URL + "/" + w.bucket + "/tf/providers/"
	rows := lsRows(t, w.must(t, "ls", w.place("tf/providers"), "--json", "-v", "1.1.0", "--platform", host))
	if len(rows) != 1 {
		t.Fatalf("ls: %+v", rows)
	}
	for name, bin := range clients {
		out, lock, err := clientInit(t, bin, w.srv.CertPEM(), networkMirror(url), "example.com/acme/alpha", "1.1.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.1.0") {
			t.Fatalf("%s init from %s: %v\n%s", name, url, err, out)
		}
		for _, h := range rows[0].Hashes {
			if strings.HasPrefix(h, "h1:") && !strings.Contains(lock, h) {
				t.Errorf("%s recorded another h1: than the bucket lists (%s):\n%s", name, h, lock)
			}
		}
	}

	// An archive swapped behind the documents: both clients refuse it.
	pkg := backendtest.Pkg(t, "example.com/acme/alpha", "1.0.0", host)
	key := "tf/providers/example.com/acme/alpha/" + pkg.Filename()
	body := backendtest.ProviderZip(t, pkg, "swapped")
	if _, err := w.srv.Client().PutObject(context.Background(), &s3api.PutObjectInput{Bucket: &w.bucket, Key: &key, Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	for name, bin := range clients {
		out, _, err := clientInit(t, bin, w.srv.CertPEM(), networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err == nil || !strings.Contains(strings.ToLower(out), "checksum") {
			t.Errorf("%s init of a swapped archive: %v\n%s", name, err, out)
		}
	}
	if r := w.run(t, "verify", w.place("tf/providers")); r.code != 1 || !strings.Contains(r.stdout, "mismatch") {
		t.Errorf("verify of the swapped archive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// An OCI registry on object storage (Debian's docker-registry, its s3
// driver writing into a versitygw bucket): tfmirror syncs into it, the
// blobs are objects in the bucket, tfmirror verifies it, and tofu installs
// from it as an oci_mirror.
func TestTofuInstallsFromAnOCIRegistryOnObjectStorage(t *testing.T) {
	tofu := tofuBinary(t)
	w := newS3World(t)
	reg := w.srv.Registry(t, w.bucket)
	host := runtime.GOOS + "_" + runtime.GOARCH
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{host, "windows_386"})
	src := sourceMirror(t, seeds)
	dst := "oci://" + reg.Host + "/tf/${namespace}/${type}"
	if r := run(t, cleanEnv(t), "sync", src, dst, "--ca-cert", reg.CAFile()); r.code != 0 {
		t.Fatalf("sync into the registry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	blobs := w.listKeys(t, strings.TrimPrefix(reg.Root, "/")+"/docker/registry/v2/blobs/sha256/")
	for _, s := range seeds {
		sum := sha256.Sum256(s.Zip)
		d := hex.EncodeToString(sum[:])
		if !slices.Contains(blobs, strings.TrimPrefix(reg.Root, "/")+"/docker/registry/v2/blobs/sha256/"+d[:2]+"/"+d+"/data") {
			t.Errorf("%s: its zip is not a blob in the bucket (%d blobs there)", s.Package, len(blobs))
		}
	}
	if r := run(t, cleanEnv(t), "verify", dst, "--ca-cert", reg.CAFile(), "-p", "example.com/acme/alpha"); r.code != 0 {
		t.Fatalf("verify the registry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cliConfig := fmt.Sprintf("provider_installation {\n  oci_mirror {\n    repository_template = %q\n    include = [\"example.com/*/*\"]\n  }\n}\n"+
		"oci_default_credentials {\n  discover_ambient_credentials = false\n}\n", reg.Host+"/tf/${namespace}/${type}")
	out, lock, err := clientInit(t, tofu, reg.CertPEM(), cliConfig, "example.com/acme/alpha", "1.0.0")
	if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.0.0") {
		t.Fatalf("tofu init from the registry on object storage: %v\n%s", err, out)
	}
	sum := sha256.Sum256(seeds[0].Zip)
	if !strings.Contains(lock, "zh:"+hex.EncodeToString(sum[:])) {
		t.Errorf("tofu did not record the layer's zh: in the lock:\n%s", lock)
	}
}

// The terminal UI opens a bucket beside a directory, shows what each holds,
// and copies a package the bucket lacks into it.
func TestS3InTheTerminalUI(t *testing.T) {
	w := newS3World(t)
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"darwin_arm64", "linux_amd64"})
	src := sourceMirror(t, seeds)
	dst := w.place("tf")
	w.must(t, "sync", src, dst, "--platform", "linux_amd64")
	s := newTmux(t, 120, 36, append(w.srv.Env(), "NO_COLOR=1"), append([]string{"ui", src, dst}, w.srv.Args()...)...)
	s.waitFor("acme/alpha", "(s3)")
	s.keys("Enter", "Enter") // the matrix; queue 1.0.0 darwin_arm64, which the bucket lacks
	s.waitFor("to which mirror?")
	s.keys("Enter")
	s.waitFor("1 to copy: 1 from [1]")
	s.keys("Enter")
	s.waitFor("1 done")
	s.keys("q")
	s.waitGone()
	if rows := lsRows(t, w.must(t, "ls", dst, "--json")); len(rows) != 2 {
		t.Errorf("after the UI's copy the bucket holds %+v", rows)
	}
	w.must(t, "verify", dst)
}

// Credentials and region come from the AWS configuration chain: here a
// named profile in the shared config and credentials files, with nothing in
// the environment but AWS_PROFILE and the files' paths.
func TestS3CredentialsFromAProfile(t *testing.T) {
	w := newS3World(t)
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	config := filepath.Join(dir, "config")
	os.WriteFile(creds, []byte(fmt.Sprintf("[mirror-writer]\naws_access_key_id = %s\naws_secret_access_key = %s\n", s3test.AccessKey, s3test.SecretKey)), 0o600)
	os.WriteFile(config, []byte("[profile mirror-writer]\nregion = "+s3test.Region+"\n"), 0o600)
	env := append(cleanEnv(t), "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_REGION=", "AWS_DEFAULT_REGION=", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_PROFILE=mirror-writer", "AWS_SHARED_CREDENTIALS_FILE="+creds, "AWS_CONFIG_FILE="+config)
	src := sourceMirror(t, backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"}))
	if r := run(t, env, append([]string{"sync", src, w.place("tf")}, w.srv.Args()...)...); r.code != 0 {
		t.Fatalf("sync with a profile's credentials: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.must(t, "diff", src, w.place("tf"))
}
