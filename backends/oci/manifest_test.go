package oci

import (
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tfmirror/tfmirror/backends"
)

const goodDigest = "sha256:11aa47eb05d2bac7eb9c27fdbf1447152c4f07c814a24db86c24339253db1534"

func TestCheckIndexDescriptor(t *testing.T) {
	tests := []struct {
		desc ocispec.Descriptor
		want string // "" means accepted
	}{
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Size: 500}, ""},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: ArtifactTypeProvider, Size: 500}, ""},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Size: 4 << 20}, ""},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Size: 4<<20 + 1}, "more than the 4 MiB"},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Size: -1}, "negative size"},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: ArtifactTypeTarget}, "single platform's image manifest"},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: ArtifactTypeModule}, "module package"},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, ArtifactType: "application/x-other"}, `unsupported artifactType "application/x-other"`},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest}, "names an image manifest"},
		{ocispec.Descriptor{MediaType: mediaTypeDockerList}, "Docker manifest list"},
		{ocispec.Descriptor{MediaType: mediaTypeDockerManifest}, "container image"},
		{ocispec.Descriptor{MediaType: ocispec.MediaTypeDescriptor}, "bare descriptor"},
		{ocispec.Descriptor{MediaType: ""}, "unsupported media type"},
	}
	for _, tt := range tests {
		err := checkIndexDescriptor(tt.desc)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.desc, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrNotProvider)):
			t.Errorf("%+v: %v, want %q", tt.desc, err, tt.want)
		}
	}
}

func TestParseIndexBadInput(t *testing.T) {
	tests := []struct{ json, want string }{
		{``, "invalid index JSON"},
		{`[]`, "invalid index JSON"},
		{`{"mediaType": 5}`, "invalid index JSON"},
		{`{"manifests": "x"}`, "invalid index JSON"},
		{`{}`, `no "mediaType"`},
		{`{"mediaType":"application/vnd.oci.image.manifest.v1+json"}`, "image manifest where an image index is needed"},
		{`{"mediaType":"application/vnd.docker.distribution.manifest.list.v2+json"}`, "want \"application/vnd.oci.image.index.v1+json\""},
		{`{"mediaType":"application/vnd.oci.image.index.v1+json"}`, `no "artifactType"`},
		{`{"mediaType":"application/vnd.oci.image.index.v1+json","artifactType":"application/vnd.opentofu.provider-target"}`, "want \"application/vnd.opentofu.provider\""},
		{`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","artifactType":"application/vnd.opentofu.provider","manifests":[]}`, ""},
		{"\x00\xff", "invalid index JSON"},
		{`{"mediaType":"application/vnd.oci.image.index.v1+json","artifactType":"application/vnd.opentofu.provider","manifests":[{"size":"big"}]}`, "invalid index JSON"},
	}
	for _, tt := range tests {
		_, err := parseIndex([]byte(tt.json))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.json, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.json, err, tt.want)
		}
	}
}

func target_(os, arch string) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: ArtifactTypeTarget, Digest: goodDigest, Size: 10,
		Platform: &ocispec.Platform{OS: os, Architecture: arch}}
}

