package oci_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/tfmirror/tfmirror/backends/oci"
	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

const indexAccept = ocispec.MediaTypeImageIndex

type rawDoc struct {
	status      int
	contentType string
	digest      string
	body        []byte
}

// fetchRaw GETs a manifest from the registry with nothing of tfmirror or
// oras in between, as OpenTofu's client would see it.
func fetchRaw(t *testing.T, reg *ocitest.Registry, repo, ref, accept string) rawDoc {
	t.Helper()
	return rawGet(t, reg, http.MethodGet, "/v2/"+repo+"/manifests/"+ref, accept)
}

func rawGet(t *testing.T, reg *ocitest.Registry, method, path, accept string) rawDoc {
	t.Helper()
	req, err := http.NewRequest(method, reg.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := reg.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawDoc{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), digest: resp.Header.Get("Docker-Content-Digest"), body: b}
}

// tofuRules are the checks OpenTofu makes when it installs from an
// oci_mirror (formats.md §5.2 and §5.3, from oci_registry_mirror_source.go
// and package_location_oci_blob_archive.go).
var tofuRules = []struct{ id, rule string }{
	{"tags", "the tag list holds the version's tag, with + written as _"},
	{"resolve", "the tag resolves (HEAD) to the OCI image index media type"},
	{"index-bytes", "the index is at most 4 MiB and its bytes match the digest the tag resolves to"},
	{"index-mediaType", `the index JSON has "mediaType": "application/vnd.oci.image.index.v1+json"`},
	{"index-artifactType", `the index JSON has "artifactType": "application/vnd.opentofu.provider"`},
	{"entry-mediaType", "every provider-target entry has mediaType application/vnd.oci.image.manifest.v1+json"},
	{"entry-platform", "every provider-target entry has a platform with os and architecture, and no os.version"},
	{"entry-match", "exactly one provider-target entry per platform, os/architecture equal to the Go names"},
	{"manifest-bytes", "each image manifest is at most 4 MiB and matches its entry's digest and size"},
	{"manifest-mediaType", `each image manifest JSON has "mediaType": "application/vnd.oci.image.manifest.v1+json"`},
	{"manifest-artifactType", `each image manifest JSON has "artifactType" equal to its entry's, application/vnd.opentofu.provider-target`},
	{"layer-zip", "each image manifest has exactly one layer with mediaType archive/zip"},
	{"layer-sha256", "the zip layer's digest is a valid sha256 digest"},
	{"layer-platform", "a platform on the zip layer, if any, matches the entry's"},
	{"blob", "the blob's bytes have the layer's size and sha256 digest"},
	{"zh", "the layer digest is the zip's zh: hash (sha256 of the pushed zip)"},
}

