package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
)

// bigProviderZip is a release zip of pkg with a random, incompressible file
// beside the executable: large enough that serve streams it in several
// chunks, so a mismatch found at its end cuts a transfer already under way.
func bigProviderZip(t *testing.T, provider, version, platform string) backendtest.Seed {
	t.Helper()
	pkg := backendtest.Pkg(t, provider, version, platform)
	filler := make([]byte, 400_000)
	rand.Read(filler)
	return backendtest.Seed{Package: pkg, Zip: backendtest.Zip(t,
		backendtest.Entry{Name: "terraform-provider-" + pkg.Provider.Type + "_v" + version, Body: []byte("#!/bin/sh\nexit 1\n")},
		backendtest.Entry{Name: "filler", Body: filler, Mode: 0o644})}
}

// servedSeeds are example.com/acme/alpha 1.0.0 and 1.1.0 for this machine's
// platform and windows_386; 1.0.0's zip for this platform is a large one.
func servedSeeds(t *testing.T) (seeds []backendtest.Seed, big backendtest.Seed) {
	t.Helper()
	host := runtime.GOOS + "_" + runtime.GOARCH
	big = bigProviderZip(t, "example.com/acme/alpha", "1.0.0", host)
	for _, s := range backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0", "1.1.0"}, []string{host, "windows_386"}) {
		if s.Package.Key() == big.Package.Key() {
			s = big
		}
		seeds = append(seeds, s)
	}
	return seeds, big
}

// theClients are the real clients: terraform and tofu.
func theClients(t *testing.T, why string) map[string]string {
	t.Helper()
	return map[string]string{"terraform": backendtest.Terraform(t, why), "tofu": backendtest.Tofu(t, why)}
}

// installThroughServe has each client install example.com/acme/alpha 1.1.0
// through the served mirror at url, and checks what it locked: the h1:
// tfmirror computes for the zip (both clients compute it on install), and
// for tofu, which records the mirror's hashes it verified, the zip's zh:.
func installThroughServe(t *testing.T, clients map[string]string, url string, caPEM []byte, seeds []backendtest.Seed) {
	t.Helper()
	host := runtime.GOOS + "_" + runtime.GOARCH
	var zip []byte
	for _, s := range seeds {
		if s.Package.Version.String() == "1.1.0" && s.Package.Platform.String() == host {
			zip = s.Zip
		}
	}
	f := t.TempDir() + "/alpha.zip"
	os.WriteFile(f, zip, 0o644)
	sums, err := hashing.HashPath(f, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, bin := range clients {
		out, lock, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.1.0")
		if err != nil || !strings.Contains(out, "Installed example.com/acme/alpha v1.1.0") {
			t.Fatalf("%s init through serve at %s: %v\n%s", name, url, err, out)
		}
		if !strings.Contains(lock, string(sums.H1)) {
			t.Errorf("%s locked another h1: than the zip's %s:\n%s", name, sums.H1, lock)
		}
		if name == "tofu" && !strings.Contains(lock, string(sums.ZH)) {
			t.Errorf("tofu did not lock the served %s:\n%s", sums.ZH, lock)
		}
	}
}

// refusedThroughServe has each client try to install 1.0.0, whose zip for
// this platform no longer matches what the place states: the install fails
// with a checksum or transfer error and nothing is installed.
func refusedThroughServe(t *testing.T, clients map[string]string, url string, caPEM []byte) {
	t.Helper()
	failed := regexp.MustCompile(`(?i)checksum|unexpected EOF|stream error|INTERNAL_ERROR|connection reset`)
	for name, bin := range clients {
		out, lock, err := clientInit(t, bin, caPEM, networkMirror(url), "example.com/acme/alpha", "1.0.0")
		if err == nil || strings.Contains(out, "Installed example.com/acme/alpha") || !failed.MatchString(out) || strings.Contains(lock, "1.0.0") {
			t.Errorf("%s init of the damaged zip through serve: %v\n%s\nlock:\n%s", name, err, out, lock)
		}
	}
}

// terraform init and tofu init install through `tfmirror serve` from an
// OCI mirror (a real registry; the template leaves out ${hostname}); a zip
// damaged in the registry's storage is cut short, and both clients fail.
func TestServeAnOCIMirrorToTheClients(t *testing.T) {
	clients := theClients(t, "installing through tfmirror serve of an OCI mirror")
	seeds, big := servedSeeds(t)
	reg := ocitest.New(t)
	place := "oci://" + reg.Host() + "/tf/${namespace}/${type}"
	if r := run(t, cleanEnv(t), "sync", sourceMirror(t, seeds), place, "--ca-cert", reg.CAFile()); r.code != 0 {
		t.Fatalf("sync into the registry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	url, cert, stop := startServeWith(t, cleanEnv(t), place, "--ca-cert", reg.CAFile())
	caPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	installThroughServe(t, clients, url, caPEM, seeds)

	sum := sha256.Sum256(big.Zip)
	reg.CorruptBlob(t, "sha256:"+hex.EncodeToString(sum[:]))
	refusedThroughServe(t, clients, url, caPEM)
	if log := stop(); !strings.Contains(log, "does not match its digest") || !strings.Contains(log, "cut short") {
		t.Errorf("serve's log does not say why it cut the transfer short:\n%s", log)
	}
}

// terraform init and tofu init install through `tfmirror serve` from a
// bucket (versitygw) tfmirror synced into, read with credentials (the
// bucket is not public); a zip swapped behind the bucket's documents is cut
// short, and both clients fail.
func TestServeABucketToTheClients(t *testing.T) {
	clients := theClients(t, "installing through tfmirror serve of a bucket")
	seeds, big := servedSeeds(t)
	w := newS3World(t)
	w.must(t, "sync", sourceMirror(t, seeds), w.place("tf"))
	url, cert, stop := startServeWith(t, append(cleanEnv(t), w.srv.Env()...), append([]string{w.place("tf")}, w.srv.Args()...)...)
	caPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	installThroughServe(t, clients, url, caPEM, seeds)

	swapped := bigProviderZip(t, "example.com/acme/alpha", "1.0.0", big.Package.Platform.String()).Zip
	key := "tf/example.com/acme/alpha/" + big.Package.Filename()
	if _, err := w.srv.Client().PutObject(context.Background(), &s3api.PutObjectInput{Bucket: &w.bucket, Key: &key, Body: bytes.NewReader(swapped)}); err != nil {
		t.Fatal(err)
	}
	refusedThroughServe(t, clients, url, caPEM)
	if log := stop(); !strings.Contains(log, "mismatch against mirror index") || !strings.Contains(log, "cut short") {
		t.Errorf("serve's log does not say why it cut the transfer short:\n%s", log)
	}
}
