package ocitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
)

// ClaimLock pushes to repo's writer lock tag (oci.LockTag) a claim as
// another tfmirror process leaves it (one killed while it held the lock,
// or one that takes it over): held by holder, stating lease.
func (r *Registry) ClaimLock(ctx context.Context, t testing.TB, repo, holder string, lease time.Duration) {
	t.Helper()
	rep, err := remote.NewRepository(r.Host() + "/" + repo)
	if err != nil {
		t.Error(err)
		return
	}
	rep.PlainHTTP = r.PlainHTTP
	rep.Client = &http.Client{Transport: &http.Transport{TLSClientConfig: r.TLSConfig()}}
	if err := rep.Push(ctx, ocispec.DescriptorEmptyJSON, bytes.NewReader(ocispec.DescriptorEmptyJSON.Data)); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Error(err)
		return
	}
	man, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: "application/vnd.tfmirror.lock.v1", Config: ocispec.DescriptorEmptyJSON, Layers: []ocispec.Descriptor{ocispec.DescriptorEmptyJSON},
		Annotations: map[string]string{
			"dev.tfmirror.lock.holder":   holder,
			"dev.tfmirror.lock.nonce":    fmt.Sprint(time.Now().UnixNano()),
			"dev.tfmirror.lock.lease-ms": fmt.Sprint(lease.Milliseconds()),
		}})
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, man)
	if err := rep.PushReference(ctx, desc, bytes.NewReader(man), "tfmirror-lock"); err != nil {
		t.Error(err)
	}
}
