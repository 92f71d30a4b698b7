package oci

import (
	"encoding/json"
	"errors"
	"sort"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tfmirror/tfmirror/backends"
)

// FuzzIndexDescriptor: what a version tag resolves to passes only when
// OpenTofu would fetch it: an image index of a bounded size.
func FuzzIndexDescriptor(f *testing.F) {
	f.Add(ocispec.MediaTypeImageIndex, ArtifactTypeProvider, int64(500))
	f.Add(ocispec.MediaTypeImageIndex, "", int64(4<<20+1))
	f.Add(ocispec.MediaTypeImageManifest, ArtifactTypeTarget, int64(-1))
	f.Add(mediaTypeDockerList, ArtifactTypeModule, int64(1<<50))
	f.Fuzz(func(t *testing.T, mediaType, artifactType string, size int64) {
		err := checkIndexDescriptor(ocispec.Descriptor{MediaType: mediaType, ArtifactType: artifactType, Size: size})
		if err != nil {
			if !errors.Is(err, ErrNotProvider) {
				t.Fatalf("%v does not wrap ErrNotProvider", err)
			}
			return
		}
		if mediaType != ocispec.MediaTypeImageIndex || size < 0 || size > maxManifestSize ||
			(artifactType != "" && artifactType != ArtifactTypeProvider) {
			t.Fatalf("accepted %q %q %d", mediaType, artifactType, size)
		}
	})
}

func indexSeed(f *testing.F, idx ocispec.Index) {
	b, err := json.Marshal(idx)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

// FuzzIndex: a version's index, whatever it holds, yields platforms that
// are valid, listed once each, in order, each an image manifest of the
// provider-target type for that very platform; or an ErrNotProvider error.
func FuzzIndex(f *testing.F) {
	entry := func(os, arch string) ocispec.Descriptor {
		return ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: ArtifactTypeTarget, Digest: goodDigest, Size: 10,
			Platform: &ocispec.Platform{OS: os, Architecture: arch}}
	}
	noPlat := entry("linux", "amd64")
	noPlat.Platform = nil
	osVersion := entry("windows", "amd64")
	osVersion.Platform.OSVersion = "10.0"
	base := ocispec.Index{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: ArtifactTypeProvider}
	for _, ms := range [][]ocispec.Descriptor{
		{entry("linux", "amd64"), entry("darwin", "arm64")},
		{entry("linux", "amd64"), entry("linux", "amd64"), entry("darwin", "arm64")},
		{entry("../../x", "amd64"), entry("linux", "a/b"), entry("", "")},
		{noPlat}, {osVersion}, {{MediaType: ocispec.MediaTypeImageManifest, Digest: goodDigest}}, {},
	} {
		idx := base
		idx.Manifests = ms
		indexSeed(f, idx)
	}
	for _, s := range []string{``, `{}`, `[]`, `{"mediaType":"application/vnd.oci.image.index.v1+json"}`, `{"manifests":[{"platform":{}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := parseIndex(b)
		if err != nil {
			if !errors.Is(err, ErrNotProvider) {
				t.Fatalf("%v does not wrap ErrNotProvider", err)
			}
			return
		}
		targets, _, err := providerTargets(idx)
		if err != nil {
			if !errors.Is(err, ErrNotProvider) {
				t.Fatalf("%v does not wrap ErrNotProvider", err)
			}
			return
		}
		seen := map[backends.Platform]bool{}
		for _, tg := range targets {
			if p, err := backends.ParsePlatform(tg.Platform.String()); err != nil || p != tg.Platform {
				t.Fatalf("platform %q: %v", tg.Platform, err)
			}
			if seen[tg.Platform] {
				t.Fatalf("platform %s listed twice", tg.Platform)
			}
			seen[tg.Platform] = true
			d := tg.Desc
			if d.MediaType != ocispec.MediaTypeImageManifest || d.ArtifactType != ArtifactTypeTarget || d.Platform == nil ||
				d.Platform.OS != tg.Platform.OS || d.Platform.Architecture != tg.Platform.Arch || d.Platform.OSVersion != "" {
				t.Fatalf("target %s from entry %+v", tg.Platform, d)
			}
			_ = checkManifestSize(d) // what fetching it checks next: must not panic
		}
		if !sort.SliceIsSorted(targets, func(i, j int) bool { return targets[i].Platform.String() < targets[j].Platform.String() }) {
			t.Fatalf("targets not sorted")
		}
	})
}

// FuzzImageManifest: a platform's manifest, whatever it holds, yields one
// archive/zip layer with a valid sha256 digest (the zh: hash) and a size
// that is not negative, or an ErrNotProvider error.
func FuzzImageManifest(f *testing.F) {
	zip := func(d digest.Digest, size int64) ocispec.Descriptor {
		return ocispec.Descriptor{MediaType: MediaTypeZip, Digest: d, Size: size}
	}
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: ArtifactTypeTarget, Config: ocispec.DescriptorEmptyJSON}
	for _, layers := range [][]ocispec.Descriptor{
		{zip(goodDigest, 100)},
		{zip(goodDigest, 100), zip(goodDigest, 100)},
		{zip(digest.Digest("sha512:"+digest.Digest(goodDigest).Encoded()+digest.Digest(goodDigest).Encoded()), 1)},
		{zip("sha256:zz", 1)}, {zip(goodDigest, -5)}, {zip(goodDigest, 1<<50)},
		{{MediaType: "application/x-tar", Digest: goodDigest}}, {},
	} {
		mm := m
		mm.Layers = layers
		b, err := json.Marshal(mm)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"mediaType":"application/vnd.oci.image.index.v1+json"}`))
	f.Add([]byte(`{"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.opentofu.provider-target","layers":[{"mediaType":"archive/zip","digest":"` + goodDigest + `","size":1,"platform":{"os":"darwin","architecture":"arm64"}}]}`))
	plat := backends.Platform{OS: "linux", Arch: "amd64"}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, layer, err := parseImageManifest(b, plat)
		if err != nil {
			if !errors.Is(err, ErrNotProvider) {
				t.Fatalf("%v does not wrap ErrNotProvider", err)
			}
			return
		}
		if layer.MediaType != MediaTypeZip || layer.Size < 0 {
			t.Fatalf("layer %+v", layer)
		}
		if layer.Platform != nil && (layer.Platform.OS != plat.OS || layer.Platform.Architecture != plat.Arch) {
			t.Fatalf("layer for %+v accepted for %s", layer.Platform, plat)
		}
		zh, err := zipHash(layer.Digest)
		if err != nil || zh.Value() != layer.Digest.Encoded() {
			t.Fatalf("accepted digest %q gives no zh: hash: %v", layer.Digest, err)
		}
	})
}
