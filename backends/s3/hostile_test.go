package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/backendtest"
	"github.com/tfmirror/tfmirror/backends/s3"
	"github.com/tfmirror/tfmirror/backends/s3/s3test"
)

// outsideTransport adds to every listing the store answers a folder and an
// archive outside the prefix listed, as a misbehaving store (or a proxy in
// front of one) might: a folder with too few levels, another at the root,
// and a release zip of a version the mirror does not hold.
type outsideTransport struct{ next http.RoundTripper }

func (o outsideTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || r.URL.Query().Get("list-type") != "2" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	extra := `<CommonPrefixes><Prefix>outside/</Prefix></CommonPrefixes>` +
		`<CommonPrefixes><Prefix>tf/</Prefix></CommonPrefixes>` +
		`<Contents><Key>outside/terraform-provider-alpha_9.9.9_linux_amd64.zip</Key><Size>7</Size></Contents>` +
		`<Contents><Key>tf/terraform-provider-alpha_9.9.8_linux_amd64.zip</Key><Size>7</Size></Contents>`
	body = bytes.Replace(body, []byte("</ListBucketResult>"), []byte(extra+"</ListBucketResult>"), 1)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// A listing naming folders and objects outside the prefix (or above the
// level listed) is not taken for providers or archives, and does not crash
// the reader: each is ignored with a warning naming it.
func TestListingOutsideThePrefixIgnored(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // the AWS configuration adds a bundle only to its own kind of transport
	srv := s3test.Start(t)
	seeds := backendtest.Seeds(t, []string{"example.com/acme/alpha"}, []string{"1.0.0"}, []string{"linux_amd64"})
	dir := t.TempDir()
	backendtest.WritePacked(t, dir, seeds)
	bucket := srv.Bucket(t)
	srv.Upload(t, bucket, "tf/mirror/", dir)

	opts := srv.Options()
	opts.HTTPClient = &http.Client{Transport: outsideTransport{srv.HTTPClient().Transport}}
	target := bucket + "/tf/mirror"
	st, err := s3.Open(context.Background(), "s3://"+target, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ps, err := st.Providers(ctx)
	if err != nil || len(ps) != 1 || ps[0].String() != "example.com/acme/alpha" {
		t.Fatalf("Providers = %v, %v; want example.com/acme/alpha alone", ps, err)
	}
	vs, err := st.Versions(ctx, ps[0])
	if err != nil || len(vs) != 1 || vs[0].String() != "1.0.0" {
		t.Fatalf("Versions = %v, %v; want 1.0.0 alone", vs, err)
	}
	as, err := st.Archives(ctx, ps[0], vs[0])
	if err != nil || len(as) != 1 {
		t.Fatalf("Archives = %v, %v", as, err)
	}
	warnings := strings.Join(st.Warnings(), "\n")
	t.Logf("warnings:\n%s", warnings)
	for _, want := range []string{"outside/", "outside/terraform-provider-alpha_9.9.9_linux_amd64.zip"} {
		if !strings.Contains(warnings, fmt.Sprintf("s3://%s/%s: ignored", bucket, want)) {
			t.Errorf("no warning names %s", want)
		}
	}
	var _ backends.Reader = st
}
