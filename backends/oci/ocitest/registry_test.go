package ocitest_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/tfmirror/tfmirror/backends/oci/ocitest"
)

func TestSmoke(t *testing.T) {
	for _, plain := range []bool{false, true} {
		reg := ocitest.NewWithOptions(t, ocitest.Options{PlainHTTP: plain})
		repo, err := remote.NewRepository(reg.Host() + "/acme/alpha")
		if err != nil {
			t.Fatal(err)
		}
		repo.PlainHTTP = plain
		repo.Client = &auth.Client{Client: reg.Client()}
		data := []byte("hello")
		desc := ocispec.Descriptor{MediaType: "archive/zip", Digest: digest.FromBytes(data), Size: int64(len(data))}
		if err := repo.Push(context.Background(), desc, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if reg.BlobUploads() != 1 {
			t.Fatalf("uploads = %d, %v", reg.BlobUploads(), reg.Requests())
		}
		if reg.Count(http.MethodPut, "/blobs/uploads/") != 1 {
			t.Fatalf("%v", reg.Requests())
		}
	}
}
