package oci

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
)

// The oci_mirror layout (formats.md §5): a tag per version names an image
// index; each of its entries is an image manifest for one platform whose
// single archive/zip layer is the release zip.
const (
	// ArtifactTypeProvider is the index's artifactType.
	ArtifactTypeProvider = "application/vnd.opentofu.provider"
	// ArtifactTypeTarget is each platform manifest's artifactType.
	ArtifactTypeTarget = "application/vnd.opentofu.provider-target"
	// ArtifactTypeModule is what OpenTofu module packages use; named in
	// errors because the two are easily confused.
	ArtifactTypeModule = "application/vnd.opentofu.modulepkg"
	// MediaTypeZip is the media type of the layer holding the zip.
	MediaTypeZip = "archive/zip"

	mediaTypeDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"

	// maxManifestSize is the largest manifest read. OpenTofu refuses
	// manifests above 4 MiB (the OCI distribution spec's recommended limit)
	// before fetching them; tfmirror refuses the same.
	maxManifestSize = 4 << 20
)

// checkIndexDescriptor applies OpenTofu's checks to what a version tag
// resolves to, before anything is fetched.
func checkIndexDescriptor(desc ocispec.Descriptor) error {
	switch desc.ArtifactType {
	case "", ArtifactTypeProvider:
	case ArtifactTypeTarget:
		return notProvider("the tag names a single platform's image manifest; OpenTofu needs an image index (artifactType %s) listing every platform", ArtifactTypeProvider)
	case ArtifactTypeModule:
		return notProvider("the tag names an OpenTofu module package, not a provider")
	default:
		return notProvider("unsupported artifactType %q (want %s)", desc.ArtifactType, ArtifactTypeProvider)
	}
	switch desc.MediaType {
	case ocispec.MediaTypeImageIndex:
	case ocispec.MediaTypeImageManifest:
		return notProvider("the tag names an image manifest; OpenTofu needs an image index (%s) listing every platform", ocispec.MediaTypeImageIndex)
	case mediaTypeDockerList:
		return notProvider("the tag names a Docker manifest list; OpenTofu needs an OCI image index (%s) with artifactType %s", ocispec.MediaTypeImageIndex, ArtifactTypeProvider)
	case mediaTypeDockerManifest:
		return notProvider("the tag names a Docker image manifest (a container image?); OpenTofu needs an OCI image index with artifactType %s", ArtifactTypeProvider)
	case ocispec.MediaTypeDescriptor:
		return notProvider("the tag names a bare descriptor; OpenTofu needs an image index")
	default:
		return notProvider("unsupported media type %q (want %s)", desc.MediaType, ocispec.MediaTypeImageIndex)
	}
	return checkManifestSize(desc)
}

func checkManifestSize(desc ocispec.Descriptor) error {
	if desc.Size < 0 {
		return notProvider("manifest %s has a negative size", desc.Digest)
	}
	if desc.Size > maxManifestSize {
		return notProvider("manifest %s is %d bytes, more than the 4 MiB OpenTofu accepts", desc.Digest, desc.Size)
	}
	return nil
}

// parseIndex decodes a provider version's index and checks that it declares
// itself: OpenTofu requires "mediaType" and "artifactType" in the JSON.
func parseIndex(b []byte) (*ocispec.Index, error) {
	var idx ocispec.Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, notProvider("invalid index JSON: %v", err)
	}
	switch idx.MediaType {
	case ocispec.MediaTypeImageIndex:
	case ocispec.MediaTypeImageManifest:
		return nil, notProvider("found an image manifest where an image index is needed")
	case "":
		return nil, notProvider(`the index has no "mediaType" field; OpenTofu requires %q`, ocispec.MediaTypeImageIndex)
	default:
		return nil, notProvider("the index has mediaType %q, want %q", idx.MediaType, ocispec.MediaTypeImageIndex)
	}
	switch idx.ArtifactType {
	case ArtifactTypeProvider:
	case "":
		return nil, notProvider(`the index has no "artifactType"; OpenTofu requires %q`, ArtifactTypeProvider)
	default:
		return nil, notProvider("the index has artifactType %q, want %q", idx.ArtifactType, ArtifactTypeProvider)
	}
	return &idx, nil
}

// target is one platform's entry in a provider index.
type target struct {
	Platform backends.Platform
	Desc     ocispec.Descriptor
}