func TestProviderTargets(t *testing.T) {
	noPlat := target_("linux", "amd64")
	noPlat.Platform = nil
	wrongType := target_("linux", "amd64")
	wrongType.MediaType = ocispec.MediaTypeImageIndex
	osVersion := target_("windows", "amd64")
	osVersion.Platform.OSVersion = "10.0.17763"
	foreign := target_("linux", "amd64")
	foreign.ArtifactType = "application/vnd.example.sbom"
	untyped := target_("linux", "amd64")
	untyped.ArtifactType = ""

	tests := []struct {
		name    string
		entries []ocispec.Descriptor
		plats   string // the platforms listed
		skipped string // a fragment of the skipped reasons
		err     string
	}{
		{"good", []ocispec.Descriptor{target_("linux", "amd64"), target_("darwin", "arm64")}, "darwin_arm64 linux_amd64", "", ""},
		{"foreign entries ignored", []ocispec.Descriptor{foreign, target_("darwin", "arm64")}, "darwin_arm64", "", ""},
		{"no platform", []ocispec.Descriptor{target_("darwin", "arm64"), noPlat}, "", "", "has no platform"},
		{"not an image manifest", []ocispec.Descriptor{wrongType}, "", "", "must be image manifests"},
		{"os.version skipped", []ocispec.Descriptor{osVersion, target_("linux", "amd64")}, "linux_amd64", "os.version", ""},
		{"ambiguous", []ocispec.Descriptor{target_("linux", "amd64"), target_("linux", "amd64"), target_("darwin", "arm64")}, "darwin_arm64", "lists 2 manifests", ""},
		{"bad platform name", []ocispec.Descriptor{target_("linux_gnu", "amd64"), target_("", "amd64")}, "", "must be two words", ""},
		{"only foreign", []ocispec.Descriptor{foreign}, "", "", "only \"application/vnd.example.sbom\""},
		{"container image", []ocispec.Descriptor{untyped}, "", "", "container image"},
		{"empty", nil, "", "", "no platforms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, skipped, err := providerTargets(&ocispec.Index{Manifests: tt.entries})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrNotProvider) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range ts {
				got = append(got, x.Platform.String())
			}
			if strings.Join(got, " ") != tt.plats {
				t.Errorf("platforms %v, want %s", got, tt.plats)
			}
			if tt.skipped != "" && !strings.Contains(strings.Join(skipped, "\n"), tt.skipped) {
				t.Errorf("skipped %v, want %q", skipped, tt.skipped)
			}
			if tt.skipped == "" && len(skipped) > 0 {
				t.Errorf("skipped %v", skipped)
			}
		})
	}
}

func TestParseImageManifestBadInput(t *testing.T) {
	plat := backends.Platform{OS: "linux", Arch: "amd64"}
	const head = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.opentofu.provider-target",`
	zipL := `{"mediaType":"archive/zip","digest":"` + goodDigest + `","size":5}`
	tests := []struct{ json, want string }{
		{head + `"layers":[` + zipL + `]}`, ""},
		{head + `"layers":[{"mediaType":"application/x-sbom","digest":"` + goodDigest + `","size":1},` + zipL + `]}`, ""},
		{head + `"layers":[]}`, "no archive/zip layer"},
		{head + `"layers":[{"mediaType":"application/x-tar","digest":"` + goodDigest + `","size":1}]}`, "only other formats"},
		{head + `"layers":[` + zipL + `,` + zipL + `]}`, "2 archive/zip layers"},
		{head + `"layers":[{"mediaType":"archive/zip","digest":"sha512:` + strings.Repeat("a", 128) + `","size":5}]}`, "needs sha256"},
		{head + `"layers":[{"mediaType":"archive/zip","digest":"sha256:abc","size":5}]}`, "invalid"},
		{head + `"layers":[{"mediaType":"archive/zip","digest":"md5:abc","size":5}]}`, "invalid"},
		{head + `"layers":[{"mediaType":"archive/zip","digest":"` + goodDigest + `","size":-3}]}`, "negative size"},
		{head + `"layers":[{"mediaType":"archive/zip","digest":"` + goodDigest + `","size":5,"platform":{"os":"darwin","architecture":"amd64"}}]}`, "says it is for darwin_amd64"},
		{`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[` + zipL + `]}`, `artifactType ""`},
		{`{"schemaVersion":2,"artifactType":"application/vnd.opentofu.provider-target","layers":[` + zipL + `]}`, `mediaType ""`},
		{`{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`, "found an image index"},
		{`{"layers": {}}`, "invalid manifest JSON"},
		{`null`, `mediaType ""`},
		{`{`, "invalid manifest JSON"},
	}
	for _, tt := range tests {
		_, layer, err := parseImageManifest([]byte(tt.json), plat)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.json, err)
		case tt.want == "" && layer.Digest != digest.Digest(goodDigest):
			t.Errorf("%s: layer %v", tt.json, layer)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.json, err, tt.want)
		}
	}
}

func TestZipHash(t *testing.T) {
	h, err := zipHash(goodDigest)
	if err != nil || string(h) != "zh:11aa47eb05d2bac7eb9c27fdbf1447152c4f07c814a24db86c24339253db1534" {
		t.Fatalf("%s %v", h, err)
	}
	for _, bad := range []digest.Digest{"", "sha256:", "sha256:XYZ", "sha512:" + digest.Digest(strings.Repeat("a", 128)), "11aa47eb"} {
		if _, err := zipHash(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