// checkTofuLayout applies every rule to repo's tag for version, expecting
// the platforms in zips (platform -> zip bytes). It returns the failures by
// rule id.
func checkTofuLayout(t *testing.T, reg *ocitest.Registry, repo, version string, zips map[string][]byte) map[string][]string {
	t.Helper()
	fails := map[string][]string{}
	fail := func(id, format string, args ...any) { fails[id] = append(fails[id], fmt.Sprintf(format, args...)) }
	tag := strings.ReplaceAll(version, "+", "_")

	tl := rawGet(t, reg, http.MethodGet, "/v2/"+repo+"/tags/list", "")
	var tags struct{ Tags []string }
	if err := json.Unmarshal(tl.body, &tags); err != nil {
		t.Fatalf("decoding tl.body: %v", err)
	}
	found := false
	for _, tg := range tags.Tags {
		found = found || tg == tag
	}
	if !found {
		fail("tags", "tag %q not in %v", tag, tags.Tags)
	}

	head := rawGet(t, reg, http.MethodHead, "/v2/"+repo+"/manifests/"+tag,
		strings.Join([]string{ocispec.MediaTypeImageIndex, ocispec.MediaTypeImageManifest, dockerList, dockerManifest}, ", "))
	if head.status != http.StatusOK || head.contentType != ocispec.MediaTypeImageIndex {
		fail("resolve", "HEAD %s: %d %q", tag, head.status, head.contentType)
	}
	idxDoc := fetchRaw(t, reg, repo, tag, indexAccept)
	if len(idxDoc.body) > 4<<20 || digest.FromBytes(idxDoc.body).String() != head.digest {
		fail("index-bytes", "index %d bytes, digest %s, tag resolves to %s", len(idxDoc.body), digest.FromBytes(idxDoc.body), head.digest)
	}
	var rawIdx map[string]json.RawMessage
	if err := json.Unmarshal(idxDoc.body, &rawIdx); err != nil {
		fail("index-mediaType", "not JSON: %v", err)
		return fails
	}
	if s := jsonString(rawIdx["mediaType"]); s != ocispec.MediaTypeImageIndex {
		fail("index-mediaType", "mediaType %q", s)
	}
	if s := jsonString(rawIdx["artifactType"]); s != oci.ArtifactTypeProvider {
		fail("index-artifactType", "artifactType %q", s)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(idxDoc.body, &idx); err != nil {
		t.Fatalf("decoding idxDoc.body: %v", err)
	}

	seen := map[string]int{}
	for _, e := range idx.Manifests {
		if e.ArtifactType != oci.ArtifactTypeTarget {
			continue
		}
		if e.MediaType != ocispec.MediaTypeImageManifest {
			fail("entry-mediaType", "entry %s: %q", e.Digest, e.MediaType)
		}
		if e.Platform == nil || e.Platform.OS == "" || e.Platform.Architecture == "" || e.Platform.OSVersion != "" {
			fail("entry-platform", "entry %s: platform %+v", e.Digest, e.Platform)
			continue
		}
		plat := e.Platform.OS + "_" + e.Platform.Architecture
		seen[plat]++
		zipBytes, want := zips[plat]
		if !want {
			fail("entry-match", "unexpected platform %s", plat)
			continue
		}

		md := fetchRaw(t, reg, repo, e.Digest.String(), ocispec.MediaTypeImageManifest)
		if int64(len(md.body)) != e.Size || digest.FromBytes(md.body) != e.Digest || len(md.body) > 4<<20 {
			fail("manifest-bytes", "%s: %d bytes, digest %s; entry says %d, %s", plat, len(md.body), digest.FromBytes(md.body), e.Size, e.Digest)
		}
		var rawMan map[string]json.RawMessage
		if err := json.Unmarshal(md.body, &rawMan); err != nil {
			t.Fatalf("decoding md.body: %v", err)
		}
		if s := jsonString(rawMan["mediaType"]); s != ocispec.MediaTypeImageManifest {
			fail("manifest-mediaType", "%s: %q", plat, s)
		}
		if s := jsonString(rawMan["artifactType"]); s != e.ArtifactType || s != oci.ArtifactTypeTarget {
			fail("manifest-artifactType", "%s: %q, entry says %q", plat, s, e.ArtifactType)
		}
		var man ocispec.Manifest
		if err := json.Unmarshal(md.body, &man); err != nil {
			t.Fatalf("decoding md.body: %v", err)
		}
		var zipsIn []ocispec.Descriptor
		for _, l := range man.Layers {
			if l.MediaType == oci.MediaTypeZip {
				zipsIn = append(zipsIn, l)
			}
		}
		if len(zipsIn) != 1 {
			fail("layer-zip", "%s: %d archive/zip layers", plat, len(zipsIn))
			continue
		}
		l := zipsIn[0]
		if l.Digest.Validate() != nil || l.Digest.Algorithm() != digest.SHA256 {
			fail("layer-sha256", "%s: digest %q", plat, l.Digest)
			continue
		}
		if l.Platform != nil && (l.Platform.OS != e.Platform.OS || l.Platform.Architecture != e.Platform.Architecture) {
			fail("layer-platform", "%s: layer platform %+v", plat, l.Platform)
		}
		blob := rawGet(t, reg, http.MethodGet, "/v2/"+repo+"/blobs/"+l.Digest.String(), "")
		sum := sha256.Sum256(blob.body)
		if int64(len(blob.body)) != l.Size || "sha256:"+hex.EncodeToString(sum[:]) != l.Digest.String() {
			fail("blob", "%s: %d bytes sha256:%x; layer says %d %s", plat, len(blob.body), sum, l.Size, l.Digest)
		}
		zsum := sha256.Sum256(zipBytes)
		if "zh:"+hex.EncodeToString(zsum[:]) != "zh:"+l.Digest.Encoded() || !bytes.Equal(blob.body, zipBytes) {
			fail("zh", "%s: zip zh:%x, layer %s", plat, zsum, l.Digest)
		}
	}
	for plat := range zips {
		if seen[plat] != 1 {
			fail("entry-match", "platform %s listed %d times", plat, seen[plat])
		}
	}
	return fails
}

func jsonString(raw json.RawMessage) string {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func TestManifestsPassOpenTofuChecks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	m := openTest(t, reg, "/tofu/${namespace}/${type}")
	zips := map[string][]byte{}
	for _, plat := range []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"} {
		pkg := mustPkg(t, "registry.opentofu.org/acme/alpha", "1.4.0-rc.1+build.2", plat)
		zips[plat] = providerZip(t, pkg, "")
		mustPut(ctx, t, m, pkg, zips[plat])
	}
	if err := m.Flush(ctx, mustProvider(t, "registry.opentofu.org/acme/alpha")); err != nil {
		t.Fatal(err)
	}
	fails := checkTofuLayout(t, reg, "tofu/acme/alpha", "1.4.0-rc.1+build.2", zips)
	for _, r := range tofuRules {
		if f := fails[r.id]; len(f) > 0 {
			t.Errorf("%s (%s): %v", r.id, r.rule, f)
		} else {
			t.Logf("ok  %-22s %s", r.id, r.rule)
		}
	}
	// The config is the empty JSON object, as OpenTofu's fixtures have it.
	md := fetchRaw(t, reg, "tofu/acme/alpha", "1.4.0-rc.1_build.2", indexAccept)
	var idx ocispec.Index
	if err := json.Unmarshal(md.body, &idx); err != nil {
		t.Fatalf("decoding md.body: %v", err)
	}
	man := fetchRaw(t, reg, "tofu/acme/alpha", idx.Manifests[0].Digest.String(), ocispec.MediaTypeImageManifest)
	if !strings.Contains(string(man.body), `"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2`) {
		t.Errorf("config descriptor: %s", man.body)
	}
}