// providerTargets picks the platform entries of an index the way OpenTofu's
// selectOCIImageManifest does for each platform. Entries with other
// artifactTypes are ignored; an entry of the provider-target type without an
// image manifest media type or without a platform breaks the whole version
// (OpenTofu stops at it whatever platform it wants), so that is an error.
// Platforms listed twice are ambiguous and reported in skipped.
func providerTargets(idx *ocispec.Index) (targets []target, skipped []string, err error) {
	byPlat := map[backends.Platform][]ocispec.Descriptor{}
	otherType := ""
	for _, d := range idx.Manifests {
		if d.ArtifactType != ArtifactTypeTarget {
			if d.ArtifactType != "" {
				otherType = d.ArtifactType
			}
			continue
		}
		if d.MediaType != ocispec.MediaTypeImageManifest {
			return nil, nil, notProvider("index entry %s has media type %q; provider-target entries must be image manifests (%s)", d.Digest, d.MediaType, ocispec.MediaTypeImageManifest)
		}
		if d.Platform == nil {
			return nil, nil, notProvider("index entry %s has no platform; OpenTofu requires os and architecture on every provider-target entry", d.Digest)
		}
		if d.Platform.OSVersion != "" {
			// OpenTofu skips these (reserved for finer platform matching).
			skipped = append(skipped, fmt.Sprintf("index entry %s is ignored: it sets os.version %q, which OpenTofu skips", d.Digest, d.Platform.OSVersion))
			continue
		}
		plat, perr := backends.ParsePlatform(d.Platform.OS + "_" + d.Platform.Architecture)
		if perr != nil {
			skipped = append(skipped, fmt.Sprintf("index entry %s is ignored: %v", d.Digest, perr))
			continue
		}
		byPlat[plat] = append(byPlat[plat], d)
	}
	for plat, ds := range byPlat {
		if len(ds) > 1 {
			skipped = append(skipped, fmt.Sprintf("%s: the index lists %d manifests for this platform; OpenTofu refuses ambiguous entries", plat, len(ds)))
			continue
		}
		targets = append(targets, target{Platform: plat, Desc: ds[0]})
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].Platform.String() < targets[j].Platform.String() })
	sort.Strings(skipped)
	if len(byPlat) == 0 && len(skipped) == 0 {
		switch {
		case otherType != "":
			return nil, nil, notProvider("the index lists no %s entries, only %q", ArtifactTypeTarget, otherType)
		case len(idx.Manifests) > 0:
			return nil, nil, notProvider("the index entries have no artifactType; is this a container image rather than an OpenTofu provider?")
		default:
			return nil, nil, notProvider("the index lists no platforms")
		}
	}
	return targets, skipped, nil
}

// parseImageManifest decodes one platform's manifest and finds its zip
// layer, with OpenTofu's checks.
func parseImageManifest(b []byte, plat backends.Platform) (*ocispec.Manifest, ocispec.Descriptor, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, ocispec.Descriptor{}, notProvider("invalid manifest JSON: %v", err)
	}
	if m.MediaType != ocispec.MediaTypeImageManifest {
		if m.MediaType == ocispec.MediaTypeImageIndex {
			return nil, ocispec.Descriptor{}, notProvider("found an image index where a platform's image manifest is needed")
		}
		return nil, ocispec.Descriptor{}, notProvider("the manifest has mediaType %q, want %q", m.MediaType, ocispec.MediaTypeImageManifest)
	}
	if m.ArtifactType != ArtifactTypeTarget {
		return nil, ocispec.Descriptor{}, notProvider("the manifest has artifactType %q, want %q", m.ArtifactType, ArtifactTypeTarget)
	}
	layer, err := zipLayer(m.Layers, plat)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	return &m, layer, nil
}

// zipLayer returns the manifest's single archive/zip layer. Layers of other
// media types are ignored, as OpenTofu ignores them.
func zipLayer(layers []ocispec.Descriptor, plat backends.Platform) (ocispec.Descriptor, error) {
	var found []ocispec.Descriptor
	for _, l := range layers {
		if l.MediaType == MediaTypeZip {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		if len(layers) > 0 {
			return ocispec.Descriptor{}, notProvider("the manifest has no %s layer, only other formats (made for another OpenTofu version?)", MediaTypeZip)
		}
		return ocispec.Descriptor{}, notProvider("the manifest has no %s layer", MediaTypeZip)
	case 1:
	default:
		return ocispec.Descriptor{}, notProvider("the manifest has %d %s layers; OpenTofu refuses ambiguous packages", len(found), MediaTypeZip)
	}
	l := found[0]
	if err := l.Digest.Validate(); err != nil {
		return ocispec.Descriptor{}, notProvider("the zip layer's digest %q is invalid: %v", l.Digest, err)
	}
	if l.Digest.Algorithm() != digest.SHA256 {
		return ocispec.Descriptor{}, notProvider("the zip layer's digest uses %s; OpenTofu needs sha256 (it is the zh: hash)", l.Digest.Algorithm())
	}
	if l.Size < 0 {
		return ocispec.Descriptor{}, notProvider("the zip layer has a negative size")
	}
	if l.Platform != nil && (l.Platform.OS != plat.OS || l.Platform.Architecture != plat.Arch) {
		return ocispec.Descriptor{}, notProvider("the zip layer says it is for %s_%s, but the index lists it for %s", l.Platform.OS, l.Platform.Architecture, plat)
	}
	return l, nil
}

// zipHash is the zh: hash an OCI layer digest stands for.
func zipHash(d digest.Digest) (hashing.Hash, error) {
	if err := d.Validate(); err != nil {
		return "", err
	}
	if d.Algorithm() != digest.SHA256 {
		return "", fmt.Errorf("digest %s: not sha256", d)
	}
	return hashing.ZipHashFromHex(d.Encoded())
}

func notProvider(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotProvider, fmt.Sprintf(format, args...))
}
