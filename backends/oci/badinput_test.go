package oci_test

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
	"github.com/tfmirror/tfmirror/hashing"
	tfsync "github.com/tfmirror/tfmirror/sync"
)

// badLayout pushes, with oras directly, content tfmirror would never write,
// next to one good version, into the repository of example.com/acme/alpha.
type badLayout struct {
	t    *testing.T
	ctx  context.Context
	reg  *ocitest.Registry
	repo string
	cfg  ocispec.Descriptor
}

func (b *badLayout) zipLayer(plat string) ocispec.Descriptor {
	pkg := mustPkg(b.t, "example.com/acme/alpha", "9.9.9", plat)
	return pushRawBlob(b.ctx, b.t, b.reg, b.repo, providerZip(b.t, pkg, "raw"))
}

func (b *badLayout) manifest(layers ...ocispec.Descriptor) ocispec.Descriptor {
	return pushRawManifest(b.ctx, b.t, b.reg, b.repo, ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: oci.ArtifactTypeTarget, Config: b.cfg, Layers: layers,
	}, "")
}

func entry(d ocispec.Descriptor, os, arch string) ocispec.Descriptor {
	d.ArtifactType = oci.ArtifactTypeTarget
	d.Platform = &ocispec.Platform{OS: os, Architecture: arch}
	return d
}

func (b *badLayout) index(tag, artifactType string, entries ...ocispec.Descriptor) {
	pushRawManifest(b.ctx, b.t, b.reg, b.repo, ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: artifactType, Manifests: entries,
	}, tag)
}

func TestBadContentIsSkippedWithClearErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, testTemplate)
	p := mustProvider(t, "example.com/acme/alpha")
	good := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	mustPut(ctx, t, m, good, providerZip(t, good, ""))
	if err := m.Flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	b := &badLayout{t: t, ctx: ctx, reg: reg, repo: "providers/example.com/acme/alpha"}
	b.cfg = pushRawConfig(ctx, t, reg, b.repo)
	lin := b.zipLayer("linux_amd64")
	mac := b.zipLayer("darwin_amd64")

	// A tag that is not a version, pointing at the good index: ignored.
	goodIdx := fetchRaw(t, reg, b.repo, "1.0.0", indexAccept)
	pushRawBytes(ctx, t, reg, b.repo, ocispec.MediaTypeImageIndex, goodIdx.body, "latest")
	// 2.0.0: an index without artifactType.
	b.index("2.0.0", "", entry(b.manifest(lin), "linux", "amd64"))
	// 3.0.0: a Docker manifest list.
	pushRawBytes(ctx, t, reg, b.repo, dockerList,
		[]byte(`{"schemaVersion":2,"mediaType":"`+dockerList+`","manifests":[]}`), "3.0.0")
	// 4.0.0: an image manifest where the index belongs.
	single := b.manifest(lin)
	pushRawBytes(ctx, t, reg, b.repo, ocispec.MediaTypeImageManifest, fetchRaw(t, reg, b.repo, single.Digest.String(), ocispec.MediaTypeImageManifest).body, "4.0.0")
	// 5.0.0: linux_amd64 has two zip layers; darwin_amd64 is fine.
	b.index("5.0.0", oci.ArtifactTypeProvider, entry(b.manifest(lin, mac), "linux", "amd64"), entry(b.manifest(mac), "darwin", "amd64"))
	// 6.0.0: the layer claims fewer bytes than the blob has.
	short := lin
	short.Size--
	b.index("6.0.0", oci.ArtifactTypeProvider, entry(b.manifest(short), "linux", "amd64"))
	// 7.0.0: a provider-target entry without a platform.
	noPlat := b.manifest(lin)
	noPlat.ArtifactType = oci.ArtifactTypeTarget
	b.index("7.0.0", oci.ArtifactTypeProvider, noPlat)
	// 8.0.0: linux_amd64 listed twice (ambiguous); darwin_amd64 fine.
	b.index("8.0.0", oci.ArtifactTypeProvider, entry(b.manifest(lin), "linux", "amd64"), entry(b.manifest(mac), "linux", "amd64"), entry(b.manifest(mac), "darwin", "amd64"))
	// 9.0.0: a container image's index (entries without artifactType).
	plain := b.manifest(lin)
	plain.Platform = &ocispec.Platform{OS: "linux", Architecture: "amd64"}
	b.index("9.0.0", oci.ArtifactTypeProvider, plain)

	r := openTest(t, reg, testTemplate)
	vs, err := r.Versions(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var vstr []string
	for _, v := range vs {
		vstr = append(vstr, v.String())
	}
	if strings.Join(vstr, " ") != "9.0.0 8.0.0 7.0.0 6.0.0 5.0.0 4.0.0 3.0.0 2.0.0 1.0.0" {
		t.Fatalf("versions = %v (latest must be ignored)", vstr)
	}

	as, err := tfsync.Selection{}.Resolve(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, a := range as {
		listed = append(listed, a.Version.String()+" "+a.Platform.String())
	}
	if got := strings.Join(listed, ", "); got != "8.0.0 darwin_amd64, 6.0.0 linux_amd64, 5.0.0 darwin_amd64, 1.0.0 linux_amd64" {
		t.Errorf("listed %q", got)
	}

	warnings := strings.Join(r.Warnings(), "\n")
	for _, want := range []string{
		`2.0.0: skipped: tag "2.0.0": index sha256:`, `not an OpenTofu provider artifact: the index has no "artifactType"`,
		"3.0.0: skipped: tag \"3.0.0\": not an OpenTofu provider artifact: the tag names a Docker manifest list",
		"4.0.0: skipped: tag \"4.0.0\": not an OpenTofu provider artifact: the tag names an image manifest",
		"5.0.0 linux_amd64: skipped: manifest sha256:",
		"2 archive/zip layers",
		"7.0.0: skipped: tag \"7.0.0\": index sha256:",
		"has no platform",
		"linux_amd64: the index lists 2 manifests for this platform",
		"9.0.0: skipped", "is this a container image",
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}

	// The short layer: listed, but opening it refuses the extra byte.
	for _, a := range as {
		if a.Version.String() != "6.0.0" {
			continue
		}
		rc, err := r.Open(ctx, a)
		if err == nil {
			_, err = readAll(t, rc)
		}
		if !errors.Is(err, oci.ErrDigestMismatch) {
			t.Errorf("blob larger than its descriptor: %v, want ErrDigestMismatch", err)
		}
	}

	// verify reports every problem as a finding, and the good archive ok.
	findings, err := tfsync.VerifyPlace(ctx, openTest(t, reg, testTemplate), tfsync.Selection{}, hashing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]int{}
	for _, f := range findings {
		status[string(f.Status)]++
		if f.Status == tfsync.StatusOK && f.Package.Version.String() != "1.0.0" && f.Package.Version.String() != "5.0.0" && f.Package.Version.String() != "8.0.0" {
			t.Errorf("ok for %s", f.Package)
		}
	}
	if status["ok"] != 3 || status["error"] != 1 || status["mismatch"] < 6 {
		t.Errorf("verify statuses %v: %+v", status, findings)
	}
}

func TestNonSHA256LayerRefused(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	b := &badLayout{t: t, ctx: ctx, reg: reg, repo: "providers/example.com/acme/alpha"}
	b.cfg = pushRawConfig(ctx, t, reg, b.repo)
	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "linux_amd64")
	z := providerZip(t, pkg, "")
	sum := sha512.Sum512(z)
	d := ocispec.Descriptor{MediaType: oci.MediaTypeZip, Digest: digest.NewDigestFromEncoded(digest.SHA512, hex.EncodeToString(sum[:])), Size: int64(len(z))}
	if err := rawRepo(t, reg, b.repo).Push(ctx, d, bytes.NewReader(z)); err != nil {
		t.Skipf("the registry does not take sha512 blobs (%v); the parser tests cover this", err)
	}
	b.index("1.0.0", oci.ArtifactTypeProvider, entry(b.manifest(d), "linux", "amd64"))
	r := openTest(t, reg, testTemplate)
	as, err := r.Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 0 {
		t.Fatalf("archives %v, %v; want none", as, err)
	}
	if w := strings.Join(r.Warnings(), "\n"); !strings.Contains(w, "OpenTofu needs sha256") {
		t.Errorf("warnings: %s", w)
	}
}

func TestPushOverForeignTag(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	b := &badLayout{t: t, ctx: ctx, reg: reg, repo: "providers/example.com/acme/alpha"}
	b.cfg = pushRawConfig(ctx, t, reg, b.repo)
	b.index("1.0.0", "", entry(b.manifest(b.zipLayer("linux_amd64")), "linux", "amd64"))

	pkg := mustPkg(t, "example.com/acme/alpha", "1.0.0", "darwin_arm64")
	_, err := put(ctx, t, openTest(t, reg, testTemplate), pkg, providerZip(t, pkg, ""), false)
	if !errors.Is(err, backends.ErrConflict) || !strings.Contains(err.Error(), "holds something else") {
		t.Fatalf("push over a tag that is not a provider index: %v", err)
	}
	w := openTest(t, reg, testTemplate)
	if _, err := put(ctx, t, w, pkg, providerZip(t, pkg, ""), true); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx, pkg.Provider); err != nil {
		t.Fatal(err)
	}
	as, err := openTest(t, reg, testTemplate).Archives(ctx, pkg.Provider, pkg.Version)
	if err != nil || len(as) != 1 || as[0].Platform != pkg.Platform {
		t.Fatalf("after forced push: %v %v", as, err)
	}
}