// The checker itself must catch a broken layout, or its passing above means
// nothing.
func TestOpenTofuChecksCatchBrokenLayout(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	reg := ocitest.New(t)
	repo := "broken/acme/alpha"
	z := []byte("PK-not-really-a-zip")
	layer := pushRawBlob(ctx, t, reg, repo, z)
	cfg := pushRawConfig(ctx, t, reg, repo)
	// An image manifest without artifactType and with two zip layers.
	man := pushRawManifest(ctx, t, reg, repo, ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfg, Layers: []ocispec.Descriptor{layer, layer},
	}, "")
	man.ArtifactType = oci.ArtifactTypeTarget
	man.Platform = &ocispec.Platform{OS: "linux", Architecture: "amd64"}
	// An index without artifactType.
	pushRawManifest(ctx, t, reg, repo, ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{man},
	}, "1.0.0")
	fails := checkTofuLayout(t, reg, repo, "1.0.0", map[string][]byte{"linux_amd64": z, "darwin_amd64": z})
	for _, id := range []string{"index-artifactType", "manifest-artifactType", "layer-zip", "entry-match"} {
		if len(fails[id]) == 0 {
			t.Errorf("rule %s did not catch the broken layout; failures: %v", id, fails)
		}
	}
	var ids []string
	for id := range fails {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	t.Logf("caught: %v", ids)
}

// rawRepo is an oras client for pushing content tfmirror would never write.
func rawRepo(t *testing.T, reg *ocitest.Registry, name string) *remote.Repository {
	t.Helper()
	r, err := remote.NewRepository(reg.Host() + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	r.PlainHTTP = reg.PlainHTTP
	r.Client = &auth.Client{Client: reg.Client()}
	return r
}

func pushRawBlob(ctx context.Context, t *testing.T, reg *ocitest.Registry, repo string, data []byte) ocispec.Descriptor {
	t.Helper()
	d := content.NewDescriptorFromBytes(oci.MediaTypeZip, data)
	if err := rawRepo(t, reg, repo).Push(ctx, d, bytes.NewReader(data)); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	return d
}

func pushRawConfig(ctx context.Context, t *testing.T, reg *ocitest.Registry, repo string) ocispec.Descriptor {
	t.Helper()
	d := ocispec.DescriptorEmptyJSON
	r := rawRepo(t, reg, repo)
	if ok, _ := r.Exists(ctx, d); !ok {
		if err := r.Push(ctx, d, bytes.NewReader(d.Data)); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// pushRawManifest pushes doc (marshalled as is) with the media type its
// "mediaType" field names, tagged when tag is set.
func pushRawManifest(ctx context.Context, t *testing.T, reg *ocitest.Registry, repo string, doc any, tag string) ocispec.Descriptor {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var head struct{ MediaType string }
	if err := json.Unmarshal(b, &head); err != nil {
		t.Fatalf("decoding b: %v", err)
	}
	return pushRawBytes(ctx, t, reg, repo, head.MediaType, b, tag)
}

func pushRawBytes(ctx context.Context, t *testing.T, reg *ocitest.Registry, repo, mediaType string, b []byte, tag string) ocispec.Descriptor {
	t.Helper()
	d := content.NewDescriptorFromBytes(mediaType, b)
	r := rawRepo(t, reg, repo)
	if tag != "" {
		err := r.PushReference(ctx, d, bytes.NewReader(b), tag)
		if err != nil {
			t.Fatal(err)
		}
	} else if err := r.Manifests().Push(ctx, d, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	return d
}

// Docker's media types, which OpenTofu does not accept.
const (
	dockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	dockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
)
