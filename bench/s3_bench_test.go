package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/sync/errgroup"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/fs"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
	"github.com/tfmirror/tfmirror/sync/engine"
)

// runS3 runs the tfmirror binary against srv (its AWS environment, flags
// and nothing of the machine's AWS configuration). With TFMIRROR_BENCH_CPU
// set, it prints the CPU time tfmirror itself used, to tell its work from
// the server's on a machine they share.
func runS3(bin string, srv *s3test.Server, args ...string) (string, error) {
	out, _, err := runS3Logged(bin, srv, args...)
	return out, err
}

// runS3Logged is runS3 that also returns what tfmirror wrote on stderr.
func runS3Logged(bin string, srv *s3test.Server, args ...string) (string, string, error) {
	cmd := exec.Command(bin, append(args, srv.Args()...)...)
	cmd.Env = append(os.Environ(), srv.Env()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("%v\n%s%s", err, out.String(), errb.String())
	}
	if os.Getenv("TFMIRROR_BENCH_CPU") != "" {
		fmt.Fprintf(os.Stderr, "    %s: tfmirror used %s user, %s system\n", args[0], cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime())
	}
	return out.String(), errb.String(), nil
}

// BenchmarkS3Sync syncs 24 release zips (8 MB executables) into a bucket
// of a real S3 server (versitygw, over loopback TLS) with tfmirror, each
// sync into a fresh bucket, ROUNDS times (default 1), and compares:
//
//	(R) the same bytes PUT with the AWS SDK as fast as it goes (as many in
//	    flight as tfmirror's jobs; no staging, hashing, signing of the body
//	    or documents): the limit of a write into this store on this machine.
//	    Over TLS the SDK sends the body unsigned (UNSIGNED-PAYLOAD): neither
//	    side hashes it, and a body cut short may land truncated
//	(S) the same PUTs, each signed with its body's SHA-256 (the SDK's own
//	    signing, as over plain HTTP), which the store checks before it
//	    creates the object: the two SHA-256 passes tfmirror's guarantees
//	    need too (the zh: it verifies, the store's check of the upload)
//	(a) tfmirror sync of a filesystem mirror whose index documents state
//	    zh: (as a mirror synced from a registry does), checked against them
//	(b) the same sync again, which finds everything present
//	(c) tfmirror sync of a bare directory of zips: nothing vouches for
//	    them, so h1: is computed (every zip inflated)
//	(H) h1: of every zip on all cores: with (R), the floor of (c)
//
// Each figure has the CPU-seconds of the client (this process, or
// tfmirror) and of the server beside it: the two share the machine's
// cores. Last, one more sync (a) runs with --debug, to count its requests
// by kind.
func BenchmarkS3Sync(b *testing.B) {
	bin := buildTfmirror(b)
	bare, zips := mirrorOf24Zips(b)
	stated := statedMirror(b, bare)
	var files []string
	filepath.WalkDir(bare, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".zip") {
			files = append(files, p)
		}
		return err
	})
	srv := s3test.Start(b)
	rounds := 1
	fmt.Sscan(os.Getenv("ROUNDS"), &rounds)
	for round := 1; round <= rounds; round++ {
		b.Logf("round %d of %d", round, rounds)
		raw := measureS3(b, srv, "(R) raw parallel PUT of the same bytes", func() error { return rawPut(srv, srv.Bucket(b), zips, false) })
		signed := measureS3(b, srv, "(S) the same, each signed with its SHA-256", func() error { return rawPut(srv, srv.Bucket(b), zips, true) })
		dst := "s3://" + srv.Bucket(b) + "/tf"
		a := measureS3(b, srv, "(a) tfmirror sync MIRROR -> s3 (index states zh:)", func() error { _, err := runS3(bin, srv, "sync", stated, dst); return err })
		again := timeIt(b, "(b) tfmirror sync again (no-op)", func() error { _, err := runS3(bin, srv, "sync", stated, dst); return err })
		if _, err := runS3(bin, srv, "verify", dst); err != nil {
			b.Fatalf("verify: %v", err)
		}
		dstBare := "s3://" + srv.Bucket(b) + "/tf"
		c := timeIt(b, "(c) tfmirror sync DIR -> s3 (bare zips: h1: computed)", func() error { _, err := runS3(bin, srv, "sync", bare, dstBare); return err })
		h1 := timeIt(b, "(H) h1 of every zip on all cores", func() error { return hashAll(files) })
		b.Logf("ratios: (a)/(R) = %.2f (target <= 1.2), CPU %.2f   (a)/(S) = %.2f, CPU %.2f   (b)/(a) = %.1f%%   (c)/max(R,H) = %.2f",
			a.wall.Seconds()/raw.wall.Seconds(), a.cpu()/raw.cpu(), a.wall.Seconds()/signed.wall.Seconds(), a.cpu()/signed.cpu(),
			100*again.Seconds()/a.wall.Seconds(), c.Seconds()/max(raw.wall, h1).Seconds())
	}
	_, log, err := runS3Logged(bin, srv, "sync", stated, "s3://"+srv.Bucket(b)+"/tf", "--debug")
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("requests of one sync (a): %s", countRequests(log))
}

// s3Figure is one measurement: wall time, and the CPU-seconds of the
// client and of the server.
type s3Figure struct{ wall, client, server time.Duration }

// cpu is the client's and the server's CPU-seconds together.
func (f s3Figure) cpu() float64 { return (f.client + f.server).Seconds() }

// measureS3 is measure with the server's CPU-seconds beside the client's.
func measureS3(b *testing.B, srv *s3test.Server, name string, f func() error) s3Figure {
	cpu0, s0 := cpuSpent(), srv.CPU()
	start := time.Now()
	if err := f(); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	fig := s3Figure{wall: time.Since(start), client: cpuSpent() - cpu0, server: srv.CPU() - s0}
	b.Logf("  %-52s %8.2fs  (cpu %.2fs, server %.2fs)", name, fig.wall.Seconds(), fig.client.Seconds(), fig.server.Seconds())
	return fig
}

// countRequests counts the requests a --debug log shows, by kind.
func countRequests(log string) string {
	counts := map[string]int{}
	total := 0
	for _, line := range strings.Split(log, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "debug:" {
			continue
		}
		method, url := fields[1], fields[2]
		path, _, _ := strings.Cut(url, "?")
		kind := method
		switch {
		case strings.Contains(url, "list-type=2"):
			kind = "LIST"
		case strings.HasSuffix(path, ".zip"):
			kind += " archive"
		case strings.HasSuffix(path, "/index.json"):
			kind += " index.json"
		case strings.HasSuffix(path, ".json"):
			kind += " version doc"
		}
		counts[kind]++
		total++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	out := fmt.Sprint(total)
	for _, k := range kinds {
		out += fmt.Sprintf(", %s %d", k, counts[k])
	}
	return out
}

// statedMirror copies the zips under bare into a filesystem mirror and
// writes its index documents, which state each zip's zh:.
func statedMirror(b *testing.B, bare string) string {
	dst := b.TempDir()
	copyVisible(b, bare, dst)
	m, err := fs.Open(dst, dst, fs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range []string{"alpha", "beta"} {
		p, _ := backends.ParseProvider("example.com/bench/" + t)
		if err := m.Flush(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
	return dst
}

// rawPut PUTs every zip with the SDK, as many at once as tfmirror's jobs;
// signed, each is signed with its SHA-256, which the SDK computes (it
// swaps its payload signing over TLS, UNSIGNED-PAYLOAD, for the one it
// uses over plain HTTP).
func rawPut(srv *s3test.Server, bucket string, zips map[string][]byte, signed bool) error {
	client := srv.Client()
	var opts []func(*s3api.Options)
	if signed {
		opts = append(opts, func(o *s3api.Options) {
			o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
				_, err := stack.Finalize.Swap((&v4.ComputePayloadSHA256{}).ID(), &v4.ComputePayloadSHA256{})
				return err
			})
		})
	}
	var g errgroup.Group
	g.SetLimit(engine.DefaultJobs())
	for name, z := range zips {
		g.Go(func() error {
			key := "raw/" + name + ".zip"
			_, err := client.PutObject(context.Background(), &s3api.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(z)}, opts...)
			return err
		})
	}
	return g.Wait()
}

// BenchmarkS3List lists a bucket holding 10,000 archives (10 providers x
// 250 versions x 4 platforms, with their documents) with tfmirror ls, and
// re-syncs the same mirror into it (nothing to do), ROUNDS times (default
// 1). The mirror is written into the server's storage directory as files
// (the setup, not what is measured), as versitygw serves files placed
// there.
func BenchmarkS3List(b *testing.B) {
	bin := buildTfmirror(b)
	var providers, versions []string
	for i := range 10 {
		providers = append(providers, fmt.Sprintf("example.com/bench/p%02d", i))
	}
	for i := range 250 {
		versions = append(versions, fmt.Sprintf("%d.%d.0", 1+i/50, i%50))
	}
	seeds := backendtest.Seeds(b, providers, versions, []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"})
	src := b.TempDir()
	backendtest.WritePacked(b, src, seeds)
	m, err := fs.Open(src, src, fs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range providers {
		pp, _ := backends.ParseProvider(p)
		if err := m.Flush(context.Background(), pp); err != nil {
			b.Fatal(err)
		}
	}
	srv := s3test.Start(b)
	bucket := srv.Bucket(b)
	copyVisible(b, src, filepath.Join(srv.Dir, bucket, "tf"))
	dst := "s3://" + bucket + "/tf"
	b.Logf("%d archives in %d providers, %d cores", len(seeds), len(providers), runtime.NumCPU())

	rounds := 1
	fmt.Sscan(os.Getenv("ROUNDS"), &rounds)
	for round := 1; round <= rounds; round++ {
		b.Logf("round %d of %d", round, rounds)
		var out string
		ls := timeIt(b, "(l) tfmirror ls s3:// (10,000 archives)", func() error { out, err = runS3(bin, srv, "ls", dst, "--json"); return err })
		if n := strings.Count(out, `"provider"`); n != len(seeds) {
			b.Fatalf("ls listed %d packages, want %d", n, len(seeds))
		}
		lsDir := timeIt(b, "(d) tfmirror ls of the same mirror as a directory", func() error { _, err := runS3(bin, srv, "ls", src, "--json"); return err })
		noop := timeIt(b, "(n) tfmirror sync of it again (no-op)", func() error {
			out, err := runS3(bin, srv, "sync", src, dst, "--json")
			if err == nil && !strings.Contains(out, `"done":0`) {
				err = fmt.Errorf("the re-sync did something:\n%s", out)
			}
			return err
		})
		b.Logf("(l) = %.2fs (target < 2 s), %.1fx the directory's (d); no-op re-sync (n) = %.2fs", ls.Seconds(), ls.Seconds()/lsDir.Seconds(), noop.Seconds())
	}
}

// copyVisible copies the files under src that are not hidden (the lock
// files a filesystem mirror keeps) to dst.
func copyVisible(b *testing.B, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}
